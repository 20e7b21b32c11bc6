/* dataset_load.c - loading a dataset from a file (text or its cache):
 * the format dispatch above the parsers, the cache and dataset.c.
 *
 * Loading: options are checked, the source is stat'ed (missing file,
 * directory and device are BOAR_EIO), a valid cache is read if asked for,
 * otherwise the text is read block by block (parse_stream.c), its format
 * detected from the first block unless forced, parsed on threads,
 * classified, and (if asked) written back as a cache. A cache that cannot be
 * written does not fail the load: the data is good, the cache is only a
 * speed-up, and the next load simply tries again. A cache that is corrupt
 * fails the load with BOAR_ECORRUPT (see cache.h for why).
 *
 * hash_bits applies to LIBSVM data only; rating ids are used as given;
 * VW and CSV data are always hashed (18 bits when hash_bits is 0).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cache.h"
#include "format_detect.h"
#include "gzip_input.h"
#include "input_spec.h"
#include "murmur3.h"
#include "dataset.h"
#include "base/options.h"
#include "base/error.h"
#include "parse_chunks.h"
#include "parse_common.h"

/* ------------------------------------------------------- from files */

void boar_load_options_fill(boar_load_options *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->task = BOAR_TASK_AUTO;
	o->format = BOAR_FORMAT_AUTO;
	o->threads = 0;
	o->use_cache = 0;
	o->cache_path = NULL;
	o->hash_bits = 0;
	o->csv_label = NULL;
	o->csv_ignore = NULL;
	o->csv_categorical = NULL;
	o->csv_numeric = NULL;
	o->csv_separator = 0;
	o->csv_header = 0;
	o->csv_log = 0;
}


/* A parse error in a file whose format was guessed: say which format it
 * was read as and how to force another. */
static void boar_note_detected(boar_error *err, int format)
{
	if (!err)
		return;
	size_t n = strlen(err->message);
	snprintf(err->message + n, sizeof err->message - n,
		 " (read as %s, detected from the first lines; force another "
		 "with boar_load_options.format libsvm|vw|csv|ratings)", boar_format_name(format));
}
static int check_load_options(const boar_load_options *o, boar_error *err)
{
	if (o->task < BOAR_TASK_AUTO || o->task > BOAR_TASK_MF)
		return boar_fail(err, BOAR_EINVAL, "unknown task %d", o->task);
	if (o->format < BOAR_FORMAT_AUTO || o->format >= BOAR_FORMAT_CODES)
		return boar_fail(err, BOAR_EINVAL, "unknown format %d",
				 o->format);
	if (o->threads < 0)
		return boar_fail(err, BOAR_EINVAL,
				 "threads must be >= 0 (0 = all cores)");
	if (o->hash_bits < 0 || o->hash_bits > 32)
		return boar_fail(err, BOAR_EINVAL,
				 "hash_bits must be between 0 and 32");
	if (o->task != BOAR_TASK_AUTO && o->format != BOAR_FORMAT_AUTO &&
	    o->task != boar_format_task(o->format))
		return boar_fail(err, BOAR_EINVAL,
				 "task and format disagree: the linear task reads LIBSVM, VW or CSV, matrix factorization reads ratings");
	return 0;
}

/* The hash_bits a format's data ends up with. */
static int data_hash_bits(int format, int hash_bits)
{
	if (!hash_bits && boar_format_hashed(format))
		return BOAR_VW_DEFAULT_HASH_BITS;
	return hash_bits;
}

/* cache.h keys a cache on its source's identity, the task and hash_bits;
 * the CSV options shape the arrays too, so their hash is part of the key:
 * a cache written under other CSV options then reads as stale and is
 * rebuilt. 0 for the other formats. */
static uint64_t csv_options_key(int format, const boar_load_options *o)
{
	if (format == BOAR_FORMAT_VW && (o->vw_ignore || o->vw_keep)) {
		/* dropped namespaces shape the rows too */
		uint32_t h = boar_murmur3_32("vw", 2, 0);
		h = o->vw_ignore ? boar_murmur3_32(o->vw_ignore,
						   strlen(o->vw_ignore), h)
				 : h * 31 + 7;
		h = o->vw_keep ? boar_murmur3_32(o->vw_keep, strlen(o->vw_keep), h)
			       : h * 31 + 7;
		return (uint64_t)h << 1 | 1;
	}
	if (format != BOAR_FORMAT_CSV)
		return 0;
	const char *s[4] = { o->csv_label, o->csv_ignore, o->csv_categorical,
			     o->csv_numeric };
	uint32_t h = boar_murmur3_32("csv", 3, 0);
	for (int k = 0; k < 4; k++)
		h = s[k] ? boar_murmur3_32(s[k], strlen(s[k]), h) : h * 31 + 7;
	int tail[3] = { o->csv_separator, o->csv_header, o->csv_log };
	h = boar_murmur3_32(tail, sizeof tail, h);
	return (uint64_t)h << 1 | 1;
}

int boar_dataset_load(const char *path, const boar_load_options *o,
		      boar_dataset **out, boar_error *err)
{
	boar_load_options def;
	if (boar_load_options_widen(o, &def))
		return boar_fail(err, BOAR_EINVAL, "boar_load_options.size is "
				 "not a size this libboar knows: fill the "
				 "options with boar_load_options_default()");
	o = &def;
	if (!path || !out)
		return boar_fail(err, BOAR_EINVAL,
				 "path and out must not be NULL");
	int ret = check_load_options(o, err);
	if (ret)
		return ret;
	int format = o->format;
	if (!format && o->task == BOAR_TASK_MF)
		format = BOAR_FORMAT_RATINGS;
	/* Options naming CSV columns say what the file is (a separator or
	 * header setting only says how to read one, should it be CSV). */
	if (!format && (o->csv_label || o->csv_ignore || o->csv_categorical ||
			o->csv_numeric || o->csv_log))
		format = BOAR_FORMAT_CSV;
	if (!format && (o->vw_ignore || o->vw_keep))
		format = BOAR_FORMAT_VW;
	int detected = !format;
	int threads = parse_threads(o->threads);

	struct src_id id;
	int regular;
	ret = text_file_stat(path, &id, &regular, err);
	if (ret)
		return ret;

	char *cache_path = NULL;
	int use_cache = o->use_cache && regular;
	if (use_cache && !format) {
		/* which cache fits depends on the format: look at as much
		 * of the text as detection does */
		char *head = malloc(DETECT_WINDOW);
		long n = head ? text_peek(path, head, DETECT_WINDOW) : -1;
		if (n > 0)
			format = boar_detect_format_for(o->task, head,
							(size_t)n);
		else
			use_cache = 0;
		free(head);
	}
	uint64_t key = use_cache ? csv_options_key(format, o) : 0;
	if (use_cache) {
		if (o->cache_path) {
			cache_path = strdup(o->cache_path);
		} else if ((cache_path = malloc(strlen(path) + 11))) {
			sprintf(cache_path, "%s.boarcache", path);
		}
		if (!cache_path)
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		struct cache_want w = {
			.src = id,
			.options_key = key,
			.task = boar_format_task(format),
			.hash_bits = data_hash_bits(format, o->hash_bits),
			.threads = threads,
		};
		ret = boar_cache_load(cache_path, &w, out, err);
		if (ret <= 0) {
			free(cache_path);
			if (ret == 0) { /* the cache keeps arrays, not how ids came */
				(*out)->slot_ids = boar_format_hashed(format);
				(*out)->path = strdup(path); /* NULL: messages do without */
				ret = boar_dataset_note_input(out, format, o, err);
			}
			return ret;
		}
	}

	struct boar_dataset *d = NULL;
	struct src_id read_id;
	int read_regular;
	ret = boar_parse_file(path, o, threads, &format, &read_id,
			      &read_regular, &d, err);
	if (ret == BOAR_EPARSE && detected && format)
		boar_note_detected(err, format);
	if (ret)
		goto out;
	boar_dataset_classify(d);
	d->path = strdup(path); /* NULL when out of memory: messages do without */
	/* The cache records the identity of what was actually read (the
	 * reader checked it did not change while it read), so a file changed
	 * since the stat above is simply seen as stale next time. */
	if (use_cache && read_regular && !d->weight) /* the cache has no weights */
		boar_cache_write(cache_path, d, &read_id, key, threads, NULL);
out:
	free(cache_path);
	if (ret) {
		boar_dataset_free(d);
		return ret;
	}
	*out = d;
	return boar_dataset_note_input(out, format, o, err);
}
