/* test_net_checkpoint.c - a shard refuses a checkpoint whose checksum is
 * valid but whose fields lie, naming the file and the field, before it
 * copies anything: a key range of the whole model (once a heap overflow in
 * the resume memcpy), a range of another shard, a dim of 0, no workers, a
 * clock near 2^64, a NaN weight. An honest checkpoint still loads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/checkpoint.h"
#include "net/server.h"
#include "testutil.h"

#define DIM 100

static char dir[] = "/tmp/boar-ckpt-forged-XXXXXX";
static uint64_t clocks[2] = {3, 4 | CKPT_FINISHED};
static float w[DIM];

/* Shard 1 of 2 as a shard would save it: keys [50, 100). */
static struct ckpt honest(void)
{
	struct ckpt c = {.shard = 1, .n_shards = 2, .dim = DIM, .lo = 50,
			 .hi = 100, .n_workers = 2, .max_staleness = 1,
			 .clocks = clocks, .w = w};
	return c;
}

/* Saves c (ckpt_save writes whatever it is given, with a valid crc) and
 * expects loading it as shard 1/2 to fail with code and a message naming
 * the field. A shard started on that directory must refuse to start. */
static void expect_refused(const struct ckpt *c, int code, const char *field)
{
	boar_error err;
	struct ckpt got;
	CHECK(ckpt_save(dir, c, &err) == 0, "save: %s", err.message);
	err.message[0] = 0;
	int rc = ckpt_load(dir, 1, 2, &got, &err);
	CHECK(rc == code, "%s: load returned %d, want %d", field, rc, code);
	if (rc == 0)
		ckpt_free(&got);
	CHECK(strstr(err.message, "shard-1-of-2.ckpt") &&
		      strstr(err.message, field),
	      "message '%s' does not name the file and %s", err.message,
	      field);

	struct ps_config cfg = {.shard = 1, .n_shards = 2, .listen_fd = -1,
				.stop_fd = -1, .checkpoint_dir = dir};
	struct ps_server *s = NULL;
	rc = ps_server_create(&cfg, &s, &err);
	CHECK(rc != 0, "%s: a shard started from the forged checkpoint",
	      field);
	ps_server_free(s);
}

int main(void)
{
	if (!mkdtemp(dir))
		TEST_SKIP("mkdtemp failed");
	for (int i = 0; i < DIM; i++)
		w[i] = (float)i / 8;

	struct ckpt c = honest();
	c.lo = 0; /* the whole model: twice the shard's buffer */
	c.hi = DIM;
	expect_refused(&c, BOAR_ECORRUPT, "range [0, 100)");
	c = honest();
	c.lo = 0; /* the other shard's half */
	c.hi = 50;
	expect_refused(&c, BOAR_ECORRUPT, "range");
	c = honest();
	c.dim = 0;
	c.lo = c.hi = 0;
	expect_refused(&c, BOAR_ECORRUPT, "dim");
	c = honest();
	c.n_workers = 0;
	expect_refused(&c, BOAR_ECORRUPT, "n_workers");
	c = honest();
	c.max_staleness = ~0ull >> 1;
	expect_refused(&c, BOAR_ECORRUPT, "max_staleness");
	c = honest();
	uint64_t huge[2] = {~0ull >> 2, 0};
	c.clocks = huge;
	expect_refused(&c, BOAR_ECORRUPT, "clock[0]");
	c = honest();
	w[7] = NAN;
	expect_refused(&c, BOAR_ECORRUPT, "w[7]");
	w[7] = 1;
	c = honest();
	c.shard = 0;
	CHECK(ckpt_save(dir, &c, NULL) == 0, "save as shard 0");
	/* (saved under shard 0's name: shard 1 finds none and starts fresh) */

	/* The honest checkpoint loads, values and clocks intact. */
	c = honest();
	boar_error err;
	struct ckpt got;
	CHECK(ckpt_save(dir, &c, &err) == 0, "save: %s", err.message);
	int rc = ckpt_load(dir, 1, 2, &got, &err);
	CHECK(rc == 0, "honest checkpoint refused: %s", err.message);
	if (rc == 0) {
		CHECK(got.lo == 50 && got.hi == 100 && got.n_workers == 2,
		      "fields changed");
		CHECK(got.w[49] == w[49] && got.clocks[1] == clocks[1],
		      "values changed");
		ckpt_free(&got);
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return TEST_RESULT();
}
