/* fuzz_gzip.c - the whole load path of a data file: gzip or plain, the
 * format detected, parsed, cached and loaded again from the cache.
 *
 * The input is the file as it is on disk; the seeds are gzip files
 * (single and concatenated members, truncated, with a bad crc or length,
 * trailing bytes, highly compressible text) and plain files of every
 * format. boar_dataset_load() reads it with the cache on, so the first
 * load parses and writes the cache and a second one maps it: both must
 * give the same dataset, or fail the same way. text_peek(), the loader's
 * look at the first bytes, runs on it too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"
#include "data/gzip_input.h"
#include "tests/fuzz/fuzz.h"

#define PEEK 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	remove(fuzz_path("input.boarcache")); /* none of an earlier input */
	const char *p = fuzz_write_file("input", data, size);
	char path[512];
	snprintf(path, sizeof path, "%s", p);

	char *head = malloc(PEEK);
	long n = head ? text_peek(path, head, PEEK) : 0;
	if (n > PEEK)
		fuzz_fail("text_peek gave %ld bytes for a buffer of %d", n,
			  PEEK);
	free(head);

	boar_load_options o;
	boar_load_options_default(&o);
	o.threads = 1;
	o.use_cache = 1;
	boar_dataset *first = NULL, *second = NULL;
	boar_error err;
	memset(&err, 0, sizeof err);
	int rc = boar_dataset_load(path, &o, &first, &err);
	if (rc) {
		fuzz_check_error(rc, &err, path);
		return 0;
	}
	fuzz_check_dataset(first);
	rc = boar_dataset_load(path, &o, &second, &err);
	if (rc)
		fuzz_fail("loaded once, then not: %s", err.message);
	fuzz_check_dataset(second);
	fuzz_check_same(first, second, "loading from the cache");
	boar_dataset_free(first);
	boar_dataset_free(second);
	return 0;
}
