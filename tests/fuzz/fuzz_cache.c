/* fuzz_cache.c - the dataset cache loader (src/data/cache.c).
 *
 * The input is a mode byte (fuzz.h) and then the cache file. The harness
 * asks for exactly the source the header names (size, mtime, task,
 * hash_bits), so that no input is merely "stale" and every one reaches
 * the checks of a cache the loader would use. With FUZZ_FIX_SUMS it first
 * sets the header's file size and both checksums to what the bytes give:
 * a cache that lies with valid checksums must still be refused, or load
 * as a dataset that keeps every promise of dataset.h (issue 14, case 8).
 * Mode bit 1 asks for any task, as a load without --task does.
 *
 * cache.c is included rather than linked so that the harness sees its
 * header layout and checksum function and stays right when they change
 * (the library archive's copy is then not linked in).
 */
#include "../../src/data/cache.c"

#include "tests/fuzz/fuzz.h"

#define MODE_ANY_TASK 2u

static void fix_sums(uint8_t *buf, size_t len)
{
	struct cache_header h;
	memcpy(&h, buf, sizeof h);
	h.file_size = len;
	uint64_t sum = 0;
	for (int k = 0; k < N_ARRAYS; k++) {
		if (h.off[k] > len || h.len[k] > len - h.off[k])
			return; /* the loader refuses it before the sum */
		uint64_t x = boar_checksum(buf + h.off[k], h.len[k], 1);
		sum = boar_hash64(&x, 8, sum);
	}
	h.payload_sum = sum;
	h.header_crc = header_crc(&h);
	memcpy(buf, &h, sizeof h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode;
	uint8_t *buf = fuzz_take_mode(data, size, &mode, &size);
	if (!buf)
		return 0;
	struct cache_header h;
	memset(&h, 0, sizeof h);
	if (size >= sizeof h) {
		if (mode & FUZZ_FIX_SUMS)
			fix_sums(buf, size);
		memcpy(&h, buf, sizeof h);
	}
	const char *path = fuzz_write_file("cache", buf, size);
	free(buf);

	struct cache_want w = {
		.src = { .dev = h.src_dev, .ino = h.src_ino,
			 .size = h.src_size, .mtime_ns = h.src_mtime_ns,
			 .ctime_ns = h.src_ctime_ns },
		.options_key = h.options_key,
		.task = mode & MODE_ANY_TASK ? BOAR_TASK_AUTO : h.task,
		.hash_bits = h.hash_bits,
		.threads = 1,
	};
	struct boar_dataset *d = NULL;
	boar_error err;
	memset(&err, 0, sizeof err);
	int rc = boar_cache_load(path, &w, &d, &err);
	if (rc < 0) {
		fuzz_check_error(rc, &err, path);
	} else if (rc == 0) {
		if (!d)
			fuzz_fail("cache loaded without a dataset");
		fuzz_check_dataset(d);
		boar_dataset_free(d);
	} else if (rc != 1) {
		fuzz_fail("boar_cache_load returned %d", rc);
	}
	return 0;
}
