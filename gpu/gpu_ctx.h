/* gpu_ctx.h - the GPU engine's context, shared by its parts (C++ for
 * nvcc, inside the plugin only):
 *   gpu_engine.cu  opening, epochs, the model's way onto and off the card
 *   gpu_check.cu   what it accepts: devices, data, options, model
 *   gpu_data.cu    the training set on the card: chunks, pinning, slots
 *   gpu_slices.cu  the epoch's order on the host, slices of an epoch, and
 *                  weights by key (for cluster workers)
 *   gpu_multi*.cu  several GPUs (--gpus N, gpu_multi.h)
 */
#ifndef BOAR_GPU_CTX_H
#define BOAR_GPU_CTX_H

#include <stdint.h>

#include "gpu_internal.h"

extern "C" {
#include "data/dataset.h"
#include "model/model.h"
#include "gpu/gpu_engine.h"
}

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
	float *weight;     /* the rows' scales (row_weight), or NULL */
	/* pinned staging (only when the caller's arrays could not be pinned) */
	unsigned char *stage;
	size_t stage_len;
};

struct gpu_multi_mf;

struct boar_gpu_ctx {
	/* --gpus N > 1 (MF): the context only hands its calls to this
	 * (gpu_multi.h), and none of the members below is used */
	struct gpu_multi_mf *multi_mf;

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
	uint32_t width;      /* weights per feature: K classes, or 1 */
	float *classes;      /* device copy of the K class labels, or NULL */
	float *w, *G, *scale;
	uint32_t *hot;       /* hot feature ids (GPU_HOT_MAX) */
	uint32_t n_hot;
	struct gpu_linear_variant lv;
	/* MF model */
	uint64_t n_users, n_items;
	uint32_t rank;
	int has_bias;
	float mu;
	int mf_loss;      /* enum boar_mf_loss (the model's) */
	void *P, *Q; /* as mv.storage says (gpu_mf.cu) */
	float *bu, *bi, *Gu, *Gi;
	struct gpu_mf_variant mv;

	double *loss; /* device accumulator of the epoch's loss */

	/* data */
	/* Each row's loss scale (math/row_weight.h), n_rows in pinned host
	 * memory, or NULL when the run weights no rows: copied with the
	 * labels, resident or chunk by chunk. */
	float *row_weight;
	const void *preload; /* boar_options.gpu_preload (gpu_preload.h) */
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

/* gpu_data.cu */
/* Bytes of d's arrays on the card (with a scale per row if weighted). */
uint64_t gpu_data_bytes(const struct boar_dataset *d, int weighted);
/* c->row_weight from d's instance weights and o's class weights, when
 * the run has either. */
int gpu_row_weights(struct boar_gpu_ctx *c, const boar_options *o,
		    boar_error *err);
/* Cuts the data into chunks of about `bytes` (at least one row each). */
int gpu_plan_chunks(struct boar_gpu_ctx *c, uint64_t bytes, boar_error *err);
/* Pins the source arrays, or falls back to staging buffers; undone by
 * gpu_unpin_all. */
void gpu_pin_sources(struct boar_gpu_ctx *c);
void gpu_unpin_all(struct boar_gpu_ctx *c);
/* The streams' slots: device buffers for the largest chunk each. */
int gpu_alloc_slots(struct boar_gpu_ctx *c, boar_error *err);
/* Queues the copy of chunk k into slot s. */
int gpu_upload_chunk(struct boar_gpu_ctx *c, int s, uint64_t k,
		     boar_error *err);
/* Device copy of the whole training set, kept for the run. */
int gpu_upload_resident(struct boar_gpu_ctx *c, boar_error *err);

/* gpu_check.cu */
/* 0 when devices first .. first + n - 1 exist; BOAR_ENODEVICE naming the
 * devices asked for and present otherwise. */
int gpu_devices_check(int first, int n, boar_error *err);
/* The data, options and model fit the GPU engine (task, shapes, rank,
 * classes). */
int gpu_check_shapes(const struct boar_dataset *d, const boar_options *o,
		     const struct boar_model *m, boar_error *err);

/* gpu_engine.cu */
/* A sweep's start (the device, the loss accumulator zeroed) and end (all
 * streams done, the loss added to *loss_sum). */
int gpu_loss_reset(struct boar_gpu_ctx *c, boar_error *err);
int gpu_loss_collect(struct boar_gpu_ctx *c, double *loss_sum,
		     boar_error *err);
/* n factor values between the host's fp32 and the device's storage
 * (dst / src on the current device, already allocated). Synchronous. */
int gpu_factors_put(void *dst, const float *src, uint64_t n, int storage,
		    int sm_count, boar_error *err);
int gpu_factors_get(float *dst, const void *src, uint64_t n, int storage,
		    int sm_count, boar_error *err);
/* The chunk order of `epoch` and each chunk's first position in it. */
void gpu_shuffle_chunks(struct boar_gpu_ctx *c, int epoch);
/* An MF sweep over n ratings on the device (user, item, rating) with c's
 * factor rows, rules and loss accumulator, in the order drawn from (seed,
 * epoch, chunk_id). gpu_multi_mf.cu keeps such a context per GPU. */
cudaError_t gpu_mf_sweep(struct boar_gpu_ctx *c, const uint32_t *user,
			 const uint32_t *item, const float *rating, uint64_t n,
			 uint64_t chunk_id, int epoch, float eta,
			 cudaStream_t stream);
/* Launches the sweep over the chunk in slot s (rows [r0, r1)), positions
 * [q0, q1), with `concurrent` sweeps possibly running at once. */
cudaError_t gpu_launch(struct boar_gpu_ctx *c, int s, uint64_t r0,
		       uint64_t r1, uint64_t chunk_id, int epoch, float eta,
		       uint64_t q0, uint64_t q1, uint32_t concurrent);

#endif
