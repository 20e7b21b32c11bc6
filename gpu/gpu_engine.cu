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
 * boar_options.gpu_chunk_bytes (the CLI's BOAR_GPU_CHUNK_BYTES) forces
 * streaming with chunks of about that many bytes, so tests exercise the
 * streaming path on small data.
 *
 * This file opens the context, runs epochs and moves the model; the data's
 * placement is gpu_data.cu, slices and weights by key gpu_slices.cu, the
 * context they share gpu_ctx.h.
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

#include "gpu_ctx.h"
#include "gpu_multi.h"
#include "gpu_preload.h"

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
			if ((rc = gpu_upload_chunk(c, 0, k, err)))
				goto fail;
			const struct gpu_chunk *ch = &c->chunks[k];
			CK(gpu_count_features(c->slot[0].idx,
					      d->row_ptr[ch->r1] - d->row_ptr[ch->r0],
					      (uint32_t *)c->scale, c->sm_count,
					      s0),
			   "count kernel launch");
		}
	}
	CK(gpu_pick_hot((const uint32_t *)c->scale, c->dim, thr,
			c->lv.classes ? gpu_multiclass_hot_max(c->lv.classes)
				      : GPU_HOT_MAX,
			c->hot, &c->n_hot, c->sm_count, s0),
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

/* n factor values to the device (dst, allocated) as the storage keeps
 * them: fp32 as they are, f16/bf16 staged as fp32 and converted there.
 * Synchronous. */
int gpu_factors_put(void *dst, const float *src, uint64_t n, int storage,
		    int sm_count, boar_error *err)
{
	int rc = 0;
	float *t = NULL;
	if (storage == BOAR_STORAGE_F32) {
		CK(cudaMemcpy(dst, src, n * sizeof(float),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(factors)");
		return 0;
	}
	CK(cudaMalloc(&t, n ? n * sizeof(float) : 4), "cudaMalloc(staging)");
	CK(cudaMemcpy(t, src, n * sizeof(float), cudaMemcpyHostToDevice),
	   "cudaMemcpy(factors)");
	CK(gpu_mf_factors_in(dst, t, n, storage, sm_count, 0),
	   "converting factors");
	CK(cudaDeviceSynchronize(), "converting factors");
fail:
	cudaFree(t);
	return rc;
}

/* n stored factor values back to the host as fp32. Synchronous. */
int gpu_factors_get(float *dst, const void *src, uint64_t n, int storage,
		    int sm_count, boar_error *err)
{
	int rc = 0;
	float *t = NULL;
	if (storage == BOAR_STORAGE_F32) {
		CK(cudaMemcpy(dst, src, n * sizeof(float),
			      cudaMemcpyDeviceToHost),
		   "cudaMemcpy(factors)");
		return 0;
	}
	CK(cudaMalloc(&t, n ? n * sizeof(float) : 4), "cudaMalloc(staging)");
	CK(gpu_mf_factors_out(t, src, n, storage, sm_count, 0),
	   "converting factors");
	CK(cudaMemcpy(dst, t, n * sizeof(float), cudaMemcpyDeviceToHost),
	   "cudaMemcpy(factors)");
fail:
	cudaFree(t);
	return rc;
}

static int upload_factors(struct boar_gpu_ctx *c, void **dst, const float *src,
			  uint64_t rows, boar_error *err)
{
	int rc = 0;
	uint64_t n = rows * c->rank;
	CK(cudaMalloc(dst, n ? n * gpu_mf_value_bytes(c->mv.storage) : 4),
	   "cudaMalloc(factors)");
	return gpu_factors_put(*dst, src, n, c->mv.storage, c->sm_count, err);
fail:
	return rc;
}

static int upload_model(struct boar_gpu_ctx *c, const struct boar_model *m,
			boar_error *err)
{
	int rc = 0;
	if (c->task == BOAR_TASK_LINEAR) {
		uint64_t coords = (c->dim + 1) * c->width;
		size_t n = coords * sizeof(float);
		if (c->width > 1) {
			size_t nc = c->width * sizeof(float);
			CK(cudaMalloc(&c->classes, nc), "cudaMalloc(classes)");
			CK(cudaMemcpy(c->classes, m->classes, nc,
				      cudaMemcpyHostToDevice),
			   "cudaMemcpy(classes)");
		}
		if (c->lv.adagrad) {
			/* (w, G) pairs: upload w, then interleave with G = 0. */
			float *t = NULL;
			CK(cudaMalloc(&c->w, 2 * n), "cudaMalloc(weights, AdaGrad)");
			CK(cudaMalloc(&t, n), "cudaMalloc(weights)");
			cudaError_t e = cudaMemcpy(t, m->w, n, cudaMemcpyHostToDevice);
			if (e == cudaSuccess)
				e = gpu_interleave(c->w, t, coords, c->sm_count, 0);
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

/* The training set onto the card: resident when it fits beside the model
 * with headroom, else streamed in chunks through the streams' slots. */
static int place_data(struct boar_gpu_ctx *c, const boar_options *o,
		      boar_error *err)
{
	const struct boar_dataset *train = c->ds;
	size_t free_b = 0, total_b = 0;
	uint64_t forced, need, headroom;
	const uint64_t data_b = gpu_data_bytes(train, c->row_weight != NULL);
	int rc = 0;
	CK(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
	forced = o->gpu_chunk_bytes;
	need = data_b;
	if (c->task == BOAR_TASK_LINEAR)
		need += c->dim * sizeof(float); /* counts, then reg_scale */
	headroom = total_b / 20 > GPU_MIN_HEADROOM ? total_b / 20 : GPU_MIN_HEADROOM;
	/* rows copied while they were parsed already take their room */
	free_b += gpu_preload_bytes(c->preload, train, c->device);
	c->resident = !forced && need + headroom <= free_b;

	if (c->resident) {
		c->n_slots = 1;
		if ((rc = gpu_upload_resident(c, err)))
			goto fail;
	} else {
		uint64_t chunk = forced;
		if (!chunk) {
			uint64_t avail = free_b > need - data_b + headroom
						 ? free_b - (need - data_b) - headroom
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
		if ((rc = gpu_plan_chunks(c, chunk, err)))
			goto fail;
		gpu_pin_sources(c);
		if ((rc = gpu_alloc_slots(c, err)))
			goto fail;
	}
fail:
	return rc;
}

extern "C" int boar_gpu_open(const struct boar_dataset *train,
			     const boar_options *o,
			     const struct boar_model *init, boar_gpu_ctx **out,
			     boar_error *err)
{
	int rc;
	struct boar_gpu_ctx *c = NULL;

	if ((rc = gpu_check_shapes(train, o, init, err)))
		return rc;
	if (o->n_gpus > 1)
		return gpu_multi_open(train, o, init, out, err);
	if ((rc = gpu_devices_check(o->gpu_id, 1, err)))
		return rc;

	c = (struct boar_gpu_ctx *)calloc(1, sizeof *c);
	if (!c)
		return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
	c->device = o->gpu_id;
	c->ds = train;
	c->preload = o->gpu_preload;
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
		c->width = init->n_classes ? init->n_classes : 1;
		c->lv.classes = init->n_classes;
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
		c->mf_loss = init->mf_loss;
		c->mv.adagrad = boar_opt_accumulates(o->optimizer);
		c->mv.biases = init->has_bias;
		c->mv.storage = o->mf_storage;
		c->mv.atomic = atomic_updates(o);
	}
	if ((rc = upload_model(c, init, err)) ||
	    (rc = gpu_row_weights(c, o, err)))
		goto fail;

	if ((rc = place_data(c, o, err)))
		goto fail;
	if (c->task == BOAR_TASK_LINEAR && (rc = prepare_counts(c, err)))
		goto fail;
	/* Plain cudaMemcpy/cudaMemset from pageable memory may return before
	 * the device is done, on the legacy stream that the (non-blocking)
	 * sweep streams do not wait for. */
	CK(cudaDeviceSynchronize(), "upload");
	/* The MF kernel loads here (a sweep of no ratings), not in the first
	 * epoch: the epochs' times are the sweeps'. */
	if (c->task == BOAR_TASK_MF) {
		CK(gpu_mf_sweep(c, c->slot[0].user, c->slot[0].item,
				c->slot[0].label, 0, 0, 0, 0.0f,
				c->slot[0].stream),
		   "sweep kernel launch");
		CK(cudaStreamSynchronize(c->slot[0].stream), "warming up");
	}
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
void gpu_shuffle_chunks(struct boar_gpu_ctx *c, int epoch)
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
cudaError_t gpu_launch(struct boar_gpu_ctx *c, int s, uint64_t r0,
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
		a.row_weight = sl->weight;
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
		a.loss = c->lv.loss;
		a.loss_param = c->loss_param;
		a.classes = c->classes;
		a.n_classes = c->lv.classes;
		a.loss_sum = c->loss;
		a.hot_ids = c->hot;
		a.n_hot = c->n_hot;
		a.rows_per_block = c->rows_per_block;
		a.concurrent = concurrent;
		return gpu_linear_launch(&c->lv, &a, c->sm_count, sl->stream);
	}
	return gpu_mf_sweep(c, sl->user, sl->item, sl->label, r1 - r0, chunk_id,
			    epoch, eta, sl->stream);
}

cudaError_t gpu_mf_sweep(struct boar_gpu_ctx *c, const uint32_t *user,
			 const uint32_t *item, const float *rating, uint64_t n,
			 uint64_t chunk_id, int epoch, float eta,
			 cudaStream_t stream)
{
	struct gpu_mf_args a;
	memset(&a, 0, sizeof a);
	a.user = user;
	a.item = item;
	a.rating = rating;
	gpu_perm_make(&a.perm, n, c->seed, (uint64_t)epoch, chunk_id);
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
	a.mf_loss = c->mf_loss;
	a.loss_sum = c->loss;
	a.rows_per_block = c->rows_per_block;
	uint64_t rs = c->seed ^ ((uint64_t)epoch << 40) ^ (chunk_id << 20);
	a.round_seed = (uint32_t)gpu_perm_splitmix64(&rs);
	return gpu_mf_launch(&c->mv, &a, c->sm_count, stream);
}

/* The start of a sweep (an epoch or a slice): the device and a zero loss
 * accumulator, on slot 0's stream and waited for (the sweep streams do
 * not order behind the legacy default stream). */
int gpu_loss_reset(struct boar_gpu_ctx *c, boar_error *err)
{
	int rc = 0;
	CK(cudaSetDevice(c->device), "cudaSetDevice");
	CK(cudaMemsetAsync(c->loss, 0, sizeof(double), c->slot[0].stream),
	   "cudaMemset(loss)");
	CK(cudaStreamSynchronize(c->slot[0].stream), "cudaMemset(loss)");
fail:
	return rc;
}

/* Its end: waits for every stream and adds the sweep's loss. */
int gpu_loss_collect(struct boar_gpu_ctx *c, double *loss_sum,
		     boar_error *err)
{
	int rc = 0;
	double loss = 0.0;
	for (int s = 0; s < c->n_slots; s++)
		CK(cudaStreamSynchronize(c->slot[s].stream), "sweep");
	CK(cudaMemcpy(&loss, c->loss, sizeof loss, cudaMemcpyDeviceToHost),
	   "cudaMemcpy(loss)");
	*loss_sum += loss;
fail:
	return rc;
}

extern "C" int boar_gpu_epoch(boar_gpu_ctx *c, int epoch, double eta,
			      double *loss_sum, boar_error *err)
{
	int rc = 0;
	if (!c || !loss_sum)
		return boar_fail(err, BOAR_EINVAL, "GPU: no context");
	if (c->ds->n_rows == 0)
		return 0;
	if (c->multi_mf)
		return gpu_multi_epoch(c, epoch, eta, loss_sum, err);
	if ((rc = gpu_loss_reset(c, err)))
		return rc;
	if (c->resident) {
		CK(gpu_launch(c, 0, 0, c->ds->n_rows, 0, epoch, (float)eta, 0,
			  c->ds->n_rows, 1),
		   "sweep kernel launch");
	} else {
		uint32_t conc = (uint32_t)((uint64_t)c->n_slots < c->n_chunks
						   ? (uint64_t)c->n_slots
						   : c->n_chunks);
		gpu_shuffle_chunks(c, epoch);
		/* Every slot is overwritten below. */
		for (int s = 0; s < GPU_MAX_STREAMS; s++)
			c->slot_chunk[s] = -1;
		for (uint64_t i = 0; i < c->n_chunks; i++) {
			int s = (int)(i % (uint64_t)c->n_slots);
			uint64_t k = c->order[i];
			if ((rc = gpu_upload_chunk(c, s, k, err)))
				goto fail;
			const struct gpu_chunk *ch = &c->chunks[k];
			CK(gpu_launch(c, s, ch->r0, ch->r1, k, epoch, (float)eta, 0,
				  ch->r1 - ch->r0, conc),
			   "sweep kernel launch");
		}
	}
	return gpu_loss_collect(c, loss_sum, err);
fail:
	return rc;
}

extern "C" int boar_gpu_download(boar_gpu_ctx *c, struct boar_model *m,
				 boar_error *err)
{
	int rc = 0;
	if (!c || !m)
		return boar_fail(err, BOAR_EINVAL, "GPU: no context or model");
	if (c->multi_mf)
		return gpu_multi_download(c, m, err);
	if (m->task != c->task ||
	    (c->task == BOAR_TASK_LINEAR &&
	     (m->dim != c->dim || !m->w || boar_model_width(m) != c->width)) ||
	    (c->task == BOAR_TASK_MF &&
	     (m->dim != c->n_users || m->n_items != c->n_items ||
	      m->rank != c->rank || (c->has_bias && (!m->bu || !m->bi)))))
		return boar_fail(err, BOAR_EMISMATCH,
				 "GPU: model shape differs from the one opened");
	CK(cudaSetDevice(c->device), "cudaSetDevice");
	if (c->task == BOAR_TASK_LINEAR && c->lv.adagrad) {
		/* Separate w from the (w, G) pairs on the device first. */
		float *t = NULL;
		uint64_t coords = (c->dim + 1) * c->width;
		size_t n = coords * sizeof(float);
		CK(cudaMalloc(&t, n), "cudaMalloc(weights)");
		cudaError_t e = gpu_deinterleave(t, c->w, coords, c->sm_count, 0);
		if (e == cudaSuccess)
			e = cudaMemcpy(m->w, t, n, cudaMemcpyDeviceToHost);
		cudaFree(t);
		CK(e, "downloading weights");
	} else if (c->task == BOAR_TASK_LINEAR) {
		CK(cudaMemcpy(m->w, c->w,
			      (c->dim + 1) * c->width * sizeof(float),
			      cudaMemcpyDeviceToHost),
		   "cudaMemcpy(weights)");
	} else {
		if ((rc = gpu_factors_get(m->P, c->P, c->n_users * c->rank,
					  c->mv.storage, c->sm_count, err)) ||
		    (rc = gpu_factors_get(m->Q, c->Q, c->n_items * c->rank,
					  c->mv.storage, c->sm_count, err)))
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
	if (c->multi_mf) {
		gpu_multi_close(c);
		return;
	}
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
		cudaFree(sl->weight);
		cudaFree(sl->user);
		cudaFree(sl->item);
		if (sl->stage)
			cudaFreeHost(sl->stage);
		if (sl->staged)
			cudaEventDestroy(sl->staged);
		if (sl->stream)
			cudaStreamDestroy(sl->stream);
	}
	gpu_unpin_all(c);
	if (c->row_weight)
		cudaFreeHost(c->row_weight);
	cudaFree(c->w);
	cudaFree(c->classes);
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
