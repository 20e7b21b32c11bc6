/* gpu_slices.cu - what cluster workers ask of the GPU engine (gpu_ctx.h):
 * an epoch's row order written out on the host, a slice of an epoch's
 * positions swept, and weights read and written by key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ctx.h"
#include "gpu_perm.h"

extern "C" int boar_gpu_order(boar_gpu_ctx *c, int epoch,
			      const uint32_t **order, boar_error *err)
{
	if (!c || !order)
		return boar_fail(err, BOAR_EINVAL, "GPU: no context");
	if (c->task != BOAR_TASK_LINEAR)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: epoch slices are for linear models");
	const uint64_t n = c->ds->n_rows;
	if (n > UINT32_MAX)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: %llu rows: an order of row ids holds 2^32",
				 (unsigned long long)n);
	if (c->host_order && c->host_order_epoch == epoch) {
		*order = c->host_order;
		return 0;
	}
	if (!c->host_order) {
		c->host_order = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
		if (!c->host_order)
			return boar_fail(err, BOAR_ENOMEM,
					 "GPU: epoch order: out of memory");
	}
	/* The permutations the kernels evaluate (gpu_perm.h is host code
	 * too), chunk after chunk in the epoch's chunk order. */
	struct gpu_perm_key key;
	if (c->resident) {
		gpu_perm_make(&key, n, c->seed, (uint64_t)epoch, 0);
		for (uint64_t p = 0; p < n; p++)
			c->host_order[p] = (uint32_t)gpu_perm_apply(
				p, n, key.half, key.k[0], key.k[1], key.k[2],
				key.k[3]);
	} else {
		gpu_shuffle_chunks(c, epoch);
		for (uint64_t i = 0; i < c->n_chunks; i++) {
			uint64_t k = c->order[i];
			const struct gpu_chunk *ch = &c->chunks[k];
			uint64_t len = ch->r1 - ch->r0;
			uint32_t *o = c->host_order + c->chunk_pos[i];
			gpu_perm_make(&key, len, c->seed, (uint64_t)epoch, k);
			for (uint64_t p = 0; p < len; p++)
				o[p] = (uint32_t)(ch->r0 +
						  gpu_perm_apply(p, len, key.half,
								 key.k[0], key.k[1],
								 key.k[2], key.k[3]));
		}
	}
	c->host_order_epoch = epoch;
	*order = c->host_order;
	return 0;
}

/* The slot holding chunk k, copying it into the next slot in rotation when
 * none does. A copy queues on the slot's stream behind the kernel that
 * last read the slot, as in an epoch. */
static int slot_for(struct boar_gpu_ctx *c, uint64_t k, int *slot,
		    boar_error *err)
{
	for (int s = 0; s < c->n_slots; s++)
		if (c->slot_chunk[s] == (int64_t)k) {
			*slot = s;
			return 0;
		}
	int s = c->next_slot;
	c->next_slot = (c->next_slot + 1) % c->n_slots;
	c->slot_chunk[s] = -1;
	int rc = gpu_upload_chunk(c, s, k, err);
	if (rc)
		return rc;
	c->slot_chunk[s] = (int64_t)k;
	*slot = s;
	return 0;
}

extern "C" int boar_gpu_sweep(boar_gpu_ctx *c, int epoch, uint64_t begin,
			      uint64_t end, double eta, double *loss_sum,
			      boar_error *err)
{
	int rc = 0;
	if (!c || !loss_sum)
		return boar_fail(err, BOAR_EINVAL, "GPU: no context");
	if (c->task != BOAR_TASK_LINEAR)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: epoch slices are for linear models");
	if (begin > end || end > c->ds->n_rows)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: slice [%llu, %llu) outside the %llu rows",
				 (unsigned long long)begin,
				 (unsigned long long)end,
				 (unsigned long long)c->ds->n_rows);
	if (begin == end)
		return 0;
	if ((rc = gpu_loss_reset(c, err)))
		return rc;
	if (c->resident) {
		CK(gpu_launch(c, 0, 0, c->ds->n_rows, 0, epoch, (float)eta, begin,
			  end, 1),
		   "sweep kernel launch");
	} else {
		gpu_shuffle_chunks(c, epoch);
		/* The chunks that overlap the slice: order[i0 .. i1). */
		uint64_t i0 = 0, i1;
		while (c->chunk_pos[i0 + 1] <= begin)
			i0++;
		for (i1 = i0 + 1; i1 < c->n_chunks && c->chunk_pos[i1] < end; i1++)
			;
		uint32_t conc = (uint32_t)(i1 - i0 < (uint64_t)c->n_slots
						   ? i1 - i0
						   : (uint64_t)c->n_slots);
		for (uint64_t i = i0; i < i1; i++) {
			uint64_t k = c->order[i];
			const struct gpu_chunk *ch = &c->chunks[k];
			uint64_t p0 = c->chunk_pos[i], p1 = c->chunk_pos[i + 1];
			uint64_t q0 = begin > p0 ? begin - p0 : 0;
			uint64_t q1 = (end < p1 ? end : p1) - p0;
			int s;
			if ((rc = slot_for(c, k, &s, err)))
				goto fail;
			CK(gpu_launch(c, s, ch->r0, ch->r1, k, epoch, (float)eta, q0,
				  q1, conc),
			   "sweep kernel launch");
		}
	}
	return gpu_loss_collect(c, loss_sum, err);
fail:
	return rc;
}

/* Checks a key list for set/get and makes room for a batch of keys. */
static int keys_prepare(struct boar_gpu_ctx *c, const uint32_t *keys,
			const float *vals, uint64_t n, boar_error *err)
{
	int rc = 0;
	if (!c)
		return boar_fail(err, BOAR_EINVAL, "GPU: no context");
	if (c->task != BOAR_TASK_LINEAR)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: weights by key are for linear models");
	if (n && (!keys || !vals))
		return boar_fail(err, BOAR_EINVAL, "GPU: no keys or values");
	/* keys are positions in w: (dim + 1) * width of them */
	uint64_t last = (c->dim + 1) * c->width - 1;
	for (uint64_t i = 0; i < n; i++)
		if (keys[i] > last)
			return boar_fail(err, BOAR_EINVAL,
					 "GPU: key %u above the model's %llu",
					 keys[i], (unsigned long long)last);
	uint64_t want = n < GPU_KEY_BATCH ? n : GPU_KEY_BATCH;
	if (want <= c->key_cap)
		return 0;
	CK(cudaSetDevice(c->device), "cudaSetDevice");
	cudaFree(c->dkey);
	cudaFree(c->dval);
	c->dkey = NULL;
	c->dval = NULL;
	c->key_cap = 0;
	CK(cudaMalloc(&c->dkey, want * sizeof(uint32_t)), "cudaMalloc(keys)");
	CK(cudaMalloc(&c->dval, want * sizeof(float)), "cudaMalloc(values)");
	c->key_cap = want;
fail:
	return rc;
}

/* The weights of n keys from vals (to_card; vals is then only read) or
 * into vals, in batches of key_cap keys through the device buffers. */
static int move_weights(boar_gpu_ctx *c, const uint32_t *keys, float *vals,
			uint64_t n, int to_card, boar_error *err)
{
	int rc = keys_prepare(c, keys, vals, n, err);
	if (rc || !n)
		return rc;
	cudaStream_t st = c->slot[0].stream;
	uint32_t stride = c->lv.adagrad ? 2 : 1;
	CK(cudaSetDevice(c->device), "cudaSetDevice");
	for (uint64_t lo = 0; lo < n; lo += c->key_cap) {
		uint64_t m = n - lo < c->key_cap ? n - lo : c->key_cap;
		CK(cudaMemcpyAsync(c->dkey, keys + lo, m * sizeof(uint32_t),
				   cudaMemcpyHostToDevice, st),
		   "cudaMemcpy(keys)");
		if (to_card) {
			CK(cudaMemcpyAsync(c->dval, vals + lo, m * sizeof(float),
					   cudaMemcpyHostToDevice, st),
			   "cudaMemcpy(values)");
			CK(gpu_scatter_weights(c->w, stride, c->dkey, c->dval,
					       m, c->sm_count, st),
			   "scatter kernel launch");
			continue;
		}
		CK(gpu_gather_weights(c->w, stride, c->dkey, c->dval, m,
				      c->sm_count, st),
		   "gather kernel launch");
		CK(cudaMemcpyAsync(vals + lo, c->dval, m * sizeof(float),
				   cudaMemcpyDeviceToHost, st),
		   "cudaMemcpy(values)");
		/* A copy into pageable memory may return early. */
		CK(cudaStreamSynchronize(st), "getting weights");
	}
	CK(cudaStreamSynchronize(st), "setting weights");
fail:
	return rc;
}

extern "C" int boar_gpu_set_weights(boar_gpu_ctx *c, const uint32_t *keys,
				    const float *vals, uint64_t n,
				    boar_error *err)
{
	return move_weights(c, keys, (float *)vals, n, 1, err);
}

extern "C" int boar_gpu_get_weights(boar_gpu_ctx *c, const uint32_t *keys,
				    float *vals, uint64_t n, boar_error *err)
{
	return move_weights(c, keys, vals, n, 0, err);
}

