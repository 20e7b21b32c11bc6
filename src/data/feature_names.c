/* feature_names.c - reading a file again for the names behind its slots
 * (feature_names.h): block by block, as parse_stream.c reads it, each
 * block parsed on one thread with the sink attached and its dataset
 * dropped, so memory stays at one block whatever the file's size. */
#include <string.h>

#include "base/error.h"
#include "base/options.h"
#include "dataset.h"
#include "feature_names.h"
#include "format_detect.h"
#include "parse_chunks.h"
#include "parse_common.h"

#define NAMES_BLOCK ((size_t)16 << 20)

int boar_feature_names_scan(const char *path, const boar_load_options *o,
			    const struct name_sink *sink, boar_error *err)
{
	boar_load_options opt;
	if (boar_load_options_widen(o, &opt))
		return boar_fail(err, BOAR_EINVAL, "boar_load_options.size is "
				 "not a size this libboar knows");
	struct text_source src;
	int ret = text_source_open(path, 1, &src, err);
	if (ret)
		return ret;
	struct csv_setup *csv = NULL;
	int format = opt.format;
	uint64_t line = 0;
	for (int k = 0;; k++) {
		const char *text;
		size_t len;
		ret = text_source_next(&src, NAMES_BLOCK, line, &text, &len,
				       err);
		if (ret || !len)
			break;
		if (!format)
			format = boar_detect_format_for(opt.task, text, len);
		if (!boar_format_hashed(format)) {
			ret = boar_fail(err, BOAR_EINVAL, "%s: %s data has "
					"feature ids, not names", path,
					boar_format_name(format));
			break;
		}
		uint64_t lines = 0;
		struct parse_input in = {
			.path = path,
			.buf = text,
			.len = len,
			.line_base = line,
			.first_block = k == 0,
			.threads = 1,
			.hash_bits = opt.hash_bits,
			.opt = &opt,
			.csv = &csv,
			.lines = &lines,
			.names = sink,
		};
		struct boar_dataset *part = NULL;
		ret = boar_parse_format(format, &in, &part, err);
		boar_dataset_free(part);
		if (ret)
			break;
		line += lines;
	}
	text_source_close(&src);
	boar_csv_setup_free(csv);
	return ret;
}

/* The public face: a caller's function behind the parsers' sink. A stop
 * asked by the caller comes back from the parser as an error; say it was
 * the caller's. */
struct caller_sink {
	boar_name_fn fn;
	void *ctx;
	int stopped;
};

static int caller_emit(void *ctx, uint32_t slot, const char *name,
		       size_t len)
{
	struct caller_sink *c = ctx;
	if (c->fn(c->ctx, slot, name, len))
		c->stopped = 1;
	return c->stopped;
}

int boar_feature_names(const char *path, const boar_load_options *o,
		       boar_name_fn fn, void *ctx, boar_error *err)
{
	if (!path || !o || !fn)
		return boar_fail(err, BOAR_EINVAL,
				 "path, options and fn must not be NULL");
	struct caller_sink c = { fn, ctx, 0 };
	struct name_sink sink = { caller_emit, &c };
	int ret = boar_feature_names_scan(path, o, &sink, err);
	if (ret && c.stopped)
		return boar_fail(err, BOAR_ECANCELLED,
				 "%s: stopped by the name callback", path);
	return ret;
}
