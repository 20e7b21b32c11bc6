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
 * need not travel every clock.
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

/* Every worker's moments (3 keys each, the count stored plus one so that
 * an empty part is seen): this worker's pushed, then pulled until all
 * are there. */
static int agree_moments(struct mfc *c, const double mine[3], double all[3],
			 boar_error *err)
{
	const boar_ps_transport *t = c->t;
	uint32_t W = t->n_workers, n = 3 * W;
	uint64_t keys[3], *k = malloc(n * sizeof *k);
	float v[3] = {(float)(mine[0] + 1), (float)mine[1], (float)mine[2]};
	float *got = malloc(n * sizeof *got);
	int rc = k && got ? 0 : boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; !rc && i < 3; i++)
		keys[i] = c->stats_key + 3ull * t->rank + i;
	for (uint32_t i = 0; !rc && i < n; i++)
		k[i] = c->stats_key + i;
	if (!rc)
		rc = t->push(t->ctx, keys, v, 3, err);
	double t0 = cluster_now_s();
	for (uint32_t missing = W; !rc && missing;) {
		if ((rc = t->pull(t->ctx, k, n, got, err)))
			break;
		missing = 0;
		for (uint32_t r = 0; r < W; r++)
			missing += got[3 * r] < 0.5f;
		if (missing && cluster_now_s() - t0 > AGREE_TIMEOUT_S)
			rc = boar_fail(err, BOAR_ETIMEOUT,
				       "cluster training: %u of %u workers did "
				       "not report their ratings in %.0f s",
				       missing, W, AGREE_TIMEOUT_S);
		else if (missing)
			sleep_ms(5);
	}
	all[0] = all[1] = all[2] = 0;
	for (uint32_t r = 0; !rc && r < W; r++) {
		double cnt = got[3 * r] - 1.0;
		all[0] += cnt;
		all[1] += cnt * got[3 * r + 1];
		all[2] += cnt * got[3 * r + 2];
	}
	if (!rc && all[0] > 0) {
		all[1] /= all[0];
		all[2] /= all[0];
	}
	free(k);
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
	free(keys);
	free(v);
	return rc;
}
