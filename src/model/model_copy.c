/* model_copy.c - snapshots and warm-start copies of models. */
#include <stdlib.h>
#include <string.h>

#include "data/classes.h"
#include "data/dataset.h"
#include "base/error.h"
#include "model.h"
#include "model_copy.h"

static struct boar_model *alloc_like(const struct boar_model *m, uint64_t dim,
				     uint64_t n_items)
{
	struct boar_model *c =
		m->n_classes
			? boar_model_alloc_multiclass(m->loss, dim, m->n_classes,
						      m->classes)
			: boar_model_alloc(m->task, m->loss, dim, n_items,
					   m->rank, m->has_bias);
	if (c) {
		c->hash_bits = m->hash_bits;
		c->slot_ids = m->slot_ids;
		c->mu = m->mu;
		c->loss_param = m->loss_param;
		c->mf_loss = m->mf_loss;
	}
	return c;
}

/* Copies src's values into dst, which is at least as large: rows of src
 * land at the same ids; the linear bias moves to dst's bias slot. */
static void copy_values(struct boar_model *dst, const struct boar_model *src)
{
	if (src->task == BOAR_TASK_LINEAR) {
		uint64_t K = boar_model_width(src);
		memcpy(dst->w, src->w, src->dim * K * sizeof *dst->w);
		memcpy(&dst->w[dst->dim * K], &src->w[src->dim * K],
		       K * sizeof *dst->w);
		return;
	}
	memcpy(dst->P, src->P, src->dim * src->rank * sizeof *dst->P);
	memcpy(dst->Q, src->Q, src->n_items * src->rank * sizeof *dst->Q);
	if (src->has_bias) {
		memcpy(dst->bu, src->bu, src->dim * sizeof *dst->bu);
		memcpy(dst->bi, src->bi, src->n_items * sizeof *dst->bi);
	}
	dst->mu = src->mu;
}

int boar_model_copy_into(struct boar_model **dst, const struct boar_model *src)
{
	struct boar_model *d = *dst;
	if (!d || d->dim != src->dim || d->n_items != src->n_items) {
		boar_model_free(d);
		*dst = d = alloc_like(src, src->dim, src->n_items);
		if (!d)
			return BOAR_ENOMEM;
	}
	copy_values(d, src);
	return 0;
}

int boar_model_grow_copy(const struct boar_model *init,
			 const struct boar_dataset *d, struct boar_model **out,
			 boar_error *err)
{
	if (init->task != d->task)
		return boar_fail(err, BOAR_EMISMATCH,
				 "the initial model is of another task");
	if (init->hash_bits != d->hash_bits)
		return boar_fail(err, BOAR_EMISMATCH,
				 "the initial model was trained with hash-bits "
				 "%d, the data is loaded with %d",
				 init->hash_bits, d->hash_bits);
	if (init->slot_ids != d->slot_ids)
		return boar_fail(err, BOAR_EMISMATCH,
				 "the initial model was trained on %s data, "
				 "this data is %s",
				 init->slot_ids ? "VW/CSV" : "LIBSVM",
				 d->slot_ids ? "VW/CSV" : "LIBSVM");
	if (init->n_classes) {
		float classes[BOAR_MAX_CLASSES];
		uint32_t k;
		if (boar_collect_classes(d, classes, BOAR_MAX_CLASSES, &k))
			return boar_fail(err, BOAR_EMISMATCH,
					 "the data's labels are not classes");
		for (uint32_t c = 0; c < k; c++) {
			uint32_t j = 0;
			while (j < init->n_classes &&
			       init->classes[j] != classes[c])
				j++;
			if (j == init->n_classes)
				return boar_fail(err, BOAR_EMISMATCH,
						 "label %g is not one of the "
						 "initial model's classes",
						 classes[c]);
		}
	}
	uint64_t dim = d->dim > init->dim ? d->dim : init->dim;
	uint64_t items = d->n_items > init->n_items ? d->n_items : init->n_items;
	struct boar_model *m = alloc_like(init, dim, items);
	if (!m)
		return boar_fail(err, BOAR_ENOMEM, "out of memory for the model");
	copy_values(m, init);
	*out = m;
	return 0;
}
