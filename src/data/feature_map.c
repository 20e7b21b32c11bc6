/* feature_map.c - a compact numbering of the features datasets use (see
 * feature_map.h). */
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "base/error.h"
#include "feature_map.h"

/* Less work than this many ids stays on one thread. */
#define PARALLEL_MIN (1u << 18)

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Every id of the datasets into the hash table (one thread: the table
 * grows as it fills), then listed and sorted. */
static int build_table(struct feature_map *fm,
		       const struct boar_dataset *const *d, int nd)
{
	struct key_table *t = &fm->tab;
	if (key_table_grow(t, 12))
		return -1;
	for (int i = 0; i < nd; i++) {
		if (!d[i])
			continue;
		for (uint64_t k = 0; k < d[i]->nnz; k++)
			if (d[i]->idx[k] < fm->dim &&
			    !key_table_insert(t, d[i]->idx[k]))
				return -1;
	}
	uint64_t n = fm->n = t->used;
	fm->global = malloc((n ? n : 1) * sizeof *fm->global);
	if (!fm->global)
		return -1;
	key_table_keys(t, fm->global);
	qsort(fm->global, n, sizeof *fm->global, cmp_u32);
	for (uint64_t j = 0; j < n; j++)
		key_table_find(t, fm->global[j])->u = (uint32_t)j;
	return 0;
}

/* Every id's bit set (threads racing on a word only where both set it),
 * then the ranks and the list from one scan of the words. */
static int build_bitmap(struct feature_map *fm,
			const struct boar_dataset *const *d, int nd,
			int threads)
{
	uint64_t words = (fm->dim + 63) / 64;
	uint64_t *bits = fm->bits = calloc(words + 1, sizeof *fm->bits);
	fm->rank = malloc((words + 1) * sizeof *fm->rank);
	if (!fm->bits || !fm->rank)
		return -1;
	for (int i = 0; i < nd; i++) {
		if (!d[i])
			continue;
		const uint32_t *idx = d[i]->idx;
		uint64_t nnz = d[i]->nnz;
#pragma omp parallel for num_threads(threads) schedule(static) \
	if (nnz >= PARALLEL_MIN)
		for (uint64_t k = 0; k < nnz; k++) {
			uint32_t g = idx[k];
			if (g >= fm->dim)
				continue;
			uint64_t bit = 1ull << (g & 63);
			if (!(__atomic_load_n(&bits[g / 64], __ATOMIC_RELAXED) &
			      bit))
				__atomic_fetch_or(&bits[g / 64], bit,
						  __ATOMIC_RELAXED);
		}
	}
	uint64_t n = 0;
	for (uint64_t w = 0; w < words; w++) {
		fm->rank[w] = (uint32_t)n;
		n += (uint64_t)__builtin_popcountll(bits[w]);
	}
	fm->n = n;
	fm->global = malloc((n ? n : 1) * sizeof *fm->global);
	if (!fm->global)
		return -1;
	uint64_t m = 0;
	for (uint64_t w = 0; w < words; w++)
		for (uint64_t x = bits[w]; x; x &= x - 1)
			fm->global[m++] =
				(uint32_t)(w * 64 + (uint64_t)__builtin_ctzll(x));
	return 0;
}

int feature_map_build(struct feature_map *fm, uint64_t dim,
		      const struct boar_dataset *const *d, int nd, int threads,
		      boar_error *err)
{
	memset(fm, 0, sizeof *fm);
	fm->dim = dim;
	uint64_t nnz = 0;
	for (int i = 0; i < nd; i++)
		if (d[i])
			nnz += d[i]->nnz;
	if (threads <= 0)
		threads = omp_get_max_threads();
	/* The bitmap and its ranks take 3/16 byte per feature of the model:
	 * where that is more than the data's ids (a big hashed model), a
	 * table of the ids seen costs less. */
	int rc = fm->dim / 16 * 3 <= nnz * 4 + (1u << 20)
			 ? build_bitmap(fm, d, nd, threads)
			 : build_table(fm, d, nd);
	if (rc) {
		feature_map_free(fm);
		return boar_fail(err, BOAR_ENOMEM,
				 "out of memory for the features' map");
	}
	return 0;
}

void feature_map_free(struct feature_map *fm)
{
	free(fm->global);
	free(fm->bits);
	free(fm->rank);
	key_table_free(&fm->tab);
	memset(fm, 0, sizeof *fm);
}

uint32_t feature_map_local(const struct feature_map *fm, uint32_t g)
{
	if (g >= fm->dim)
		return (uint32_t)fm->n;
	if (fm->bits) {
		uint64_t w = fm->bits[g / 64] & ((2ull << (g & 63)) - 1);
		return fm->rank[g / 64] + (uint32_t)__builtin_popcountll(w) - 1;
	}
	const union key_val *v = key_table_find(&fm->tab, g);
	return v ? v->u : UINT32_MAX; /* not in the map */
}

int feature_map_view(const struct feature_map *fm,
		     const struct boar_dataset *d, struct boar_dataset *view,
		     int threads, boar_error *err)
{
	*view = *d;
	memset(view->owned, 0, sizeof view->owned);
	view->map = NULL;
	view->map_len = 0;
	view->dim = fm->n;
	for (uint64_t k = 0; k < d->nnz && view->dim == fm->n; k++)
		if (d->idx[k] >= fm->dim)
			view->dim = fm->n + 1; /* ids beyond the model: one id */
	view->idx = malloc((d->nnz ? d->nnz : 1) * sizeof *view->idx);
	if (!view->idx)
		return boar_fail(err, BOAR_ENOMEM,
				 "out of memory for the renumbered ids");
	if (threads <= 0)
		threads = omp_get_max_threads();
	uint32_t *out = view->idx;
	const uint32_t *in = d->idx;
	uint64_t nnz = d->nnz;
#pragma omp parallel for num_threads(threads) schedule(static) \
	if (nnz >= PARALLEL_MIN)
	for (uint64_t k = 0; k < nnz; k++)
		out[k] = feature_map_local(fm, in[k]);
	return 0;
}

void feature_map_view_free(struct boar_dataset *view)
{
	free(view->idx);
	view->idx = NULL;
}
