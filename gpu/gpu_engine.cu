/* gpu_engine.cu - the GPU engine's context: device memory, streams, epochs.
 *
 * boar_gpu_open puts the model (AdaGrad accumulators interleaved with the
 * weights, the per-feature regularization scale, the hot-feature list) in
 * device memory for the whole run. The training
 * set then either moves to the card once (when it fits with headroom) and
 * stays there, or is cut into chunks of consecutive rows that are copied
 * from pinned host memory into one slot per stream at every epoch: chunk i
 * goes to slot i mod S on stream i mod S, its copy queued behind the kernel
 * that last used the slot, so the copy of one chunk overlaps the kernels of
 * the others. Pinned memory is the caller's own arrays registered in place
 * (cudaHostRegister) when the driver allows it; otherwise each slot has a
 * pinned staging buffer that the host fills while the other streams work.
 *
 * Row order: resident data is one chunk permuted as a whole; streamed data
 * visits its chunks in a shuffled order and permutes rows inside each chunk
 * (gpu_perm.h), all drawn from (seed, epoch). The positions of an epoch are
 * the chunks' positions laid end to end in that order; boar_gpu_sweep runs
 * a slice of them (for cluster workers), boar_gpu_order writes the same
 * order out on the host.
 *
 * The environment variable BOAR_GPU_CHUNK_BYTES forces streaming with chunks
 * of about that many bytes, so tests exercise the streaming path on small
 * data.
 *
 * Every CUDA call is checked; failures become BOAR_ENOMEM, BOAR_ENODEVICE or
 * BOAR_EGPU with cudaGetErrorString in the message. Nothing prints or exits.
 * The CUDA runtime's current device is per host thread, so each entry point
 * selects the context's device again before working.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.h"
#include "gpu_perm.h"

extern "C" {
#include "data/dataset.h"
#include "model/model.h"
#include "gpu/gpu_engine.h"
}
#include "math/loss.h"
#include "math/step.h"

#define GPU_MAX_STREAMS 64
#define GPU_DEFAULT_STREAMS 4
/* Streamed chunks: big enough that a copy amortizes its launch, small
 * enough that S of them leave the card for the model. */
#define GPU_DEFAULT_CHUNK (256ULL << 20)
#define GPU_MIN_HEADROOM (512ULL << 20)

struct gpu_chunk {
	uint64_t r0, r1; /* rows (ratings) [r0, r1) */
};

struct gpu_slot {
	cudaStream_t stream;
	cudaEvent_t staged; /* the slot's staging buffer may be refilled */
	/* device buffers for one chunk */
	uint64_t *row_ptr;
	uint32_t *idx, *user, *item;
	float *val, *label;
	/* pinned staging (only when the caller's arrays could not be pinned) */
	unsigned char *stage;
	size_t stage_len;
};

struct boar_gpu_ctx {
	int device;
	int sm_count;
	int task;
	const struct boar_dataset *ds;
	uint64_t seed;
	float l1, l2;
	int opt;          /* BOAR_OPT_* */
	float loss_param; /* the model's (Huber's delta) */

	/* linear model */
	uint64_t dim;
	float *w, *G, *scale;
	uint32_t *hot;       /* hot feature ids (GPU_HOT_MAX) */
	uint32_t n_hot;
	struct gpu_linear_variant lv;
	/* MF model */
	uint64_t n_users, n_items;
	uint32_t rank;
	int has_bias;
	float mu;
	void *P, *Q; /* as mv.storage says (gpu_mf.cu) */
	float *bu, *bi, *Gu, *Gi;
	struct gpu_mf_variant mv;

	double *loss; /* device accumulator of the epoch's loss */

	/* data */
	int resident;
	int n_slots;
	struct gpu_slot slot[GPU_MAX_STREAMS];
	struct gpu_chunk *chunks;
	uint64_t n_chunks;
	uint64_t *order;     /* host scratch: this epoch's chunk order */
	uint64_t cap_rows;   /* largest chunk, rows */
	uint64_t cap_nnz;    /* largest chunk, non-zeros */
	int staged;          /* copies go through staging buffers */
	uint32_t rows_per_block; /* 0: GPU_ROWS_PER_BLOCK */
	void *pinned[6];     /* host ranges registered by us */
	int n_pinned;

	/* slices (boar_gpu_sweep) and weights by key */
	int have_order;      /* order/chunk_pos hold order_epoch's chunks */
	int order_epoch;
	uint64_t *chunk_pos; /* n_chunks + 1: first position of order[i] */
	int64_t slot_chunk[GPU_MAX_STREAMS]; /* chunk held by a slot, or -1 */
	int next_slot;       /* the slot a missing chunk is copied into */
	uint32_t *host_order; /* boar_gpu_order's array, n_rows */
	int host_order_epoch;
	uint32_t *dkey;      /* device key and value buffers, key_cap each */
	float *dval;
	uint64_t key_cap;
};

/* Keys moved per kernel by set/get_weights: bounds the buffers (32 MiB)
 * when the whole model moves. */
#define GPU_KEY_BATCH (1ULL << 22)

int gpu_fail(boar_error *err, cudaError_t e, const char *what)
{
	int code = BOAR_EGPU;
	switch (e) {
	case cudaErrorMemoryAllocation:
		code = BOAR_ENOMEM;
		break;
	case cudaErrorNoDevice:
	case cudaErrorInsufficientDriver:
	case cudaErrorInvalidDevice:
	case cudaErrorDevicesUnavailable:
	case cudaErrorSystemDriverMismatch:
	case cudaErrorCompatNotSupportedOnDevice:
		code = BOAR_ENODEVICE;
		break;
	default:
		break;
	}
	return boar_fail(err, code, "GPU: %s: %s (CUDA error %d)", what,
			 cudaGetErrorString(e), (int)e);
}

/* The CUDA check used everywhere below: on failure fill err and jump to the
 * function's single unwind label. */
#define CK(call, what)                                  \
	do {                                            \
		cudaError_t e_ = (call);                \
		if (e_ != cudaSuccess) {                \
			rc = gpu_fail(err, e_, what);   \
			goto fail;                      \
		}                                       \
	} while (0)

void gpu_perm_make(struct gpu_perm_key *key, uint64_t n, uint64_t seed,
		   uint64_t epoch, uint64_t chunk)
{
	uint64_t s = seed ^ (epoch * 0xd1b54a32d192ed03ULL) ^
		     (chunk * 0xaef17502108ef2d9ULL);
	key->n = n;
	key->half = gpu_perm_half_bits(n);
	for (int i = 0; i < 4; i++)
		key->k[i] = (uint32_t)gpu_perm_splitmix64(&s);
}

/* The update policy on the GPU. With thousands of warps in flight a racy
 * store loses a large share of the updates to frequent coordinates (the
 * MF tests trained measurably worse with it), and on Hopper a
 * fire-and-forget atomicAdd is faster than the store besides (see
 * bench/RESULTS-gpu.md). So both `atomic` and `racy` run atomicAdd; racy
 * still permits lost updates, it just gets none. o->gpu_racy_kernels (the
 * CLI's BOAR_GPU_RACY=1) runs the plain-store kernels for `racy`, for
 * measuring them. */
static int atomic_updates(const boar_options *o)
{
	return !(o->gpu_racy_kernels && o->update == BOAR_UPDATE_RACY);
}

/* Bytes of one linear row's arrays in a chunk (row_ptr entry + label). */
#define ROW_BYTES (sizeof(uint64_t) + sizeof(float))
#define NZ_BYTES (sizeof(uint32_t) + sizeof(float))
#define RATING_BYTES (2 * sizeof(uint32_t) + sizeof(float))

static uint64_t data_bytes(const struct boar_dataset *d)
{
	if (d->task == BOAR_TASK_MF)
		return d->n_rows * RATING_BYTES;
	return d->nnz * NZ_BYTES + d->n_rows * ROW_BYTES + sizeof(uint64_t);
}

/* Cuts the data into chunks of about `bytes` (at least one row each). */
static int plan_chunks(struct boar_gpu_ctx *c, uint64_t bytes, boar_error *err)
{
	const struct boar_dataset *d = c->ds;
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
					       (r1 + 1 - r0) * ROW_BYTES <=
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

static void unpin_all(struct boar_gpu_ctx *c)
{
	for (int i = 0; i < c->n_pinned; i++)
		cudaHostUnregister(c->pinned[i]);
	c->n_pinned = 0;
}

/* Pins the source arrays, or falls back to staging buffers. */
static void pin_sources(struct boar_gpu_ctx *c)
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
		unpin_all(c);
		c->staged = 1;
	}
}

static int alloc_slots(struct boar_gpu_ctx *c, boar_error *err)
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
					   : nnz * NZ_BYTES + rows * ROW_BYTES +
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
static int upload_chunk(struct boar_gpu_ctx *c, int s, uint64_t k,
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

/* Device copy of the whole training set, kept for the run. */
static int upload_resident(struct boar_gpu_ctx *c, boar_error *err)
{
	int rc = 0;
	const struct boar_dataset *d = c->ds;
	struct gpu_slot *sl = &c->slot[0];
	size_t rows = d->n_rows;
	CK(cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking),
	   "cudaStreamCreate");
	CK(cudaMalloc(&sl->label, (rows ? rows : 1) * sizeof(float)),
	   "cudaMalloc(labels)");
	CK(cudaMemcpy(sl->label, d->label, rows * sizeof(float),
		      cudaMemcpyHostToDevice),
	   "cudaMemcpy(labels)");
	if (c->task == BOAR_TASK_MF) {
		CK(cudaMalloc(&sl->user, (rows ? rows : 1) * sizeof(uint32_t)),
		   "cudaMalloc(users)");
		CK(cudaMalloc(&sl->item, (rows ? rows : 1) * sizeof(uint32_t)),
		   "cudaMalloc(items)");
		CK(cudaMemcpy(sl->user, d->user, rows * sizeof(uint32_t),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(users)");
		CK(cudaMemcpy(sl->item, d->item, rows * sizeof(uint32_t),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(items)");
	} else {
		size_t nnz = d->nnz;
		CK(cudaMalloc(&sl->row_ptr, (rows + 1) * sizeof(uint64_t)),
		   "cudaMalloc(row_ptr)");
		CK(cudaMalloc(&sl->idx, (nnz ? nnz : 1) * sizeof(uint32_t)),
		   "cudaMalloc(idx)");
		CK(cudaMalloc(&sl->val, (nnz ? nnz : 1) * sizeof(float)),
		   "cudaMalloc(val)");
		CK(cudaMemcpy(sl->row_ptr, d->row_ptr, (rows + 1) * sizeof(uint64_t),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(row_ptr)");
		CK(cudaMemcpy(sl->idx, d->idx, nnz * sizeof(uint32_t),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(idx)");
		CK(cudaMemcpy(sl->val, d->val, nnz * sizeof(float),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(val)");
	}
fail:
	return rc;
}

/* Counts every feature's rows on the device (one pass over the data), picks
 * the hot features from the counts, and, with regularization, turns the
 * counts into reg_scale_j = n_rows / count_j in place. A feature is hot when
 * the rows in flight would update it about HOT_TAU times or more from one
 * stale value: count_j >= HOT_TAU * n_rows / rows in flight. */
#define HOT_TAU 0.5
static int prepare_counts(struct boar_gpu_ctx *c, boar_error *err)
{
	int rc = 0;
	const struct boar_dataset *d = c->ds;
	cudaStream_t s0 = c->slot[0].stream;
	uint64_t per_launch = c->resident ? d->n_rows : c->cap_rows;
	uint64_t flight = gpu_linear_rows_in_flight(&c->lv, per_launch,
						    c->rows_per_block, c->sm_count);
	double thr_d = HOT_TAU * (double)d->n_rows / (double)(flight ? flight : 1);
	uint32_t thr = thr_d < 2 ? 2 : (thr_d > 4e9 ? 4000000000u : (uint32_t)thr_d + 1);

	CK(cudaMalloc(&c->scale, (c->dim ? c->dim : 1) * sizeof(float)),
	   "cudaMalloc(feature counts)");
	CK(cudaMalloc(&c->hot, GPU_HOT_MAX * sizeof(uint32_t)),
	   "cudaMalloc(hot features)");
	CK(cudaMemsetAsync(c->scale, 0, c->dim * sizeof(float), s0),
	   "cudaMemset(feature counts)");
	if (c->resident) {
		CK(gpu_count_features(c->slot[0].idx, d->nnz,
				      (uint32_t *)c->scale, c->sm_count, s0),
		   "count kernel launch");
	} else {
		/* One pass over the chunks on slot 0's stream. */
		for (uint64_t k = 0; k < c->n_chunks; k++) {
			if ((rc = upload_chunk(c, 0, k, err)))
				goto fail;
			const struct gpu_chunk *ch = &c->chunks[k];
			CK(gpu_count_features(c->slot[0].idx,
					      d->row_ptr[ch->r1] - d->row_ptr[ch->r0],
					      (uint32_t *)c->scale, c->sm_count,
					      s0),
			   "count kernel launch");
		}
	}
	CK(gpu_pick_hot((const uint32_t *)c->scale, c->dim, thr, c->hot,
			&c->n_hot, c->sm_count, s0),
	   "hot feature selection");
	if (c->lv.reg) {
		CK(gpu_counts_to_scale(c->scale, c->dim, d->n_rows, c->sm_count, s0),
		   "scale kernel launch");
		CK(cudaStreamSynchronize(s0), "reg_scale");
	} else {
		CK(cudaFree(c->scale), "cudaFree(feature counts)");
		c->scale = NULL;
	}
fail:
	return rc;
}

/* Factor rows to the device as the storage keeps them: fp32 as they are,
 * f16/bf16 staged as fp32 and converted there. */
static int upload_factors(struct boar_gpu_ctx *c, void **dst, const float *src,
			  uint64_t rows, boar_error *err)
{
	int rc = 0;
	uint64_t n = rows * c->rank;
	float *t = NULL;
	CK(cudaMalloc(dst, n ? n * gpu_mf_value_bytes(c->mv.storage) : 4),
	   "cudaMalloc(factors)");
	if (c->mv.storage == BOAR_STORAGE_F32) {
		CK(cudaMemcpy(*dst, src, n * sizeof(float),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(factors)");
		return 0;
	}
	CK(cudaMalloc(&t, n ? n * sizeof(float) : 4), "cudaMalloc(staging)");
	CK(cudaMemcpy(t, src, n * sizeof(float), cudaMemcpyHostToDevice),
	   "cudaMemcpy(factors)");
	CK(gpu_mf_factors_in(*dst, t, n, c->mv.storage, c->sm_count, 0),
	   "converting factors");
	CK(cudaDeviceSynchronize(), "converting factors");
fail:
	cudaFree(t);
	return rc;
}

static int download_factors(struct boar_gpu_ctx *c, float *dst,
			    const void *src, uint64_t rows, boar_error *err)
{
	int rc = 0;
	uint64_t n = rows * c->rank;
	float *t = NULL;
	if (c->mv.storage == BOAR_STORAGE_F32) {
		CK(cudaMemcpy(dst, src, n * sizeof(float),
			      cudaMemcpyDeviceToHost),
		   "cudaMemcpy(factors)");
		return 0;
	}
	CK(cudaMalloc(&t, n ? n * sizeof(float) : 4), "cudaMalloc(staging)");
	CK(gpu_mf_factors_out(t, src, n, c->mv.storage, c->sm_count, 0),
	   "converting factors");
	CK(cudaMemcpy(dst, t, n * sizeof(float), cudaMemcpyDeviceToHost),
	   "cudaMemcpy(factors)");
fail:
	cudaFree(t);
	return rc;
}

static int upload_model(struct boar_gpu_ctx *c, const struct boar_model *m,
			boar_error *err)
{
	int rc = 0;
	if (c->task == BOAR_TASK_LINEAR) {
		size_t n = (c->dim + 1) * sizeof(float);
		if (c->lv.adagrad) {
			/* (w, G) pairs: upload w, then interleave with G = 0. */
			float *t = NULL;
			CK(cudaMalloc(&c->w, 2 * n), "cudaMalloc(weights, AdaGrad)");
			CK(cudaMalloc(&t, n), "cudaMalloc(weights)");
			cudaError_t e = cudaMemcpy(t, m->w, n, cudaMemcpyHostToDevice);
			if (e == cudaSuccess)
				e = gpu_interleave(c->w, t, c->dim + 1, c->sm_count, 0);
			if (e == cudaSuccess)
				e = cudaDeviceSynchronize();
			cudaFree(t);
			CK(e, "uploading weights");
		} else {
			CK(cudaMalloc(&c->w, n), "cudaMalloc(weights)");
			CK(cudaMemcpy(c->w, m->w, n, cudaMemcpyHostToDevice),
			   "cudaMemcpy(weights)");
		}
	} else {
		if ((rc = upload_factors(c, &c->P, m->P, c->n_users, err)) ||
		    (rc = upload_factors(c, &c->Q, m->Q, c->n_items, err)))
			goto fail;
		if (c->has_bias) {
			size_t nu = c->n_users * sizeof(float);
			size_t ni = c->n_items * sizeof(float);
			CK(cudaMalloc(&c->bu, nu ? nu : 4), "cudaMalloc(bu)");
			CK(cudaMalloc(&c->bi, ni ? ni : 4), "cudaMalloc(bi)");
			CK(cudaMemcpy(c->bu, m->bu, nu, cudaMemcpyHostToDevice),
			   "cudaMemcpy(bu)");
			CK(cudaMemcpy(c->bi, m->bi, ni, cudaMemcpyHostToDevice),
			   "cudaMemcpy(bi)");
		}
		if (c->mv.adagrad) {
			size_t nu = c->n_users * sizeof(float);
			size_t ni = c->n_items * sizeof(float);
			CK(cudaMalloc(&c->Gu, nu ? nu : 4), "cudaMalloc(AdaGrad users)");
			CK(cudaMalloc(&c->Gi, ni ? ni : 4), "cudaMalloc(AdaGrad items)");
			CK(cudaMemset(c->Gu, 0, nu), "cudaMemset(AdaGrad)");
			CK(cudaMemset(c->Gi, 0, ni), "cudaMemset(AdaGrad)");
		}
	}
	CK(cudaMalloc(&c->loss, sizeof(double)), "cudaMalloc(loss)");
fail:
	return rc;
}

static int check_shapes(const struct boar_dataset *d, const boar_options *o,
			const struct boar_model *m, boar_error *err)
{
	if (!d || !o || !m)
		return boar_fail(err, BOAR_EINVAL, "GPU: missing dataset, options or model");
	if (d->task != m->task)
		return boar_fail(err, BOAR_EMISMATCH,
				 "GPU: dataset task %d but model task %d",
				 d->task, m->task);
	if (d->task == BOAR_TASK_LINEAR) {
		if (d->dim > m->dim)
			return boar_fail(err, BOAR_EMISMATCH,
					 "GPU: data has %llu features, model %llu",
					 (unsigned long long)d->dim,
					 (unsigned long long)m->dim);
		if (m->dim > (1ULL << 32))
			return boar_fail(err, BOAR_EINVAL,
					 "GPU: dimension %llu above 2^32",
					 (unsigned long long)m->dim);
		if (m->loss < 0 || m->loss >= BOAR_LOSS_COUNT)
			return boar_fail(err, BOAR_EINVAL, "GPU: unknown loss %d",
					 m->loss);
		if (m->n_classes ||
		    boar_loss_kind(m->loss) == BOAR_LOSS_KIND_MULTINOMIAL)
			return boar_fail(err, BOAR_EINVAL,
					 "GPU: no multiclass models yet");
		if (!m->w)
			return boar_fail(err, BOAR_EINVAL, "GPU: model has no weights");
	} else if (d->task == BOAR_TASK_MF) {
		if (d->dim > m->dim || d->n_items > m->n_items)
			return boar_fail(err, BOAR_EMISMATCH,
					 "GPU: ratings need %llu users x %llu items, model has %llu x %llu",
					 (unsigned long long)d->dim,
					 (unsigned long long)d->n_items,
					 (unsigned long long)m->dim,
					 (unsigned long long)m->n_items);
		if (m->rank < 1 || m->rank > GPU_MF_MAX_RANK)
			return boar_fail(err, BOAR_EINVAL,
					 "GPU: rank %u outside 1..%d", m->rank,
					 GPU_MF_MAX_RANK);
		if (m->has_bias && (!m->bu || !m->bi))
			return boar_fail(err, BOAR_EINVAL, "GPU: model lacks biases");
	} else {
		return boar_fail(err, BOAR_EINVAL, "GPU: unknown task %d", d->task);
	}
	return 0;
}

extern "C" int boar_gpu_open(const struct boar_dataset *train,
			     const boar_options *o,
			     const struct boar_model *init, boar_gpu_ctx **out,
			     boar_error *err)
{
	int rc, n_dev = 0;
	struct boar_gpu_ctx *c = NULL;
	size_t free_b = 0, total_b = 0;
	uint64_t forced, need, headroom;

	if ((rc = check_shapes(train, o, init, err)))
		return rc;
	{
		cudaError_t e = cudaGetDeviceCount(&n_dev);
		if (e != cudaSuccess) {
			(void)cudaGetLastError();
			return boar_fail(err, BOAR_ENODEVICE,
					 "no usable GPU: no CUDA device or driver found "
					 "(cudaGetDeviceCount: %s)",
					 cudaGetErrorString(e));
		}
	}
	if (o->gpu_id < 0 || o->gpu_id >= n_dev)
		return boar_fail(err, BOAR_ENODEVICE,
				 "GPU: device %d requested, %d present", o->gpu_id,
				 n_dev);

	c = (struct boar_gpu_ctx *)calloc(1, sizeof *c);
	if (!c)
		return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
	c->device = o->gpu_id;
	c->ds = train;
	c->task = train->task;
	c->seed = o->seed;
	c->opt = o->optimizer;
	/* BOAR_AUTO (negative) means the task's default: none for linear,
	 * 0.05 for MF (the core normally resolves it first). */
	c->l1 = o->l1 > 0 ? (float)o->l1 : 0.0f;
	c->l2 = o->l2 >= 0 ? (float)o->l2 : (c->task == BOAR_TASK_MF ? 0.05f : 0.0f);
	c->n_slots = o->streams > 0 ? o->streams : GPU_DEFAULT_STREAMS;
	/* An experiment knob: the floor of rows per block (GPU_ROWS_PER_BLOCK
	 * by default), i.e. how few rows in flight small data gets. */
	c->rows_per_block = o->gpu_rows_per_block;
	if (c->n_slots > GPU_MAX_STREAMS)
		c->n_slots = GPU_MAX_STREAMS;

	CK(cudaSetDevice(c->device), "cudaSetDevice");
	CK(cudaDeviceGetAttribute(&c->sm_count, cudaDevAttrMultiProcessorCount,
				  c->device),
	   "cudaDeviceGetAttribute");

	if (c->task == BOAR_TASK_LINEAR) {
		c->dim = init->dim;
		c->lv.loss = init->loss;
		c->lv.adagrad = boar_opt_accumulates(o->optimizer);
		c->loss_param = init->loss_param;
		c->lv.reg = c->l1 > 0 || c->l2 > 0;
		c->lv.atomic = atomic_updates(o);
	} else {
		c->n_users = init->dim;
		c->n_items = init->n_items;
		c->rank = init->rank;
		c->has_bias = init->has_bias;
		c->mu = init->has_bias ? init->mu : 0.0f;
		c->mv.adagrad = boar_opt_accumulates(o->optimizer);
		c->mv.biases = init->has_bias;
		c->mv.storage = o->mf_storage;
		c->mv.atomic = atomic_updates(o);
	}
	if ((rc = upload_model(c, init, err)))
		goto fail;

	/* Resident when the data fits beside the model with headroom. */
	CK(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
	forced = o->gpu_chunk_bytes;
	need = data_bytes(train);
	if (c->task == BOAR_TASK_LINEAR)
		need += c->dim * sizeof(float); /* counts, then reg_scale */
	headroom = total_b / 20 > GPU_MIN_HEADROOM ? total_b / 20 : GPU_MIN_HEADROOM;
	c->resident = !forced && need + headroom <= free_b;

	if (c->resident) {
		c->n_slots = 1;
		if ((rc = upload_resident(c, err)))
			goto fail;
	} else {
		uint64_t chunk = forced;
		if (!chunk) {
			uint64_t avail = free_b > need - data_bytes(train) + headroom
						 ? free_b - (need - data_bytes(train)) - headroom
						 : 0;
			chunk = avail / c->n_slots;
			if (chunk > GPU_DEFAULT_CHUNK)
				chunk = GPU_DEFAULT_CHUNK;
			if (chunk < (1ULL << 20)) {
				rc = boar_fail(err, BOAR_ENOMEM,
					       "GPU: %zu MiB free is too little to stream the data beside the model",
					       free_b >> 20);
				goto fail;
			}
		}
		if ((rc = plan_chunks(c, chunk, err)))
			goto fail;
		pin_sources(c);
		if ((rc = alloc_slots(c, err)))
			goto fail;
	}
	if (c->task == BOAR_TASK_LINEAR && (rc = prepare_counts(c, err)))
		goto fail;
	/* Plain cudaMemcpy/cudaMemset from pageable memory may return before
	 * the device is done, on the legacy stream that the (non-blocking)
	 * sweep streams do not wait for. */
	CK(cudaDeviceSynchronize(), "upload");
	/* prepare_counts left chunks in slot 0: forget them. */
	for (int s = 0; s < GPU_MAX_STREAMS; s++)
		c->slot_chunk[s] = -1;
	*out = c;
	return 0;
fail:
	boar_gpu_close(c);
	return rc;
}

/* Fisher-Yates over the chunk order, drawn from (seed, epoch), and the
 * first position of each chunk in the epoch (streamed data only). */
static void shuffle_chunks(struct boar_gpu_ctx *c, int epoch)
{
	if (c->have_order && c->order_epoch == epoch)
		return;
	uint64_t s = c->seed ^ ((uint64_t)epoch * 0x9e3779b97f4a7c15ULL) ^
		     0x5851f42d4c957f2dULL;
	for (uint64_t i = 0; i < c->n_chunks; i++)
		c->order[i] = i;
	for (uint64_t i = c->n_chunks; i > 1; i--) {
		uint64_t j = gpu_perm_splitmix64(&s) % i;
		uint64_t t = c->order[i - 1];
		c->order[i - 1] = c->order[j];
		c->order[j] = t;
	}
	c->chunk_pos[0] = 0;
	for (uint64_t i = 0; i < c->n_chunks; i++) {
		const struct gpu_chunk *ch = &c->chunks[c->order[i]];
		c->chunk_pos[i + 1] = c->chunk_pos[i] + (ch->r1 - ch->r0);
	}
	c->order_epoch = epoch;
	c->have_order = 1;
}

/* Launches the sweep over the chunk now in slot s (rows [r0, r1)): its
 * positions [q0, q1) (linear; MF sweeps the whole chunk), with `concurrent`
 * sweeps possibly running at once. */
static cudaError_t launch(struct boar_gpu_ctx *c, int s, uint64_t r0,
			  uint64_t r1, uint64_t chunk_id, int epoch, float eta,
			  uint64_t q0, uint64_t q1, uint32_t concurrent)
{
	const struct boar_dataset *d = c->ds;
	struct gpu_slot *sl = &c->slot[s];
	if (c->task == BOAR_TASK_LINEAR) {
		struct gpu_linear_args a;
		memset(&a, 0, sizeof a);
		a.row_ptr = sl->row_ptr;
		a.nz_base = d->row_ptr[r0];
		a.idx = sl->idx;
		a.val = sl->val;
		a.label = sl->label;
		gpu_perm_make(&a.perm, r1 - r0, c->seed, (uint64_t)epoch, chunk_id);
		a.p_begin = q0;
		a.p_end = q1;
		a.w = c->w;
		a.G = c->G;
		a.reg_scale = c->scale;
		a.dim = c->dim;
		a.eta = eta;
		a.l1 = c->l1;
		a.l2 = c->l2;
		a.opt = c->opt;
		a.loss_param = c->loss_param;
		a.loss_sum = c->loss;
		a.hot_ids = c->hot;
		a.n_hot = c->n_hot;
		a.rows_per_block = c->rows_per_block;
		a.concurrent = concurrent;
		return gpu_linear_launch(&c->lv, &a, c->sm_count, sl->stream);
	}
	struct gpu_mf_args a;
	memset(&a, 0, sizeof a);
	a.user = sl->user;
	a.item = sl->item;
	a.rating = sl->label;
	gpu_perm_make(&a.perm, r1 - r0, c->seed, (uint64_t)epoch, chunk_id);
	a.P = c->P;
	a.Q = c->Q;
	a.bu = c->bu;
	a.bi = c->bi;
	a.Gu = c->Gu;
	a.Gi = c->Gi;
	a.rank = c->rank;
	a.mu = c->mu;
	a.eta = eta;
	a.l2 = c->l2;
	a.opt = c->opt;
	a.loss_sum = c->loss;
	a.rows_per_block = c->rows_per_block;
	uint64_t rs = c->seed ^ ((uint64_t)epoch << 40) ^ (chunk_id << 20);
	a.round_seed = (uint32_t)gpu_perm_splitmix64(&rs);
	return gpu_mf_launch(&c->mv, &a, c->sm_count, sl->stream);
}

extern "C" int boar_gpu_epoch(boar_gpu_ctx *c, int epoch, double eta,
			      double *loss_sum, boar_error *err)
{
	int rc = 0;
	double loss = 0.0;
	if (!c || !loss_sum)
		return boar_fail(err, BOAR_EINVAL, "GPU: no context");
	if (c->ds->n_rows == 0)
		return 0;
	CK(cudaSetDevice(c->device), "cudaSetDevice");
	/* On slot 0's stream and waited for: the sweep streams do not order
	 * behind the legacy default stream. */
	CK(cudaMemsetAsync(c->loss, 0, sizeof(double), c->slot[0].stream),
	   "cudaMemset(loss)");
	CK(cudaStreamSynchronize(c->slot[0].stream), "cudaMemset(loss)");
	if (c->resident) {
		CK(launch(c, 0, 0, c->ds->n_rows, 0, epoch, (float)eta, 0,
			  c->ds->n_rows, 1),
		   "sweep kernel launch");
	} else {
		uint32_t conc = (uint32_t)((uint64_t)c->n_slots < c->n_chunks
						   ? (uint64_t)c->n_slots
						   : c->n_chunks);
		shuffle_chunks(c, epoch);
		/* Every slot is overwritten below. */
		for (int s = 0; s < GPU_MAX_STREAMS; s++)
			c->slot_chunk[s] = -1;
		for (uint64_t i = 0; i < c->n_chunks; i++) {
			int s = (int)(i % (uint64_t)c->n_slots);
			uint64_t k = c->order[i];
			if ((rc = upload_chunk(c, s, k, err)))
				goto fail;
			const struct gpu_chunk *ch = &c->chunks[k];
			CK(launch(c, s, ch->r0, ch->r1, k, epoch, (float)eta, 0,
				  ch->r1 - ch->r0, conc),
			   "sweep kernel launch");
		}
	}
	for (int s = 0; s < c->n_slots; s++)
		CK(cudaStreamSynchronize(c->slot[s].stream), "sweep");
	CK(cudaMemcpy(&loss, c->loss, sizeof loss, cudaMemcpyDeviceToHost),
	   "cudaMemcpy(loss)");
	*loss_sum += loss;
fail:
	return rc;
}

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
		shuffle_chunks(c, epoch);
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
	int rc = upload_chunk(c, s, k, err);
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
	double loss = 0.0;
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
	CK(cudaSetDevice(c->device), "cudaSetDevice");
	CK(cudaMemsetAsync(c->loss, 0, sizeof(double), c->slot[0].stream),
	   "cudaMemset(loss)");
	CK(cudaStreamSynchronize(c->slot[0].stream), "cudaMemset(loss)");
	if (c->resident) {
		CK(launch(c, 0, 0, c->ds->n_rows, 0, epoch, (float)eta, begin,
			  end, 1),
		   "sweep kernel launch");
	} else {
		shuffle_chunks(c, epoch);
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
			CK(launch(c, s, ch->r0, ch->r1, k, epoch, (float)eta, q0,
				  q1, conc),
			   "sweep kernel launch");
		}
	}
	for (int s = 0; s < c->n_slots; s++)
		CK(cudaStreamSynchronize(c->slot[s].stream), "sweep");
	CK(cudaMemcpy(&loss, c->loss, sizeof loss, cudaMemcpyDeviceToHost),
	   "cudaMemcpy(loss)");
	*loss_sum += loss;
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
	for (uint64_t i = 0; i < n; i++)
		if (keys[i] > c->dim)
			return boar_fail(err, BOAR_EINVAL,
					 "GPU: key %u above the model's %llu",
					 keys[i], (unsigned long long)c->dim);
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

extern "C" int boar_gpu_set_weights(boar_gpu_ctx *c, const uint32_t *keys,
				    const float *vals, uint64_t n,
				    boar_error *err)
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
		CK(cudaMemcpyAsync(c->dval, vals + lo, m * sizeof(float),
				   cudaMemcpyHostToDevice, st),
		   "cudaMemcpy(values)");
		CK(gpu_scatter_weights(c->w, stride, c->dkey, c->dval, m,
				       c->sm_count, st),
		   "scatter kernel launch");
	}
	CK(cudaStreamSynchronize(st), "setting weights");
fail:
	return rc;
}

extern "C" int boar_gpu_get_weights(boar_gpu_ctx *c, const uint32_t *keys,
				    float *vals, uint64_t n, boar_error *err)
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
		CK(gpu_gather_weights(c->w, stride, c->dkey, c->dval, m,
				      c->sm_count, st),
		   "gather kernel launch");
		CK(cudaMemcpyAsync(vals + lo, c->dval, m * sizeof(float),
				   cudaMemcpyDeviceToHost, st),
		   "cudaMemcpy(values)");
		/* A copy into pageable memory may return early. */
		CK(cudaStreamSynchronize(st), "getting weights");
	}
fail:
	return rc;
}

extern "C" int boar_gpu_download(boar_gpu_ctx *c, struct boar_model *m,
				 boar_error *err)
{
	int rc = 0;
	if (!c || !m)
		return boar_fail(err, BOAR_EINVAL, "GPU: no context or model");
	if (m->task != c->task ||
	    (c->task == BOAR_TASK_LINEAR && (m->dim != c->dim || !m->w)) ||
	    (c->task == BOAR_TASK_MF &&
	     (m->dim != c->n_users || m->n_items != c->n_items ||
	      m->rank != c->rank || (c->has_bias && (!m->bu || !m->bi)))))
		return boar_fail(err, BOAR_EMISMATCH,
				 "GPU: model shape differs from the one opened");
	CK(cudaSetDevice(c->device), "cudaSetDevice");
	if (c->task == BOAR_TASK_LINEAR && c->lv.adagrad) {
		/* Separate w from the (w, G) pairs on the device first. */
		float *t = NULL;
		size_t n = (c->dim + 1) * sizeof(float);
		CK(cudaMalloc(&t, n), "cudaMalloc(weights)");
		cudaError_t e = gpu_deinterleave(t, c->w, c->dim + 1, c->sm_count, 0);
		if (e == cudaSuccess)
			e = cudaMemcpy(m->w, t, n, cudaMemcpyDeviceToHost);
		cudaFree(t);
		CK(e, "downloading weights");
	} else if (c->task == BOAR_TASK_LINEAR) {
		CK(cudaMemcpy(m->w, c->w, (c->dim + 1) * sizeof(float),
			      cudaMemcpyDeviceToHost),
		   "cudaMemcpy(weights)");
	} else {
		if ((rc = download_factors(c, m->P, c->P, c->n_users, err)) ||
		    (rc = download_factors(c, m->Q, c->Q, c->n_items, err)))
			goto fail;
		if (c->has_bias) {
			CK(cudaMemcpy(m->bu, c->bu, c->n_users * sizeof(float),
				      cudaMemcpyDeviceToHost),
			   "cudaMemcpy(bu)");
			CK(cudaMemcpy(m->bi, c->bi, c->n_items * sizeof(float),
				      cudaMemcpyDeviceToHost),
			   "cudaMemcpy(bi)");
			m->mu = c->mu;
		}
	}
fail:
	return rc;
}

/* Starts the CUDA runtime and device's primary context (a few tenths of
 * a second), so that a later boar_gpu_open finds them ready. Errors are
 * left for boar_gpu_open to report. */
extern "C" void boar_gpu_warm(int device)
{
	if (cudaSetDevice(device) == cudaSuccess)
		cudaFree(0);
	(void)cudaGetLastError();
}

extern "C" void boar_gpu_close(boar_gpu_ctx *c)
{
	if (!c)
		return;
	/* Errors are ignored here: after a failed kernel the context may be
	 * unusable, and freeing must still not crash. */
	cudaSetDevice(c->device);
	for (int s = 0; s < GPU_MAX_STREAMS; s++) {
		struct gpu_slot *sl = &c->slot[s];
		if (sl->stream)
			cudaStreamSynchronize(sl->stream);
		cudaFree(sl->row_ptr);
		cudaFree(sl->idx);
		cudaFree(sl->val);
		cudaFree(sl->label);
		cudaFree(sl->user);
		cudaFree(sl->item);
		if (sl->stage)
			cudaFreeHost(sl->stage);
		if (sl->staged)
			cudaEventDestroy(sl->staged);
		if (sl->stream)
			cudaStreamDestroy(sl->stream);
	}
	unpin_all(c);
	cudaFree(c->w);
	cudaFree(c->G);
	cudaFree(c->scale);
	cudaFree(c->hot);
	cudaFree(c->P);
	cudaFree(c->Q);
	cudaFree(c->bu);
	cudaFree(c->bi);
	cudaFree(c->Gu);
	cudaFree(c->Gi);
	cudaFree(c->loss);
	cudaFree(c->dkey);
	cudaFree(c->dval);
	(void)cudaGetLastError();
	free(c->chunks);
	free(c->order);
	free(c->chunk_pos);
	free(c->host_order);
	free(c);
}
