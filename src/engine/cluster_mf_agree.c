/* cluster_mf_agree.c - what workers that each read a part of a ratings
 * file agree on before training (train_cluster_mf.h, mf_agree): the whole
 * file's count, mean and spread of the ratings (mu, and the eta and l2
 * resolved from the spread), and which users' rows are private.
 *
 * Both go through the shards, as pushes and pulls only, so they work at
 * any staleness: each worker pushes 1 into a holder key of every user it
 * holds ratings of, reads them back (the shards answer a worker's pull
 * after applying its earlier pushes, so its counts are in before what it
 * sends next), then pushes its count, mean and mean square into keys of
 * its own and pulls every worker's until all are there. By then every
 * worker's holder counts are in too: a user whose count is 1 is held by
 * this worker alone, its row is private (written by one worker), and it
 * need not travel every clock. With strata, the workers then say how many
 * shared users and items they hold, which picks the side whose blocks
 * stay with a worker for a group of clocks (agree_outer).
 */
#include <stdlib.h>
#include <time.h>

#include "base/error.h"
#include "train_cluster_mf.h"
#include "cluster_clock.h"

/* How long workers wait for each other to say their ratings' mean. */
#define AGREE_TIMEOUT_S 600.0
/* Keys per pull or push of the holder counts. */
#define HOLDER_BATCH (1u << 20)

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Every worker's values of slots [first, first + n) of its AGREE_KEYS
 * keys into got[W * n] (worker-major): this worker's mine[n] pushed,
 * then every worker's pulled until all are there (a worker pushes its
 * slot `first` as its value plus one, so that a zero is seen; got holds
 * it back as given). */
static int exchange(struct mfc *c, uint32_t first, uint32_t n,
		    const double *mine, double *got, boar_error *err)
{
	const boar_ps_transport *t = c->t;
	uint32_t W = t->n_workers;
	uint64_t keys[AGREE_KEYS], *k = malloc((uint64_t)W * n * sizeof *k);
	float v[AGREE_KEYS], *g = malloc((uint64_t)W * n * sizeof *g);
	int rc = k && g ? 0 : boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; !rc && i < n; i++) {
		keys[i] = c->stats_key + (uint64_t)AGREE_KEYS * t->rank + first + i;
		v[i] = (float)(mine[i] + (i == 0));
	}
	for (uint32_t r = 0; !rc && r < W; r++)
		for (uint32_t i = 0; i < n; i++)
			k[r * n + i] = c->stats_key +
				       (uint64_t)AGREE_KEYS * r + first + i;
	if (!rc)
		rc = t->push(t->ctx, keys, v, n, err);
	double t0 = cluster_now_s();
	for (uint32_t missing = W; !rc && missing;) {
		if ((rc = t->pull(t->ctx, k, W * n, g, err)))
			break;
		missing = 0;
		for (uint32_t r = 0; r < W; r++)
			missing += g[r * n] < 0.5f;
		if (missing && cluster_now_s() - t0 > AGREE_TIMEOUT_S)
			rc = boar_fail(err, BOAR_ETIMEOUT,
				       "cluster training: %u of %u workers did "
				       "not report their ratings in %.0f s",
				       missing, W, AGREE_TIMEOUT_S);
		else if (missing)
			sleep_ms(5);
	}
	for (uint64_t i = 0; !rc && i < (uint64_t)W * n; i++)
		got[i] = g[i] - (i % n == 0);
	free(k);
	free(g);
	return rc;
}

/* Every worker's count, mean and mean square summed into all. */
static int agree_moments(struct mfc *c, const double mine[3], double all[3],
			 boar_error *err)
{
	uint32_t W = c->t->n_workers;
	double *got = malloc(3 * (uint64_t)W * sizeof *got);
	int rc = got ? exchange(c, 0, 3, mine, got, err)
		     : boar_fail(err, BOAR_ENOMEM, "out of memory");
	all[0] = all[1] = all[2] = 0;
	for (uint32_t r = 0; !rc && r < W; r++) {
		double cnt = got[3 * r];
		all[0] += cnt;
		all[1] += cnt * got[3 * r + 1];
		all[2] += cnt * got[3 * r + 2];
	}
	if (!rc && all[0] > 0) {
		all[1] /= all[0];
		all[2] /= all[0];
	}
	free(got);
	return rc;
}

/* Strata: users the outer side (cluster_mf_strata.c) where the workers
 * hold more shared users than items in all: each worker then moves its
 * shared users once per epoch and its items once per clock, not the
 * other way round. */
static int agree_outer(struct mfc *c, boar_error *err)
{
	uint32_t W = c->t->n_workers;
	double mine[2] = {0, (double)c->l.ni}, shared = 0, items = 0;
	for (uint32_t u = 0; u < c->l.nu; u++)
		mine[0] += !c->is_private[u];
	double *got = malloc(2 * (uint64_t)W * sizeof *got);
	int rc = got ? exchange(c, 3, 2, mine, got, err)
		     : boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t r = 0; !rc && r < W; r++) {
		shared += got[2 * r];
		items += got[2 * r + 1];
	}
	c->outer_users = !rc && shared > items;
	free(got);
	return rc;
}

/* push (1 to each) or pull the holder keys of the worker's users, in
 * batches. */
static int holders(struct mfc *c, int push, uint64_t *keys, float *v,
		   boar_error *err)
{
	const boar_ps_transport *t = c->t;
	int rc = 0;
	for (uint64_t lo = 0; !rc && lo < c->l.nu; lo += HOLDER_BATCH) {
		uint32_t n = c->l.nu - lo > HOLDER_BATCH ? HOLDER_BATCH
							 : (uint32_t)(c->l.nu - lo);
		for (uint32_t i = 0; i < n; i++)
			v[lo + i] = 1.0f;
		rc = push ? t->push(t->ctx, keys + lo, v + lo, n, err)
			  : t->pull(t->ctx, keys + lo, n, v + lo, err);
	}
	return rc;
}

int mf_agree(struct mfc *c, const double mine[3], double all[3],
	     boar_error *err)
{
	uint64_t nu = c->l.nu;
	uint64_t *keys = malloc((nu + 1) * sizeof *keys);
	float *v = malloc((nu + 1) * sizeof *v);
	c->is_private = calloc(nu + 1, 1);
	int rc = keys && v && c->is_private
			 ? 0
			 : boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint64_t u = 0; !rc && u < nu; u++)
		keys[u] = (uint64_t)c->l.gu[u] * c->S + SLOT_HOLDERS(c->R);
	if (!rc && !(rc = holders(c, 1, keys, v, err)) &&
	    !(rc = holders(c, 0, keys, v, err)))
		rc = agree_moments(c, mine, all, err);
	if (!rc)
		rc = holders(c, 0, keys, v, err);
	for (uint64_t u = 0; !rc && u < nu; u++)
		c->is_private[u] = v[u] < 1.5f;
	if (!rc && c->l.blocks)
		rc = agree_outer(c, err);
	free(keys);
	free(v);
	return rc;
}
