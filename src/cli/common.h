/* common.h - what several boar commands share.
 *
 * Reporting library errors and usage errors the same way everywhere
 * ("boar: <message>", exit 1 or 2), loading a data file the way a model
 * expects it, writing an output file atomically (temp file + rename, removed
 * on failure or on SIGINT/SIGTERM so no partial file is ever left behind),
 * and a monotonic clock.
 */
#ifndef BOAR_CLI_COMMON_H
#define BOAR_CLI_COMMON_H

#include <stdio.h>

#include "boar.h"

/* Prints "boar: <err->message>" (or the code's generic message) on stderr,
 * the library's field names in it replaced by their flags (flag_words.h).
 * @return CLI_EXIT_RUNTIME, for `return cli_report(...)`. */
int cli_report(const boar_error *err, int code);

/* Prints "boar: <reason>" and a hint to `boar help CMD` on stderr.
 * @return CLI_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A data file argument as the library opens it: "-" is standard input. */
const char *cli_data_path(const char *arg);

/* Seconds on a monotonic clock. */
double cli_now(void);
/* cli_now() when main started: a run's report says how long the whole
 * process took to reach it (a cluster worker's time outside its phases). */
extern double cli_started;
/* main's argv (NULL-terminated), for a process that execs itself again
 * (omp_spin.c). */
extern char **cli_argv;

const char *cli_task_name(int task);
const char *cli_loss_name(int loss);
/* --mf-loss's names, indexed by enum boar_mf_loss, NULL-terminated. */
extern const char *const cli_mf_loss_names[];

/* Loads `path` as data for model m (read from model_path): the way m's
 * training data was read, with the data options the user gave (*data,
 * the bits of `given`, see data_args.h) where they agree with it.
 * @return 0, a BOAR_E* code with *err filled, or CLI_LOAD_USAGE when a
 * given option contradicts the model (the message, with a hint to `boar help cmd`,
 * is already printed). */
#define CLI_LOAD_USAGE 1
int cli_load_for_model(const char *cmd, const char *path,
		       const char *model_path,
		       const boar_model *m, boar_load_options *data,
		       unsigned given, boar_dataset **out, boar_error *err);

/* An output file that appears only complete: written to a temp file in the
 * same directory and renamed over `path` by cli_out_commit(). With path
 * NULL (or "-") it is stdout and commit just flushes. */
struct cli_out {
	FILE *f;
	const char *path; /* NULL: stdout */
	char *tmp;        /* temp file name, or NULL */
};

int cli_out_open(struct cli_out *o, const char *path, boar_error *err);
int cli_out_commit(struct cli_out *o, boar_error *err);
/* Closes and removes the temp file; safe after a failed commit. */
void cli_out_abort(struct cli_out *o);

/* The library's text export of m (boar_model_export_text) into path, or
 * onto stdout when path is NULL or "-". */
int cli_export_text(const boar_model *m, const char *path, boar_error *err);

/* A temp file name for the library to write, removed on SIGINT/SIGTERM
 * until cli_forget_temp() is called. */
void cli_guard_temp(const char *path);
void cli_forget_temp(void);

#endif
