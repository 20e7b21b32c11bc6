/* dataset_text.c - a dataset from text in memory (boar_dataset_parse_text):
 * what a program that gets rows one at a time (a pipe, a socket) hands
 * the parsers, without a file. One block, one thread: meant for a few
 * rows at a time, such as `boar predict` streaming standard input;
 * dataset_parse_text_threads parses a large block (a worker's part of a
 * file, read_part.c) on several. */
#include <string.h>

#include "dataset.h"
#include "base/error.h"
#include "input_spec.h"
#include "parse_common.h"

int boar_dataset_parse_text(const char *text, size_t len, const char *name,
			    const boar_load_options *o, boar_dataset **out,
			    boar_error *err)
{
	return dataset_parse_text_threads(text, len, name, NULL, o, 1, out,
					  err);
}

int dataset_parse_text_threads(const char *text, size_t len,
			       const char *name, struct line_origin *origin,
			       const boar_load_options *o, int threads,
			       boar_dataset **out, boar_error *err)
{
	boar_load_options def;
	if (!o) {
		boar_load_options_default(&def);
		o = &def;
	}
	if (!text || !out)
		return boar_fail(err, BOAR_EINVAL, "text and out must not be NULL");
	if (!name)
		name = "text";
	int format = o->format;
	if (!format)
		format = o->task == BOAR_TASK_MF
				 ? BOAR_FORMAT_RATINGS
				 : boar_detect_format_for(o->task, text, len);
	struct csv_setup *csv = NULL;
	struct parse_input in = {
		.path = name, .buf = text, .len = len, .origin = origin,
		.first_block = 1,
		.threads = threads > 0 ? threads : 1, .hash_bits = o->hash_bits, .opt = o, .csv = &csv,
	};
	struct boar_dataset *d = NULL;
	int ret;
	ret = boar_parse_format(format, &in, &d, err);
	boar_csv_setup_free(csv);
	if (ret)
		return ret;
	boar_dataset_classify(d);
	*out = d;
	return boar_dataset_note_input(out, format, o, err);
}
