/* gpu_data.cu - the training set on the card (gpu_ctx.h): resident (its
 * non-zeros perhaps copied while the file was parsed, gpu_preload.cu), or cut
 * into chunks of consecutive rows streamed through one slot per stream from
 * the caller's arrays pinned in place, or from pinned staging buffers where
 * the driver refuses (gpu_engine.cu's top comment tells the scheme).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ctx.h"
#include "gpu_preload.h"
#include "math/row_weight.h"

/* Bytes of one linear row's arrays in a chunk (row_ptr entry + label). */
#define ROW_BYTES (sizeof(uint64_t) + sizeof(float))
#define NZ_BYTES (sizeof(uint32_t) + sizeof(float))
#define RATING_BYTES (2 * sizeof(uint32_t) + sizeof(float))

/* A linear row's bytes, with its weight when the run has them. */
static uint64_t row_bytes(int weighted)
{
	return ROW_BYTES + (weighted ? sizeof(float) : 0);
}

uint64_t gpu_data_bytes(const struct boar_dataset *d, int weighted)
{
	if (d->task == BOAR_TASK_MF)
		return d->n_rows * RATING_BYTES;
	return d->nnz * NZ_BYTES + d->n_rows * row_bytes(weighted) +
	       sizeof(uint64_t);
}

int gpu_row_weights(struct boar_gpu_ctx *c, const boar_options *o,
		    boar_error *err)
{
	int rc = 0;
	const struct boar_dataset *d = c->ds;
	if (c->task != BOAR_TASK_LINEAR || !boar_rows_weighted(o, d->weight))
		return 0;
	/* pinned: the streamed chunks copy from it asynchronously */
	CK(cudaMallocHost(&c->row_weight,
			  (d->n_rows ? d->n_rows : 1) * sizeof(float)),
	   "cudaMallocHost(row weights)");
	for (uint64_t r = 0; r < d->n_rows; r++)
		c->row_weight[r] = boar_row_weight(o, d->weight, d->label, r);
fail:
	return rc;
}

/* Cuts the data into chunks of about `bytes` (at least one row each). */
int gpu_plan_chunks(struct boar_gpu_ctx *c, uint64_t bytes, boar_error *err)
{
	const struct boar_dataset *d = c->ds;
	const uint64_t row_b = row_bytes(c->row_weight != NULL);
	uint64_t cap = 16, n = 0;
	struct gpu_chunk *ch = (struct gpu_chunk *)malloc(cap * sizeof *ch);
	if (!ch)
		return boar_fail(err, BOAR_ENOMEM, "GPU: chunk plan: out of memory");
	c->cap_rows = c->cap_nnz = 0;
	for (uint64_t r0 = 0; r0 < d->n_rows;) {
		uint64_t r1;
		if (d->task == BOAR_TASK_MF) {
			uint64_t k = bytes / RATING_BYTES;
			if (k < 1)
				k = 1;
			r1 = r0 + k < d->n_rows ? r0 + k : d->n_rows;
		} else {
			r1 = r0 + 1;
			while (r1 < d->n_rows &&
			       (d->row_ptr[r1 + 1] - d->row_ptr[r0]) * NZ_BYTES +
					       (r1 + 1 - r0) * row_b <=
				       bytes)
				r1++;
			uint64_t nz = d->row_ptr[r1] - d->row_ptr[r0];
			if (nz > c->cap_nnz)
				c->cap_nnz = nz;
		}
		if (r1 - r0 > c->cap_rows)
			c->cap_rows = r1 - r0;
		if (n == cap) {
			cap *= 2;
			struct gpu_chunk *t = (struct gpu_chunk *)realloc(
				ch, cap * sizeof *ch);
			if (!t) {
				free(ch);
				return boar_fail(err, BOAR_ENOMEM,
						 "GPU: chunk plan: out of memory");
			}
			ch = t;
		}
		ch[n].r0 = r0;
		ch[n].r1 = r1;
		n++;
		r0 = r1;
	}
	c->chunks = ch;
	c->n_chunks = n;
	c->order = (uint64_t *)malloc((n ? n : 1) * sizeof *c->order);
	c->chunk_pos = (uint64_t *)malloc((n + 1) * sizeof *c->chunk_pos);
	if (!c->order || !c->chunk_pos)
		return boar_fail(err, BOAR_ENOMEM, "GPU: chunk plan: out of memory");
	return 0;
}

/* Pins one of the caller's arrays in place. Returns 0 when it is pinned
 * (by us or already by someone else), -1 when it cannot be. */
static int pin(struct boar_gpu_ctx *c, const void *p, size_t len)
{
	if (!p || !len)
		return 0;
	cudaError_t e = cudaHostRegister((void *)p, len, cudaHostRegisterDefault);
	if (e == cudaErrorHostMemoryAlreadyRegistered) {
		(void)cudaGetLastError();
		return 0;
	}
	if (e != cudaSuccess) {
		/* A read-only mapping (the binary cache) can still be pinned
		 * read-only where the device supports it. */
		(void)cudaGetLastError();
		e = cudaHostRegister((void *)p, len, cudaHostRegisterReadOnly);
		if (e != cudaSuccess) {
			(void)cudaGetLastError();
			return -1;
		}
	}
	c->pinned[c->n_pinned++] = (void *)p;
	return 0;
}

void gpu_unpin_all(struct boar_gpu_ctx *c)
{
	for (int i = 0; i < c->n_pinned; i++)
		cudaHostUnregister(c->pinned[i]);
	c->n_pinned = 0;
}

/* Pins the source arrays, or falls back to staging buffers. */
void gpu_pin_sources(struct boar_gpu_ctx *c)
{
	const struct boar_dataset *d = c->ds;
	int bad = 0;
	if (d->task == BOAR_TASK_MF) {
		bad |= pin(c, d->user, d->n_rows * sizeof(uint32_t));
		bad |= pin(c, d->item, d->n_rows * sizeof(uint32_t));
	} else {
		bad |= pin(c, d->row_ptr, (d->n_rows + 1) * sizeof(uint64_t));
		bad |= pin(c, d->idx, d->nnz * sizeof(uint32_t));
		bad |= pin(c, d->val, d->nnz * sizeof(float));
	}
	bad |= pin(c, d->label, d->n_rows * sizeof(float));
	if (bad) {
		gpu_unpin_all(c);
		c->staged = 1;
	}
}

int gpu_alloc_slots(struct boar_gpu_ctx *c, boar_error *err)
{
	int rc = 0;
	const int mf = c->task == BOAR_TASK_MF;
	size_t rows = c->cap_rows, nnz = c->cap_nnz;
	for (int s = 0; s < c->n_slots; s++) {
		struct gpu_slot *sl = &c->slot[s];
		CK(cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking),
		   "cudaStreamCreate");
		CK(cudaEventCreateWithFlags(&sl->staged, cudaEventDisableTiming),
		   "cudaEventCreate");
		CK(cudaMalloc(&sl->label, rows * sizeof(float)),
		   "cudaMalloc(chunk labels)");
		if (c->row_weight)
			CK(cudaMalloc(&sl->weight, rows * sizeof(float)),
			   "cudaMalloc(chunk row weights)");
		if (mf) {
			CK(cudaMalloc(&sl->user, rows * sizeof(uint32_t)),
			   "cudaMalloc(chunk users)");
			CK(cudaMalloc(&sl->item, rows * sizeof(uint32_t)),
			   "cudaMalloc(chunk items)");
		} else {
			CK(cudaMalloc(&sl->row_ptr, (rows + 1) * sizeof(uint64_t)),
			   "cudaMalloc(chunk row_ptr)");
			CK(cudaMalloc(&sl->idx, (nnz ? nnz : 1) * sizeof(uint32_t)),
			   "cudaMalloc(chunk idx)");
			CK(cudaMalloc(&sl->val, (nnz ? nnz : 1) * sizeof(float)),
			   "cudaMalloc(chunk val)");
		}
		if (c->staged) {
			sl->stage_len = mf ? rows * RATING_BYTES
					   : nnz * NZ_BYTES +
						     rows * row_bytes(c->row_weight != NULL) +
						     sizeof(uint64_t);
			CK(cudaMallocHost(&sl->stage, sl->stage_len),
			   "cudaMallocHost(staging)");
		}
	}
fail:
	return rc;
}

/* One host-to-device copy of a chunk piece: from the pinned source, or
 * through the slot's staging buffer at *off. */
static cudaError_t put(struct boar_gpu_ctx *c, struct gpu_slot *sl, void *dst,
		       const void *src, size_t len, size_t *off)
{
	if (!len)
		return cudaSuccess;
	if (!c->staged)
		return cudaMemcpyAsync(dst, src, len, cudaMemcpyHostToDevice,
				       sl->stream);
	memcpy(sl->stage + *off, src, len);
	cudaError_t e = cudaMemcpyAsync(dst, sl->stage + *off, len,
					cudaMemcpyHostToDevice, sl->stream);
	*off += len;
	return e;
}

/* Queues the copy of chunk k into slot s. */
int gpu_upload_chunk(struct boar_gpu_ctx *c, int s, uint64_t k,
			boar_error *err)
{
	int rc = 0;
	const struct boar_dataset *d = c->ds;
	struct gpu_slot *sl = &c->slot[s];
	const struct gpu_chunk *ch = &c->chunks[k];
	uint64_t rows = ch->r1 - ch->r0;
	size_t off = 0;
	if (c->staged)
		/* The previous copy out of this staging buffer must be done. */
		CK(cudaEventSynchronize(sl->staged), "cudaEventSynchronize");
	CK(put(c, sl, sl->label, d->label + ch->r0, rows * sizeof(float), &off),
	   "cudaMemcpyAsync(labels)");
	if (c->row_weight)
		CK(put(c, sl, sl->weight, c->row_weight + ch->r0,
		       rows * sizeof(float), &off),
		   "cudaMemcpyAsync(row weights)");
	if (c->task == BOAR_TASK_MF) {
		CK(put(c, sl, sl->user, d->user + ch->r0, rows * sizeof(uint32_t),
		       &off),
		   "cudaMemcpyAsync(users)");
		CK(put(c, sl, sl->item, d->item + ch->r0, rows * sizeof(uint32_t),
		       &off),
		   "cudaMemcpyAsync(items)");
	} else {
		uint64_t z0 = d->row_ptr[ch->r0], z1 = d->row_ptr[ch->r1];
		CK(put(c, sl, sl->row_ptr, d->row_ptr + ch->r0,
		       (rows + 1) * sizeof(uint64_t), &off),
		   "cudaMemcpyAsync(row_ptr)");
		CK(put(c, sl, sl->idx, d->idx + z0, (z1 - z0) * sizeof(uint32_t),
		       &off),
		   "cudaMemcpyAsync(idx)");
		CK(put(c, sl, sl->val, d->val + z0, (z1 - z0) * sizeof(float),
		       &off),
		   "cudaMemcpyAsync(val)");
	}
	if (c->staged)
		CK(cudaEventRecord(sl->staged, sl->stream), "cudaEventRecord");
fail:
	return rc;
}

/* A device copy of `bytes` of host memory (at least one element allocated,
 * so an empty array still has an address); on failure err names the step
 * and the array. */
static int to_device(void **dev, const void *host, size_t bytes, size_t elem,
		     const char *name, boar_error *err)
{
	char what[64];
	cudaError_t e = cudaMalloc(dev, bytes ? bytes : elem);
	if (e != cudaSuccess) {
		snprintf(what, sizeof what, "cudaMalloc(%s)", name);
		return gpu_fail(err, e, what);
	}
	e = cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice);
	if (e != cudaSuccess) {
		snprintf(what, sizeof what, "cudaMemcpy(%s)", name);
		return gpu_fail(err, e, what);
	}
	return 0;
}

#define TO_DEVICE(dev, host, n, name)                                     \
	do {                                                              \
		if ((rc = to_device((void **)&(dev), (host),              \
				    (n) * sizeof *(host), sizeof *(host), \
				    (name), err)))                        \
			goto fail;                                        \
	} while (0)

/* Device copy of the whole training set, kept for the run. */
int gpu_upload_resident(struct boar_gpu_ctx *c, boar_error *err)
{
	int rc = 0;
	const struct boar_dataset *d = c->ds;
	struct gpu_slot *sl = &c->slot[0];
	size_t rows = d->n_rows;
	CK(cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking),
	   "cudaStreamCreate");
	TO_DEVICE(sl->label, d->label, rows, "labels");
	if (c->row_weight)
		TO_DEVICE(sl->weight, c->row_weight, rows, "row weights");
	if (c->task == BOAR_TASK_MF) {
		TO_DEVICE(sl->user, d->user, rows, "users");
		TO_DEVICE(sl->item, d->item, rows, "items");
	} else {
		TO_DEVICE(sl->row_ptr, d->row_ptr, rows + 1, "row_ptr");
		/* the non-zeros may be on the card already: copied while
		 * the file was parsed (gpu_preload.cu) */
		if (!gpu_preload_take(c->preload, d, c->device, &sl->idx,
				      &sl->val)) {
			TO_DEVICE(sl->idx, d->idx, d->nnz, "idx");
			TO_DEVICE(sl->val, d->val, d->nnz, "val");
		}
	}
fail:
	return rc;
}

