/* fuzz_checkpoint.c - the parameter server's checkpoint loader
 * (net/checkpoint.c).
 *
 * The input is a mode byte (fuzz.h) and then the checkpoint file, which
 * the harness saves as DIR/shard-I-of-S.ckpt for one of four (I, S): mode
 * bits 2-3 pick it. Mode bit 1 writes I and S into the file's header too,
 * so that the fuzzer need not find them, and FUZZ_FIX_SUMS recomputes the
 * crc32 at the end. A checkpoint that loads must be one the shard can use
 * as it is: its key range exactly the shard's part of the model
 * (ps_shard_range), clocks for every worker, and finite weights (issue
 * 14, case 11).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "net/checkpoint.h"
#include "net/server.h"
#include "tests/fuzz/fuzz.h"

#define MODE_SET_SHARD 2u

static const uint32_t shards[4][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 }, { 2, 3 } };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode;
	uint8_t *buf = fuzz_take_mode(data, size, &mode, &size);
	if (!buf)
		return 0;
	uint32_t shard = shards[(mode >> 2) & 3][0];
	uint32_t n_shards = shards[(mode >> 2) & 3][1];
	if ((mode & MODE_SET_SHARD) && size >= 16) {
		fuzz_put_le32(buf + 8, shard);
		fuzz_put_le32(buf + 12, n_shards);
	}
	if ((mode & FUZZ_FIX_SUMS) && size >= 4)
		fuzz_put_le32(buf + size - 4,
			 (uint32_t)crc32(0, buf, (uInt)(size - 4)));
	char name[64];
	snprintf(name, sizeof name, "shard-%u-of-%u.ckpt", shard, n_shards);
	const char *path = fuzz_write_file(name, buf, size);
	free(buf);

	struct ckpt c;
	memset(&c, 0, sizeof c);
	boar_error err;
	memset(&err, 0, sizeof err);
	int rc = ckpt_load(fuzz_scratch_dir(), shard, n_shards, &c, &err);
	if (rc < 0) {
		fuzz_check_error(rc, &err, path);
		return 0;
	}
	if (rc != 0)
		fuzz_fail("ckpt_load found no checkpoint at %s (rc %d)", path,
			  rc);
	uint64_t lo, hi;
	ps_shard_range(c.dim, shard, n_shards, &lo, &hi);
	if (c.shard != shard || c.n_shards != n_shards || c.lo != lo ||
	    c.hi != hi)
		fuzz_fail("checkpoint of shard %u/%u keys [%llu, %llu) loaded "
			  "for shard %u/%u, whose keys of %llu are [%llu, %llu)",
			  c.shard, c.n_shards, (unsigned long long)c.lo,
			  (unsigned long long)c.hi, shard, n_shards,
			  (unsigned long long)c.dim, (unsigned long long)lo,
			  (unsigned long long)hi);
	if (c.n_workers && !c.clocks)
		fuzz_fail("%u workers without clocks", c.n_workers);
	for (uint64_t k = 0; k < hi - lo; k++)
		if (!isfinite(c.w[k]))
			fuzz_fail("weight of key %llu is %g",
				  (unsigned long long)(lo + k), (double)c.w[k]);
	ckpt_free(&c);
	return 0;
}
