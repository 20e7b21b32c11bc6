/* feature_names.c - reading a file again for the names behind its slots
 * (feature_names.h): parse_stream.c's block reading, one thread, with the
 * sink attached and each block's dataset dropped, so memory stays at one
 * block whatever the file's size. */
#include <string.h>

#include "base/error.h"
#include "base/options.h"
#include "dataset.h"
#include "feature_names.h"
#include "parse_common.h"

#define NAMES_BLOCK ((size_t)16 << 20)

int boar_feature_names_scan(const char *path, const boar_load_options *o,
			    const struct name_sink *sink, boar_error *err)
{
	boar_load_options opt;
	if (boar_load_options_widen(o, &opt))
		return boar_fail(err, BOAR_EINVAL, "boar_load_options.size is "
				 "not a size this libboar knows");
	return boar_parse_file_names(path, &opt, NAMES_BLOCK, sink, err);
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
