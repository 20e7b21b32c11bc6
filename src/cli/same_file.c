/* same_file.c - an output path that names an input file is refused before
 * anything is read or written: `predict -o data` used to replace the data
 * with its predictions, `train -m data` the training file with a model.
 * Names are not compared (a/../data, a hard or symbolic link, /dev/fd/N):
 * device and inode are.
 */
#include <sys/stat.h>

#include "base/error.h"
#include "same_file.h"
#include "train_args.h"

int cli_refuse_overwrite(const char *opt, const char *out,
			 const char *const *inputs, size_t n, boar_error *err)
{
	struct stat o, in;
	if (!out || stat(out, &o) != 0)
		return 0; /* "-", or not there yet: nothing to overwrite */
	for (size_t i = 0; i < n; i++) {
		if (!inputs[i] || stat(inputs[i], &in) != 0)
			continue;
		if (o.st_dev == in.st_dev && o.st_ino == in.st_ino)
			return boar_fail(err, BOAR_EINVAL,
					 "%s is the input file %s: %s would "
					 "overwrite it",
					 out, inputs[i], opt);
	}
	return 0;
}

int cli_refuse_model_over_inputs(const struct train_args *a, boar_error *err)
{
	const char *inputs[] = {a->train_path, a->test_path, a->weights_path};
	return cli_refuse_overwrite("-m", a->model_out, inputs, 3, err);
}
