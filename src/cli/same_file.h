/* same_file.h - refusing to write an output over one of the inputs. */
#ifndef BOAR_CLI_SAME_FILE_H
#define BOAR_CLI_SAME_FILE_H

#include <stddef.h>

#include "boar.h"

/* Whether `out` (written by option `opt`, e.g. "-o") is the same file as
 * one of inputs[0..n) (NULL entries skipped), compared by device and inode,
 * so that another name, a link or ./x for x is caught too. @return 0, or
 * BOAR_EINVAL with "OUT is the input file IN: OPT would overwrite it".
 * An output that does not exist yet is fine. */
int cli_refuse_overwrite(const char *opt, const char *out,
			 const char *const *inputs, size_t n, boar_error *err);

struct train_args;
/* train -m MODEL over FILE, --test or --weights (a warm start may write
 * over its own --init-model: that is continuing it). */
int cli_refuse_model_over_inputs(const struct train_args *a, boar_error *err);

#endif
