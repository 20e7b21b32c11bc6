/* cluster_finish.c - a cluster worker's end (train_cluster.h): the
 * transport's finish, which gathers the whole model where it fits this
 * process (else it stays in the servers: model_sharded), the gathered
 * model put in the host model where the driver evaluates the last epoch
 * on it (train_hook.final_into_host), and the model boar_train_ps
 * returns, at the data's dim, from the views the driver trained on.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/error.h"
#include "base/mem_limit.h"
#include "data/dataset.h"
#include "data/feature_map.h"
#include "model/model.h"
#include "model/model_copy.h"
#include "model/model_input.h"
#include "train.h"
#include "train_cluster.h"

/* Whether the whole model, twice (the model and the transport's buffer
 * for the gather; with shared sums, their keys too), fits the memory
 * limit and the address space this process may have (ulimit -v). */
static int dense_fits(const struct cluster *c, const struct train_run *r)
{
	uint64_t need =
		boar_mul_sat((c->dim + 1) * c->width, 8 * c->key_copies);
	struct rlimit as;
	if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY &&
	    need > (uint64_t)as.rlim_cur / 2)
		return 0;
	return need <= boar_memory_limit(r->o.max_memory);
}

/* Whether the model stays in the servers at the end: a map's model too
 * large for this process (dense_fits). */
static int will_shard(const struct cluster *c, const struct train_run *r)
{
	return c->fm && c->can_shard && !dense_fits(c, r);
}

/* The train_hook's final_into_host: a transport that gathers, a model
 * that is not left in the servers. */
int cluster_final_into_host(void *ctx, const struct train_run *r)
{
	struct cluster *c = ctx;
	c->final_in_host = c->gathers && !will_shard(c, r);
	return c->final_in_host;
}

/* The weights of the map's features (and the bias) between the engine's
 * host model and c->gathered (the model's keys): into the host model
 * (to_host: the gathered model, where the last epoch is evaluated), or
 * out of it (this worker's replica, where nothing was gathered). */
static void copy_mapped(const struct cluster *c, const struct train_run *r,
			int to_host)
{
	const uint32_t *g = c->fm->global;
	uint64_t K = c->width, m = c->fm->n;
	for (uint64_t f = 0; f <= m; f++) {
		float *host = &r->m->w[f * K];
		float *all = &c->gathered[(f < m ? g[f] : c->dim) * K];
		memcpy(to_host ? host : all, to_host ? all : host,
		       K * sizeof *host);
	}
}

/* The transport's end; with a map, the whole model goes into c->gathered
 * (the engine's model has only the worker's features), or nowhere when it
 * is too large for this process (the servers keep it). */
int cluster_finish(void *ctx, const struct train_run *r, boar_error *err)
{
	struct cluster *c = ctx;
	int gathered = 0;
	/* a run stopped by its progress hook */
	int rc = cluster_settle_ahead(c, err);
	if (rc)
		return rc;
	if (!c->fm && c->key_copies == 1) {
		rc = c->t->finish(c->t->ctx, r->m->w, c->n_keys, &gathered,
				  err);
		c->final_in_host &= gathered; /* a transport that promised */
		return rc;
	}
	uint64_t n = (c->dim + 1) * c->width;
	c->sharded = will_shard(c, r);
	/* the transport gathers every key: with shared sums, theirs too */
	if (!c->sharded &&
	    !(c->gathered = calloc(n * c->key_copies, sizeof *c->gathered)))
		return boar_fail(err, BOAR_ENOMEM,
				 "out of memory for the gathered model");
	rc = c->t->finish(c->t->ctx, c->gathered, n * c->key_copies,
			  &gathered, err);
	c->final_in_host &= !rc && gathered;
	if (!c->fm) { /* the model is the engine's: the weights into it */
		if (!rc && gathered)
			memcpy(r->m->w, c->gathered, n * sizeof *r->m->w);
		return rc;
	}
	if (c->final_in_host)
		copy_mapped(c, r, 1);
	if (!rc && !gathered && c->gathered) /* this worker's replica */
		copy_mapped(c, r, 0);
	return rc;
}

/* The model's head: no feature weights (dim 0), everything else of m
 * (loss, hashing, classes, bias weights, input): what predicting through
 * the servers needs besides the weights they hold. */
static struct boar_model *model_head(const struct boar_model *m,
				     const boar_dataset *train)
{
	struct boar_model *h =
		m->n_classes ? boar_model_alloc_multiclass(m->loss, 0,
							   m->n_classes,
							   m->classes)
			     : boar_model_alloc(m->task, m->loss, 0, 0, 0, 0);
	if (!h)
		return NULL;
	h->hash_bits = m->hash_bits;
	h->slot_ids = m->slot_ids;
	h->loss_param = m->loss_param;
	memcpy(h->w, &m->w[m->dim * boar_model_width(m)],
	       boar_model_width(m) * sizeof *h->w);
	boar_error e;
	if (boar_model_note_input(h, train, &e)) {
		boar_model_free(h);
		return NULL;
	}
	return h;
}

/* What the driver trained on the views (lm, the worker's features) as the
 * model the caller asked for: the whole model gathered (or this worker's
 * replica) at the data's dim, or the head of a model the servers keep. */
int cluster_global_model(struct cluster *c, const boar_dataset *train,
			 struct boar_model *lm, boar_model **out,
			 boar_error *err)
{
	struct boar_model *gm = NULL;
	if (c->sharded) {
		if (!(gm = model_head(lm, train)))
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
	} else {
		if (!c->gathered)
			return boar_fail(err, BOAR_EINVAL,
					 "cluster training: no model came back "
					 "from the transport");
		int rc = boar_model_grow_copy(lm, train, &gm, err);
		if (rc)
			return rc;
		memcpy(gm->w, c->gathered,
		       (c->dim + 1) * c->width * sizeof *gm->w);
		if ((rc = boar_model_note_input(gm, train, err))) {
			boar_model_free(gm);
			return rc;
		}
	}
	boar_model_free(lm);
	*out = gm;
	return 0;
}
