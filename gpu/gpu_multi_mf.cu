/* gpu_multi_mf.cu - matrix factorization on N GPUs of one host (--gpus N).
 *
 * The ratings are cut into an N x N grid of user blocks x item blocks
 * (src/data/rating_grid.h: cuts at the quantiles of the rating counts, so
 * the blocks hold about the same number of ratings). GPU g keeps, for the
 * whole run, the ratings of its row of blocks (g, 0 .. N-1), grouped by
 * item block, and the P rows, biases and AdaGrad sums of user range g.
 * An epoch is N sub-epochs; in sub-epoch s GPU g sweeps block
 * (g, (g + s) mod N) with the one-GPU kernel (gpu_mf.cu): no two GPUs
 * touch the same user or item row in a sub-epoch, so the GPUs need no
 * coordination while they sweep, and within a GPU the sweep is the usual
 * Hogwild! of thousands of warps.
 *
 * Item range j (its Q rows, biases and AdaGrad sums) travels: after its
 * sweep on GPU g it moves to GPU g - 1 (mod N), which sweeps it next. Each
 * GPU has two item buffers, the one it sweeps and the one the next block
 * arrives in; the copy (cudaMemcpyPeerAsync, P2P over NVLink or PCIe when
 * the pair allows, staged through the host otherwise) is queued on the
 * sender's stream right behind its sweep, and the receiver's next sweep
 * waits for it by an event, so a GPU that finishes early sends at once and
 * the host never blocks inside an epoch. Before a GPU sends into its
 * neighbour's spare buffer it waits until the neighbour has sent that
 * buffer's previous block on (an event per sub-epoch parity). A block's
 * bytes are its rows (rank x 4 bytes at fp32, 512 B at rank 128): 4.5 MB
 * for half of Netflix's items, microseconds over NVLink beside a
 * sub-epoch of milliseconds.
 *
 * Any N: the strata and the ring are the same for every N; per GPU the
 * device memory is 1/N of the ratings, 1/N of P and two 1/N slices of Q.
 * What grows with N is the number of sub-epochs (each ends at the slowest
 * GPU of its stratum: balance matters more) and the launches per epoch,
 * each over 1/N^2 of the ratings (the kernel's floor of ratings per
 * thread block is divided by N for them: see gpu_multi_mf_open). After a
 * whole epoch item range j is back on GPU j: download reads it there.
 * Measured at N = 2 on two H200s: 1.97x one GPU's time to a fixed test
 * RMSE at rank 128 (bench/RESULTS-gpu.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_multi.h"
#include "math/step.h"

extern "C" {
#include "data/rating_grid.h"
}

struct mf_items { /* one item buffer: rows of the widest item range */
	void *Q;
	float *bi, *Gi;
};

struct mf_dev {
	/* the one-GPU sweep's context (gpu_mf_sweep): the device, its user
	 * range's rows (P, bu, Gu), the item buffer it sweeps (Q, bi, Gi:
	 * one of items[]), the rules and the loss accumulator */
	struct boar_gpu_ctx site;
	cudaStream_t stream;
	cudaEvent_t sent[2]; /* its item block left, by sub-epoch parity */
	uint32_t *user, *item; /* its row of blocks, ids relative */
	float *rating;
	struct mf_items items[2];
};

struct gpu_multi_mf {
	uint32_t n;
	struct mf_dev *dev;
	struct boar_rating_grid grid;
	struct gpu_mf_variant mv;
	uint32_t rank;
	int cur;       /* items[cur] is the block each GPU sweeps next */
	uint64_t step; /* sub-epochs run since open */
};

/* Allocates and zeroes n floats on the current device (NULL for n = 0
 * would make the kernels' row pointers NULL: at least one). */
static cudaError_t alloc_zero(float **p, uint64_t n)
{
	cudaError_t e = cudaMalloc(p, (n ? n : 1) * sizeof(float));
	return e == cudaSuccess ? cudaMemset(*p, 0, (n ? n : 1) * sizeof(float))
				: e;
}

/* GPU g's ratings (its row of blocks), user rows and two item buffers, the
 * first holding item range g. */
static int upload_dev(struct gpu_multi_mf *c, uint32_t g,
		      const struct boar_model *m, boar_error *err)
{
	int rc = 0;
	struct mf_dev *v = &c->dev[g];
	const struct boar_rating_grid *gr = &c->grid;
	const uint64_t r0 = gr->start[(uint64_t)g * c->n];
	const uint64_t rows = gr->start[(uint64_t)(g + 1) * c->n] - r0;
	const uint64_t u0 = gr->user_cut[g], nu = gr->user_cut[g + 1] - u0;
	const uint64_t i0 = gr->item_cut[g], ni = gr->item_cut[g + 1] - i0;
	const uint64_t wide = boar_rating_grid_widest(gr, 1);
	const size_t vb = gpu_mf_value_bytes(c->mv.storage);
	const uint64_t r = c->rank;

	CK(cudaSetDevice(v->site.device), "cudaSetDevice");
	CK(cudaDeviceGetAttribute(&v->site.sm_count, cudaDevAttrMultiProcessorCount,
				  v->site.device),
	   "cudaDeviceGetAttribute");
	CK(cudaStreamCreateWithFlags(&v->stream, cudaStreamNonBlocking),
	   "cudaStreamCreate");
	for (int k = 0; k < 2; k++)
		CK(cudaEventCreateWithFlags(&v->sent[k], cudaEventDisableTiming),
		   "cudaEventCreate");
	CK(cudaMalloc(&v->user, (rows ? rows : 1) * sizeof(uint32_t)),
	   "cudaMalloc(users)");
	CK(cudaMalloc(&v->item, (rows ? rows : 1) * sizeof(uint32_t)),
	   "cudaMalloc(items)");
	CK(cudaMalloc(&v->rating, (rows ? rows : 1) * sizeof(float)),
	   "cudaMalloc(ratings)");
	CK(cudaMemcpy(v->user, gr->user + r0, rows * sizeof(uint32_t),
		      cudaMemcpyHostToDevice),
	   "cudaMemcpy(users)");
	CK(cudaMemcpy(v->item, gr->item + r0, rows * sizeof(uint32_t),
		      cudaMemcpyHostToDevice),
	   "cudaMemcpy(items)");
	CK(cudaMemcpy(v->rating, gr->rating + r0, rows * sizeof(float),
		      cudaMemcpyHostToDevice),
	   "cudaMemcpy(ratings)");

	CK(cudaMalloc(&v->site.P, (nu ? nu : 1) * r * vb), "cudaMalloc(factors)");
	if ((rc = gpu_factors_put(v->site.P, m->P + u0 * r, nu * r, c->mv.storage,
				  v->site.sm_count, err)))
		goto fail;
	for (int k = 0; k < 2; k++) {
		CK(cudaMalloc(&v->items[k].Q, (wide ? wide : 1) * r * vb),
		   "cudaMalloc(factors)");
		if (c->mv.biases)
			CK(alloc_zero(&v->items[k].bi, wide), "cudaMalloc(bi)");
		if (c->mv.adagrad)
			CK(alloc_zero(&v->items[k].Gi, wide),
			   "cudaMalloc(AdaGrad items)");
	}
	if ((rc = gpu_factors_put(v->items[0].Q, m->Q + i0 * r, ni * r,
				  c->mv.storage, v->site.sm_count, err)))
		goto fail;
	if (c->mv.biases) {
		CK(alloc_zero(&v->site.bu, nu), "cudaMalloc(bu)");
		CK(cudaMemcpy(v->site.bu, m->bu + u0, nu * sizeof(float),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(bu)");
		CK(cudaMemcpy(v->items[0].bi, m->bi + i0, ni * sizeof(float),
			      cudaMemcpyHostToDevice),
		   "cudaMemcpy(bi)");
	}
	if (c->mv.adagrad)
		CK(alloc_zero(&v->site.Gu, nu), "cudaMalloc(AdaGrad users)");
	CK(cudaMalloc(&v->site.loss, sizeof(double)), "cudaMalloc(loss)");
	CK(cudaDeviceSynchronize(), "upload");
fail:
	return rc;
}

/* Loads the sweep's kernel on every device and makes a first copy over
 * each link (one byte into the spare item buffer, which the first
 * sub-epoch overwrites), so that an epoch's time is the sweep's, not
 * the lazy loading's (the one-GPU engine loads its kernel at open too). */
static int warm_up(struct gpu_multi_mf *c, boar_error *err)
{
	int rc = 0;
	for (uint32_t g = 0; g < c->n; g++) {
		struct mf_dev *v = &c->dev[g], *t = &c->dev[(g + c->n - 1) % c->n];
		CK(cudaSetDevice(v->site.device), "cudaSetDevice");
		v->site.Q = v->items[0].Q;
		v->site.bi = v->items[0].bi;
		v->site.Gi = v->items[0].Gi;
		CK(gpu_mf_sweep(&v->site, v->user, v->item, v->rating, 0, 0, 0,
				0.0f, v->stream),
		   "sweep kernel launch");
		CK(cudaMemcpyPeerAsync(t->items[1].Q, t->site.device,
				       v->items[0].Q, v->site.device, 1,
				       v->stream),
		   "passing item factors between GPUs");
		CK(cudaStreamSynchronize(v->stream), "warming up");
	}
fail:
	return rc;
}

int gpu_multi_mf_open(const struct boar_dataset *d, const boar_options *o,
		      const struct boar_model *m, struct gpu_multi_mf **out,
		      boar_error *err)
{
	int rc;
	const uint32_t n = (uint32_t)o->n_gpus;
	struct gpu_multi_mf *c;
	if ((rc = gpu_check_shapes(d, o, m, err)) ||
	    (rc = gpu_devices_check(o->gpu_id, (int)n, err)))
		return rc;
	c = (struct gpu_multi_mf *)calloc(1, sizeof *c);
	if (!c || !(c->dev = (struct mf_dev *)calloc(n, sizeof *c->dev))) {
		free(c);
		return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
	}
	c->n = n;
	c->rank = m->rank;
	c->mv.adagrad = boar_opt_accumulates(o->optimizer);
	c->mv.biases = m->has_bias;
	c->mv.storage = o->mf_storage;
	c->mv.atomic = !(o->gpu_racy_kernels && o->update == BOAR_UPDATE_RACY);
	for (uint32_t g = 0; g < n; g++) {
		struct boar_gpu_ctx *site = &c->dev[g].site;
		site->device = o->gpu_id + (int)g;
		site->task = BOAR_TASK_MF;
		site->seed = o->seed;
		site->opt = o->optimizer;
		/* BOAR_AUTO: MF's default (the core normally resolves it) */
		site->l2 = o->l2 >= 0 ? (float)o->l2 : 0.05f;
		/* A block holds 1/N of its GPU's ratings but 1/N of the
		 * items: with 1/N of the floor of ratings per thread block,
		 * a popular item's row sees as many updates from one stale
		 * value as on one GPU where the floor binds (small data). */
		site->rows_per_block =
			(o->gpu_rows_per_block ? o->gpu_rows_per_block
					       : GPU_ROWS_PER_BLOCK) / n;
		if (!site->rows_per_block)
			site->rows_per_block = 1;
		site->rank = m->rank;
		site->mu = m->has_bias ? m->mu : 0.0f;
		site->mf_loss = m->mf_loss;
		site->mv = c->mv;
	}
	if ((rc = boar_rating_grid_build(d, n, &c->grid, err)))
		goto fail;
	for (uint32_t g = 0; g < n; g++)
		if ((rc = upload_dev(c, g, m, err)))
			goto fail;
	/* the host copy of the grid's ratings is on the cards now */
	boar_rating_grid_drop_ratings(&c->grid);
	/* GPU g sends to g - 1 */
	for (uint32_t g = 0; g < n; g++)
		gpu_multi_peer(c->dev[g].site.device,
			       c->dev[(g + n - 1) % n].site.device);
	if ((rc = warm_up(c, err)))
		goto fail;
	*out = c;
	return 0;
fail:
	gpu_multi_mf_close(c);
	return rc;
}

/* GPU g's sweep of block (g, j) in this epoch. */
static cudaError_t sweep_block(struct gpu_multi_mf *c, uint32_t g, uint32_t j,
			       int epoch, float eta)
{
	struct mf_dev *v = &c->dev[g];
	const struct boar_rating_grid *gr = &c->grid;
	const uint64_t rows = boar_grid_block_rows(gr, g, j);
	const uint64_t off = gr->start[(uint64_t)g * c->n + j] -
			     gr->start[(uint64_t)g * c->n];
	if (!rows)
		return cudaSuccess;
	v->site.Q = v->items[c->cur].Q;
	v->site.bi = v->items[c->cur].bi;
	v->site.Gi = v->items[c->cur].Gi;
	/* a block's order is drawn like a streamed chunk's: from (seed,
	 * epoch, block number) */
	return gpu_mf_sweep(&v->site, v->user + off, v->item + off,
			    v->rating + off, rows, (uint64_t)g * c->n + j, epoch,
			    eta, v->stream);
}

/* GPU g's item block j (in items[cur]) to the spare buffer of GPU g - 1,
 * queued behind g's sweep, once g - 1 has sent that buffer's last block. */
static cudaError_t pass_items(struct gpu_multi_mf *c, uint32_t g, uint32_t j)
{
	struct mf_dev *v = &c->dev[g], *t = &c->dev[(g + c->n - 1) % c->n];
	const struct mf_items *from = &v->items[c->cur];
	const struct mf_items *to = &t->items[c->cur ^ 1];
	const uint64_t rows = c->grid.item_cut[j + 1] - c->grid.item_cut[j];
	const int par = (int)(c->step & 1);
	cudaError_t e = cudaSuccess;
	if (c->step > 0)
		e = cudaStreamWaitEvent(v->stream, t->sent[par ^ 1], 0);
	if (e == cudaSuccess && rows)
		e = cudaMemcpyPeerAsync(to->Q, t->site.device, from->Q, v->site.device,
					rows * c->rank *
						gpu_mf_value_bytes(c->mv.storage),
					v->stream);
	if (e == cudaSuccess && rows && c->mv.biases)
		e = cudaMemcpyPeerAsync(to->bi, t->site.device, from->bi, v->site.device,
					rows * sizeof(float), v->stream);
	if (e == cudaSuccess && rows && c->mv.adagrad)
		e = cudaMemcpyPeerAsync(to->Gi, t->site.device, from->Gi, v->site.device,
					rows * sizeof(float), v->stream);
	if (e == cudaSuccess)
		e = cudaEventRecord(v->sent[par], v->stream);
	return e;
}

/* One sub-epoch: every GPU sweeps its block of the stratum, passes the
 * item block on, and its next sweep waits for the block from g + 1. */
static int sub_epoch(struct gpu_multi_mf *c, uint32_t s, int epoch,
		     float eta, boar_error *err)
{
	int rc = 0;
	const uint32_t n = c->n;
	const int par = (int)(c->step & 1);
	for (uint32_t g = 0; g < n; g++) {
		CK(cudaSetDevice(c->dev[g].site.device), "cudaSetDevice");
		CK(sweep_block(c, g, boar_grid_stratum(g, s, n), epoch, eta),
		   "sweep kernel launch");
	}
	for (uint32_t g = 0; g < n; g++) {
		CK(cudaSetDevice(c->dev[g].site.device), "cudaSetDevice");
		CK(pass_items(c, g, boar_grid_stratum(g, s, n)),
		   "passing item factors between GPUs");
	}
	for (uint32_t g = 0; g < n; g++) {
		CK(cudaSetDevice(c->dev[g].site.device), "cudaSetDevice");
		CK(cudaStreamWaitEvent(c->dev[g].stream,
				       c->dev[(g + 1) % n].sent[par], 0),
		   "cudaStreamWaitEvent");
	}
	c->cur ^= 1;
	c->step++;
fail:
	return rc;
}

int gpu_multi_mf_epoch(struct gpu_multi_mf *c, int epoch, double eta,
		       double *loss_sum, boar_error *err)
{
	int rc = 0;
	double total = 0.0;
	for (uint32_t g = 0; g < c->n; g++) {
		CK(cudaSetDevice(c->dev[g].site.device), "cudaSetDevice");
		CK(cudaMemsetAsync(c->dev[g].site.loss, 0, sizeof(double),
				   c->dev[g].stream),
		   "cudaMemset(loss)");
	}
	for (uint32_t s = 0; s < c->n; s++)
		if ((rc = sub_epoch(c, s, epoch, (float)eta, err)))
			return rc;
	for (uint32_t g = 0; g < c->n; g++) {
		double loss = 0.0;
		CK(cudaSetDevice(c->dev[g].site.device), "cudaSetDevice");
		CK(cudaStreamSynchronize(c->dev[g].stream), "sweep");
		CK(cudaMemcpy(&loss, c->dev[g].site.loss, sizeof loss,
			      cudaMemcpyDeviceToHost),
		   "cudaMemcpy(loss)");
		total += loss;
	}
	*loss_sum += total;
fail:
	return rc;
}

int gpu_multi_mf_download(struct gpu_multi_mf *c, struct boar_model *m,
			  boar_error *err)
{
	int rc = 0;
	const struct boar_rating_grid *gr = &c->grid;
	const uint64_t r = c->rank;
	if (m->task != BOAR_TASK_MF || m->rank != c->rank ||
	    m->dim != gr->user_cut[c->n] || m->n_items != gr->item_cut[c->n] ||
	    (c->mv.biases && (!m->bu || !m->bi)))
		return boar_fail(err, BOAR_EMISMATCH,
				 "GPU: model shape differs from the one opened");
	for (uint32_t g = 0; g < c->n; g++) {
		struct mf_dev *v = &c->dev[g];
		/* the item range GPU g holds after `step` sub-epochs */
		const uint32_t j = (uint32_t)((g + c->step) % c->n);
		const struct mf_items *it = &v->items[c->cur];
		const uint64_t u0 = gr->user_cut[g], nu = gr->user_cut[g + 1] - u0;
		const uint64_t i0 = gr->item_cut[j], ni = gr->item_cut[j + 1] - i0;
		CK(cudaSetDevice(v->site.device), "cudaSetDevice");
		CK(cudaStreamSynchronize(v->stream), "sweep");
		if ((rc = gpu_factors_get(m->P + u0 * r, v->site.P, nu * r,
					  c->mv.storage, v->site.sm_count, err)) ||
		    (rc = gpu_factors_get(m->Q + i0 * r, it->Q, ni * r,
					  c->mv.storage, v->site.sm_count, err)))
			goto fail;
		if (c->mv.biases) {
			CK(cudaMemcpy(m->bu + u0, v->site.bu, nu * sizeof(float),
				      cudaMemcpyDeviceToHost),
			   "cudaMemcpy(bu)");
			CK(cudaMemcpy(m->bi + i0, it->bi, ni * sizeof(float),
				      cudaMemcpyDeviceToHost),
			   "cudaMemcpy(bi)");
		}
	}
	if (c->mv.biases)
		m->mu = c->dev[0].site.mu;
fail:
	return rc;
}

void gpu_multi_mf_close(struct gpu_multi_mf *c)
{
	if (!c)
		return;
	/* errors ignored: freeing must not stop after a failed kernel */
	for (uint32_t g = 0; c->dev && g < c->n; g++) {
		struct mf_dev *v = &c->dev[g];
		if (cudaSetDevice(v->site.device) != cudaSuccess)
			continue;
		if (v->stream)
			cudaStreamSynchronize(v->stream);
		cudaFree(v->user);
		cudaFree(v->item);
		cudaFree(v->rating);
		cudaFree(v->site.P);
		cudaFree(v->site.bu);
		cudaFree(v->site.Gu);
		for (int k = 0; k < 2; k++) {
			cudaFree(v->items[k].Q);
			cudaFree(v->items[k].bi);
			cudaFree(v->items[k].Gi);
			if (v->sent[k])
				cudaEventDestroy(v->sent[k]);
		}
		cudaFree(v->site.loss);
		if (v->stream)
			cudaStreamDestroy(v->stream);
	}
	(void)cudaGetLastError();
	boar_rating_grid_free(&c->grid);
	free(c->dev);
	free(c);
}
