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

#include "dataset.h"
#include "gzip_input.h"
#include "tests/fuzz/fuzz.h"

#define PEEK 4096

static int same_array(const void *a, const void *b, uint64_t n, size_t sz)
{
	return n == 0 || (a && b && !memcmp(a, b, n * sz));
}

static void check_same(const struct boar_dataset *a,
		       const struct boar_dataset *b)
{
	int same = a->task == b->task && a->n_rows == b->n_rows &&
		   a->nnz == b->nnz && a->dim == b->dim &&
		   a->n_items == b->n_items && a->hash_bits == b->hash_bits &&
		   a->slot_ids == b->slot_ids &&
		   a->label_kind == b->label_kind &&
		   same_array(a->label, b->label, a->n_rows, 4) &&
		   same_array(a->weight, b->weight,
			      a->weight || b->weight ? a->n_rows : 0, 4);
	if (same && a->task == BOAR_TASK_LINEAR)
		same = same_array(a->row_ptr, b->row_ptr, a->n_rows + 1, 8) &&
		       same_array(a->idx, b->idx, a->nnz, 4) &&
		       same_array(a->val, b->val, a->nnz, 4);
	else if (same)
		same = same_array(a->user, b->user, a->n_rows, 4) &&
		       same_array(a->item, b->item, a->n_rows, 4);
	if (!same)
		fuzz_fail("the dataset loaded from the cache differs from the "
			  "one parsed");
}

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
	check_same(first, second);
	boar_dataset_free(first);
	boar_dataset_free(second);
	return 0;
}
