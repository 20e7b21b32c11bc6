/* common.c - error reporting, model-shaped loading, atomic output files and
 * a clock, shared by the boar commands (see common.h). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "data_args.h"
#include "flag_words.h"

int cli_report(const boar_error *err, int code)
{
	char words[sizeof err->message];
	const char *msg = err && err->message[0]
				  ? cli_flag_words(err->message, words, sizeof words)
				  : boar_strerror(code);
	fflush(stdout);
	fprintf(stderr, "boar: %s\n", msg);
	return CLI_EXIT_RUNTIME;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("boar: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (cmd)
		fprintf(stderr, "\nTry 'boar help %s' for the options.\n", cmd);
	else
		fputs("\nTry 'boar --help'.\n", stderr);
	return CLI_EXIT_USAGE;
}

const char *cli_data_path(const char *arg)
{
	return arg && !strcmp(arg, "-") ? "/dev/stdin" : arg;
}

double cli_started;
char **cli_argv;

double cli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *cli_task_name(int task)
{
	switch (task) {
	case BOAR_TASK_LINEAR:
		return "linear";
	case BOAR_TASK_MF:
		return "mf";
	}
	return "auto";
}

const char *cli_loss_name(int loss)
{
	const boar_loss_desc *l = boar_loss_describe(loss);
	return l ? l->name : "?";
}

const char *const cli_mf_loss_names[] = {
	[BOAR_MF_LOSS_SQUARED] = "squared", [BOAR_MF_LOSS_ABSOLUTE] = "mae", NULL
};

/* ------------------------------------------------ temp files and signals */

/* The one temp file this process is writing, removed if a signal ends it.
 * The CLI is single-threaded around its output, so a plain static is
 * enough; the handler only calls async-signal-safe functions. */
static char guarded[4096];
static volatile sig_atomic_t guard_set;

static void on_signal(int sig)
{
	if (guard_set)
		unlink(guarded);
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_guard_temp(const char *path)
{
	static int installed;
	if (!installed) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
		installed = 1;
	}
	guard_set = 0;
	snprintf(guarded, sizeof guarded, "%s", path);
	guard_set = 1;
}

void cli_forget_temp(void)
{
	guard_set = 0;
}

static int sys_fail(boar_error *err, const char *path, const char *what)
{
	int e = errno;
	if (err) {
		err->code = BOAR_EIO;
		err->line = 0;
		snprintf(err->message, sizeof err->message, "%.300s: %s%s%s", path,
			 what, what[0] ? ": " : "", strerror(e));
	}
	return BOAR_EIO;
}

int cli_out_open(struct cli_out *o, const char *path, boar_error *err)
{
	memset(o, 0, sizeof *o);
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	o->path = path;
	size_t n = strlen(path) + sizeof ".tmp.XXXXXX";
	o->tmp = malloc(n);
	if (!o->tmp)
		return BOAR_ENOMEM;
	snprintf(o->tmp, n, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int rc = sys_fail(err, path, "cannot create");
		free(o->tmp);
		o->tmp = NULL;
		return rc;
	}
	cli_guard_temp(o->tmp);
	/* mkstemp makes the file 0600; give it the mode a plain fopen would. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int rc = sys_fail(err, path, "cannot create");
		close(fd);
		cli_out_abort(o);
		return rc;
	}
	/* Scores are written one short line at a time: a large buffer keeps
	 * that from being a write(2) per few rows. */
	setvbuf(o->f, NULL, _IOFBF, 1 << 20);
	return 0;
}

int cli_out_commit(struct cli_out *o, boar_error *err)
{
	if (!o->path) {
		if (fflush(stdout) || ferror(stdout))
			return sys_fail(err, "standard output", "write failed");
		return 0;
	}
	int bad = fflush(o->f) != 0 || ferror(o->f);
	if (!bad && fsync(fileno(o->f)) != 0 && errno != EINVAL)
		bad = 1;
	int rc = 0;
	if (bad)
		rc = sys_fail(err, o->path, "write failed");
	if (fclose(o->f) != 0 && !rc)
		rc = sys_fail(err, o->path, "write failed");
	o->f = NULL;
	if (!rc && rename(o->tmp, o->path) != 0)
		rc = sys_fail(err, o->path, "cannot rename the finished file");
	if (rc) {
		cli_out_abort(o);
		return rc;
	}
	cli_forget_temp();
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}

void cli_out_abort(struct cli_out *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp) {
		unlink(o->tmp);
		cli_forget_temp();
		free(o->tmp);
		o->tmp = NULL;
	}
}

/* -------------------------------------------------- loading for a model */

int cli_load_for_model(const char *cmd, const char *path,
		       const char *model_path,
		       const boar_model *m, boar_load_options *data,
		       unsigned given, boar_dataset **out, boar_error *err)
{
	char why[400];
	if (cli_data_for_model(m, model_path, data, given, why, sizeof why))
		{
		cli_usage(cmd, "%s", why);
		return CLI_LOAD_USAGE;
	}
	return boar_dataset_load(path, data, out, err);
}

/* ----------------------------------------------------------- text export */

static int copy_to_stdout(const char *path, boar_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return sys_fail(err, path, "cannot reopen");
	char buf[1 << 16];
	size_t n;
	int rc = 0;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		if (fwrite(buf, 1, n, stdout) != n) {
			rc = BOAR_EIO;
			break;
		}
	if (ferror(f))
		rc = BOAR_EIO;
	fclose(f);
	if (fflush(stdout))
		rc = BOAR_EIO;
	if (rc && err) {
		err->code = rc;
		snprintf(err->message, sizeof err->message,
			 "writing the model text to standard output failed");
	}
	return rc;
}

int cli_export_text(const boar_model *m, const char *path, boar_error *err)
{
	if (path && strcmp(path, "-"))
		return boar_model_export_text(m, path, err);

	/* The library writes files atomically (temp + rename), never to a
	 * stream: export to a temp file and copy it out. */
	const char *dir = getenv("TMPDIR");
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s/boar-export.XXXXXX",
		 dir && dir[0] ? dir : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0)
		return sys_fail(err, tmp, "cannot create a temporary file");
	close(fd);
	cli_guard_temp(tmp);
	int rc = boar_model_export_text(m, tmp, err);
	if (!rc)
		rc = copy_to_stdout(tmp, err);
	unlink(tmp);
	cli_forget_temp();
	return rc;
}
