/* cluster_mf_strata.c - an epoch of matrix factorization in the cluster
 * as DSGD strata (train_cluster_mf.h), where the transport has a
 * barrier (boar_ps_transport.wait_clock).
 *
 * Users and items are cut into W blocks each (W workers; a hash of the
 * seed and the global id, the same in every worker), so a worker's
 * ratings fall into W x W cells (cluster_mf_local.c). An epoch is W
 * groups of W clocks: in group g worker r owns item block
 * b = (r + P[g]) mod W, and in its clock h the cell of user block
 * a = (r + Q[h]) mod W (P, Q permutations drawn per epoch from the seed,
 * the same in every worker), so at any clock no two workers touch one
 * item block or one user block: their steps are those of one sequential
 * sweep in some order (Gemulla et al., KDD 2011), whatever part of the
 * file each worker read. What crosses the network:
 *
 * - an item block's rows, pulled when the group starts and pushed (their
 *   change) when it ends: every item row twice per epoch, where clocks of
 *   sync_every ratings moved it both ways every clock that touched it;
 * - a cell's shared users (held by several workers: --read-part of a file
 *   not grouped by user), pulled before its sweep and pushed after;
 * - the private users, once an epoch for the evaluation and the gather
 *   (train_cluster_mf.c).
 *
 * The ownership hand-over is the barrier: before a group starts, and
 * before a cell with shared users, the worker waits until every worker
 * has ticked as many clocks as it has (so their pushes of the earlier
 * clocks are in). A clock without shared users needs none: its users are
 * this worker's alone and its item block is its own for the group, so a
 * worker whose users are all private waits only W times an epoch.
 */
#include <stdlib.h>

#include "base/error.h"
#include "base/rng.h"
#include "engine.h"
#include "train_cluster_mf.h"
#include "cluster_clock.h"

/* Keys per pull or push call (a frame stays far below the wire's
 * payload limit). */
#define STRATA_BATCH (1u << 20)

static void lap(struct mfc *c, enum boar_ps_phase p)
{
	cluster_lap(c->phase, &c->mark, p);
}

void mf_strata_order(uint32_t W, uint64_t seed, int epoch, uint32_t *P,
		     uint32_t *Q)
{
	for (int side = 0; side < 2; side++) {
		uint32_t *p = side ? Q : P;
		for (uint32_t i = 0; i < W; i++)
			p[i] = i;
		boar_rng r = boar_rng_make(seed, 9 + side, (uint64_t)epoch);
		boar_shuffle_u32(p, W, &r);
	}
}

int mf_barrier(struct mfc *c, boar_error *err)
{
	if (c->t->n_workers < 2 || c->waited == c->ticks)
		return 0;
	int rc = c->wait_clock(c->t->ctx, c->ticks, err);
	if (!rc)
		c->waited = c->ticks;
	return rc;
}

/* rows' keys pulled into the worker's model (push 0), or what changed in
 * them since pushed (push 1); keys, vals, before hold them in between. */
static int move_rows(struct mfc *c, const struct mf_rows *rs, int push,
		     uint64_t *keys, float *vals, float *before,
		     boar_error *err)
{
	const boar_ps_transport *t = c->t;
	uint64_t n = mf_walk(c, rs, push ? WALK_STORE : WALK_KEYS, keys, vals,
			     before);
	lap(c, BOAR_PS_LOCAL);
	int rc = 0;
	for (uint64_t lo = 0; !rc && lo < n; lo += STRATA_BATCH) {
		uint32_t m = n - lo > STRATA_BATCH ? STRATA_BATCH
						   : (uint32_t)(n - lo);
		rc = push ? t->push(t->ctx, keys + lo, vals + lo, m, err)
			  : t->pull(t->ctx, keys + lo, m, vals + lo, err);
	}
	lap(c, push ? BOAR_PS_PUSH : BOAR_PS_PULL);
	if (!rc && !push) {
		mf_walk(c, rs, WALK_LOAD, NULL, vals, before);
		lap(c, BOAR_PS_LOCAL);
	}
	return rc;
}

static struct mf_rows block_items(const struct mfc *c, uint32_t b)
{
	const struct mf_local *l = &c->l;
	struct mf_rows rs = {.i = l->bi + l->bi_at[b],
			     .ni = l->bi_at[b + 1] - l->bi_at[b]};
	return rs;
}

static struct mf_rows cell_users(const struct mfc *c, uint64_t k)
{
	const struct mf_local *l = &c->l;
	struct mf_rows rs = {.u = l->cu + l->cu_at[k],
			     .nu = l->cu_at[k + 1] - l->cu_at[k]};
	return rs;
}

/* Cell k: its shared users in (after the barrier), its sweep, their
 * changes out. */
static int run_cell(struct mfc *c, int epoch, uint64_t k, double eta,
		    double *loss, boar_error *err)
{
	struct mf_rows us = cell_users(c, k);
	int rc = 0;
	if (us.nu) {
		rc = mf_barrier(c, err);
		lap(c, BOAR_PS_CLOCK);
		if (rc || (rc = move_rows(c, &us, 0, c->keys, c->vals,
					  c->before, err)))
			return rc;
	}
	uint64_t rows = c->l.at[k + 1] - c->l.at[k];
	rc = boar_engine_sweep(c->eng[k], epoch, 0, rows, eta, loss);
	if (rc)
		return boar_fail(err, rc, "training diverged in epoch %d "
					  "(non-finite loss); lower eta",
				 epoch);
	lap(c, BOAR_PS_SWEEP);
	if (us.nu)
		rc = move_rows(c, &us, 1, c->keys, c->vals, c->before, err);
	return rc;
}

/* The clock's end: the worker's count of ticks follows the transport's. */
static int tick(struct mfc *c, uint64_t k, boar_error *err)
{
	int rc = c->t->clock(c->t->ctx, c->l.at[k + 1] - c->l.at[k], err);
	if (!rc)
		c->ticks++;
	lap(c, BOAR_PS_CLOCK);
	return rc;
}

/* Group g: item block b in, its W cells, the block out. */
static int run_group(struct mfc *c, int epoch, uint32_t b, const uint32_t *Q,
		     int last, double eta, double *loss, boar_error *err)
{
	uint32_t W = c->l.blocks, r = c->t->rank;
	struct mf_rows items = block_items(c, b);
	c->mark = cluster_now_s();
	int rc = mf_barrier(c, err);
	lap(c, BOAR_PS_CLOCK);
	if (!rc)
		rc = move_rows(c, &items, 0, c->bkeys, c->bvals, c->bbefore,
			       err);
	for (uint32_t h = 0; !rc && h < W; h++) {
		uint64_t k = (uint64_t)b * W + (r + Q[h]) % W;
		rc = run_cell(c, epoch, k, eta, loss, err);
		if (!rc && h + 1 == W)
			rc = move_rows(c, &items, 1, c->bkeys, c->bvals,
				       c->bbefore, err);
		/* the private rows once an epoch, before its last tick */
		if (!rc && h + 1 == W && last && c->npu)
			rc = mf_push_private(c, err);
		lap(c, BOAR_PS_PUSH);
		if (!rc)
			rc = tick(c, k, err);
	}
	return rc;
}

int mf_strata_epoch(struct mfc *c, int epoch, double eta, double *loss,
		    boar_error *err)
{
	uint32_t W = c->l.blocks, r = c->t->rank;
	uint32_t *P = malloc(2 * (uint64_t)W * sizeof *P), *Q = P + W;
	if (!P)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	mf_strata_order(W, c->o.seed, epoch, P, Q);
	int rc = 0;
	for (uint32_t g = 0; !rc && g < W; g++)
		rc = run_group(c, epoch, (r + P[g]) % W, Q, g + 1 == W, eta,
			       loss, err);
	free(P);
	return rc;
}
