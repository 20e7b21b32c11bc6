/* gpu_internal.h - what the CUDA engine's translation units share (C++ only).
 *
 * gpu_engine.cu owns the context (device buffers, streams, chunk plan) and
 * drives an epoch; gpu_linear.cu (binary and regression), gpu_multiclass.cu
 * (K classes; the two share gpu_sweep.h) and gpu_mf.cu hold the sweep
 * kernels and a host launcher each; gpu_features.cu counts features, picks the hot ones
 * and converts the AdaGrad layout; gpu_perm.h draws the per-epoch row order. The kernels
 * see one chunk at a time: for data resident on the card the whole training
 * set is one chunk that never moves, for streamed data a chunk is a slice of
 * rows (or ratings) that was just copied into one of the stream slots.
 *
 * Nothing here is visible outside gpu/: the core sees gpu_engine.h only.
 */
#ifndef BOAR_GPU_INTERNAL_H
#define BOAR_GPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

extern "C" {
#include "base/error.h"
}

/* Keys of the Feistel permutation that orders one chunk in one epoch. */
struct gpu_perm_key {
	uint64_t n;       /* domain: positions 0..n-1 */
	uint32_t half;    /* bits per Feistel half; 2*half >= log2(n) */
	uint32_t k[4];    /* round keys */
};

/* One linear sweep launch: a chunk of CSR rows and the model. */
struct gpu_linear_args {
	const uint64_t *row_ptr; /* n_rows + 1 absolute offsets */
	uint64_t nz_base;        /* row_ptr[0]: subtract to index idx/val */
	const uint32_t *idx;
	const float *val;
	const float *label;
	const float *row_weight; /* each row's loss scale, or NULL (all 1) */
	struct gpu_perm_key perm; /* the chunk's order: perm.n is its rows */
	/* Positions [p_begin, p_end) of that order are swept: [0, perm.n)
	 * for a whole epoch, a slice for boar_gpu_sweep. */
	uint64_t p_begin, p_end;
	float *w;                /* dim + 1, bias at w[dim]; K classes:
				    (dim + 1) K, feature-major as the host
				    model's; with AdaGrad twice that: (w, G)
				    pairs, see load_wg */
	float *G;                /* unused (NULL) */
	const float *reg_scale;  /* n_rows_total / count_j, or NULL */
	uint64_t dim;
	float eta, l1, l2;
	int opt;                 /* BOAR_OPT_*: the rate (math/step.h) */
	int loss;                /* BOAR_LOSS_* (read by the multiclass
				    sweep; the binary one is built per loss) */
	float loss_param;        /* the loss's parameter (Huber's delta) */
	/* K-class models: the K class labels, ascending (a row's class is
	 * its label's index), and K; NULL and 0 for a binary model */
	const float *classes;
	uint32_t n_classes;
	double *loss_sum;        /* progressive loss, added once per block */
	/* Hot coordinates replicated per block (gpu_linear.cu): their ids and
	 * how many (0..GPU_HOT_MAX); the bias always is. */
	const uint32_t *hot_ids;
	uint32_t n_hot;
	/* Sweeps that may run at once (streams): the replicas of all their
	 * blocks are averaged. */
	uint32_t concurrent;
	uint32_t rows_per_block; /* GPU_ROWS_PER_BLOCK unless overridden */
};

/* Most coordinates a block replicates in shared memory. */
#define GPU_HOT_MAX 1024
/* Fewest rows (ratings) a block sweeps per launch: caps the rows in flight
 * on small data, where a full grid would make every coordinate hot. */
#define GPU_ROWS_PER_BLOCK 16384

/* One matrix-factorization sweep launch: a chunk of ratings. */
struct gpu_mf_args {
	const uint32_t *user, *item;
	const float *rating;
	struct gpu_perm_key perm;
	void *P, *Q;            /* row-major, rank values per row, stored as
				   the variant's `storage` says */
	float *bu, *bi;         /* biases or NULL */
	float *Gu, *Gi;         /* AdaGrad per-row accumulators or NULL */
	uint32_t rank;
	float mu, eta, l2;
	int opt;                /* BOAR_OPT_*: the rate (math/step.h) */
	int mf_loss;            /* enum boar_mf_loss (math/mf_step.h) */
	double *loss_sum;       /* sum of the ratings' losses */
	uint32_t rows_per_block; /* GPU_ROWS_PER_BLOCK unless overridden */
	uint32_t round_seed;    /* f16/bf16: this launch's stochastic rounding */
};

/* Compile-time variants of the linear sweep. */
struct gpu_linear_variant {
	int loss;      /* BOAR_LOSS_* (multinomial only with classes) */
	uint32_t classes; /* K of a multiclass model (gpu_multiclass.cu), or 0 */
	int adagrad;   /* the optimizer keeps an accumulator (AdaGrad) */
	int reg;       /* l1 or l2 in use: read reg_scale */
	int atomic;    /* 1: atomicAdd deltas, 0: plain stores (racy) */
};

struct gpu_mf_variant {
	int adagrad;
	int biases;
	int atomic;
	int storage;  /* BOAR_STORAGE_*: how P and Q are kept on the device */
};

/* Bytes of one stored factor. */
static inline size_t gpu_mf_value_bytes(int storage)
{
	return storage == BOAR_STORAGE_F32 ? 4 : 2;
}

/* Between the host's float factors (staged on the device as `f`) and the
 * stored ones `s`: n values, round to nearest going in. */
cudaError_t gpu_mf_factors_in(void *s, const float *f, uint64_t n,
			      int storage, int sm_count, cudaStream_t stream);
cudaError_t gpu_mf_factors_out(float *f, const void *s, uint64_t n,
			       int storage, int sm_count, cudaStream_t stream);

/* Launchers: pick the kernel instance, launch it on `stream` with a grid
 * that fills the device, and report launch errors. Return a cudaError_t. */
cudaError_t gpu_linear_launch(const struct gpu_linear_variant *v,
			      const struct gpu_linear_args *a, int sm_count,
			      cudaStream_t stream);
cudaError_t gpu_mf_launch(const struct gpu_mf_variant *v,
			  const struct gpu_mf_args *a, int sm_count,
			  cudaStream_t stream);
/* Rank the MF kernels can hold in registers (a multiple of 32 up to this). */
#define GPU_MF_MAX_RANK 1024

/* Rows a linear sweep of n rows keeps in flight (one per warp). */
uint64_t gpu_linear_rows_in_flight(const struct gpu_linear_variant *v,
				   uint64_t n, uint32_t rows_per_block,
				   int sm_count);
/* The same for K-class models (v->classes > 0), which gpu_linear_launch
 * and gpu_linear_rows_in_flight hand to gpu_multiclass.cu. */
cudaError_t gpu_multiclass_launch(const struct gpu_linear_variant *v,
				  const struct gpu_linear_args *a,
				  int sm_count, cudaStream_t stream);
uint64_t gpu_multiclass_rows_in_flight(const struct gpu_linear_variant *v,
				       uint64_t n, uint32_t rows_per_block,
				       int sm_count);
/* Most hot features a K-class sweep replicates: K coordinates each, in
 * a shared-memory budget (gpu_multiclass.cu). */
uint32_t gpu_multiclass_hot_max(uint32_t K);

/* Picks the hot features: those whose count reaches `thr`, the most
 * frequent first, at most max_hot (<= GPU_HOT_MAX). Writes their ids to
 * hot (device, GPU_HOT_MAX entries) and their number to *n_hot.
 * Synchronizes. */
cudaError_t gpu_pick_hot(const uint32_t *count, uint64_t dim, uint32_t thr,
			 uint32_t max_hot, uint32_t *hot, uint32_t *n_hot,
			 int sm_count, cudaStream_t stream);

/* AdaGrad layout conversions on `stream`: wg[2i] = w[i], wg[2i+1] = 0 for
 * i < n; and back, w[i] = wg[2i]. */
cudaError_t gpu_interleave(float *wg, const float *w, uint64_t n, int sm_count,
			   cudaStream_t stream);
cudaError_t gpu_deinterleave(float *w, const float *wg, uint64_t n,
			     int sm_count, cudaStream_t stream);

/* Weights by key, for boar_gpu_set_weights/get_weights: w[stride * key[i]]
 * = val[i] (scatter) or val[i] = w[stride * key[i]] (gather) for i < n,
 * where stride is 2 in the AdaGrad (w, G) layout and 1 otherwise. Keys are
 * checked by the caller (at most dim). */
cudaError_t gpu_scatter_weights(float *w, uint32_t stride, const uint32_t *key,
				const float *val, uint64_t n, int sm_count,
				cudaStream_t stream);
cudaError_t gpu_gather_weights(const float *w, uint32_t stride,
			       const uint32_t *key, float *val, uint64_t n,
			       int sm_count, cudaStream_t stream);

/* Feature counts of a chunk: count[idx[j]] += 1 for j < nnz (uint32). */
cudaError_t gpu_count_features(const uint32_t *idx, uint64_t nnz,
			       uint32_t *count, int sm_count,
			       cudaStream_t stream);
/* In place: count[j] (uint32) becomes reg_scale[j] = n_rows / count[j]
 * (float, 0 where count is 0). */
cudaError_t gpu_counts_to_scale(void *count_then_scale, uint64_t dim,
				uint64_t n_rows, int sm_count,
				cudaStream_t stream);

/* Vector atomic adds to global memory: one float2/float4 atomicAdd on
 * sm_90 (Hopper), component by component on older chips. */
static __device__ __forceinline__ void gpu_add2(float *p, float x, float y)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	atomicAdd((float2 *)p, make_float2(x, y));
#else
	atomicAdd(p, x);
	atomicAdd(p + 1, y);
#endif
}

static __device__ __forceinline__ void gpu_add4(float *p, float4 v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	atomicAdd((float4 *)p, v);
#else
	atomicAdd(p, v.x);
	atomicAdd(p + 1, v.y);
	atomicAdd(p + 2, v.z);
	atomicAdd(p + 3, v.w);
#endif
}

/* Draws the permutation keys for (seed, epoch, chunk) over n positions. */
void gpu_perm_make(struct gpu_perm_key *key, uint64_t n, uint64_t seed,
		   uint64_t epoch, uint64_t chunk);

/* Fills err from a CUDA failure during `what`; returns the BOAR_E* code:
 * ENOMEM for allocation failures, ENODEVICE when no usable device or
 * driver is present, EGPU otherwise. */
int gpu_fail(boar_error *err, cudaError_t e, const char *what);

#endif
