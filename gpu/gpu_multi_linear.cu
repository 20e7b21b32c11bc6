/* gpu_multi_linear.cu - linear models on N GPUs of one host (--gpus N).
 *
 * Each GPU trains a replica of the whole model (weights, AdaGrad sums,
 * hot-feature replicas: the one-GPU engine, gpu_engine.cu) on its own
 * share of the rows, consecutive rows cut so the shares hold about the
 * same number of non-zeros; the N replicas sweep side by side, one host
 * thread each (the one-GPU epoch waits for its device). After every epoch
 * the replicas are merged and every GPU starts the next epoch from the
 * merge: device 0 gathers the others' arrays (weights, and AdaGrad's sums
 * with them: the (w, G) pairs whole) over P2P where the pair allows, and
 * sends the merge back.
 *
 * The merge adds the replicas' changes: w = w0 + sum_g (w_g - w0), w0 the
 * model the epoch started from. Each replica made the steps of its rows,
 * so the sum holds every row's step, as one sweep over all rows would
 * (Hogwild! across GPUs whose view of each other's steps is one epoch
 * stale), and AdaGrad's sums grow by every row's squared gradient, as on
 * one GPU. Averaging the replicas instead (parallel SGD by model
 * averaging) keeps 1/N of each step: measured on an H200 pair it trailed
 * one GPU's test loss by 14% at every epoch (bench/RESULTS-gpu.md). The
 * sum is the bolder merge: within an epoch each replica's AdaGrad sums
 * hold only its own rows' gradients, so its steps run larger than one
 * GPU's (up to sqrt(N) in the first epoch, less as the sums grow).
 *
 * Any N: the shares and the threads scale with N; the merge moves
 * 2 (N - 1) model copies through device 0, which for large N or models a
 * ring reduce-scatter / all-gather would spread over the links (not built:
 * measured at N = 2, where it is one copy each way).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_multi.h"

struct gpu_multi_linear {
	int n;
	struct boar_dataset *share; /* n views of the caller's rows */
	boar_gpu_ctx **ctx;         /* n one-GPU engines */
	float *other;               /* device 0: another replica's copy */
	float *start;               /* device 0: the epoch's starting model */
	uint64_t len;               /* floats in each replica's w */
};

/* share g: rows whose non-zeros start in [g nnz / n, (g + 1) nnz / n),
 * as a view of d's arrays (nothing copied, nothing owned). */
static void cut_share(const struct boar_dataset *d, int n, int g,
		      struct boar_dataset *v)
{
	uint64_t r0 = 0, r1 = 0;
	uint64_t lo = d->nnz * (uint64_t)g / (uint64_t)n;
	uint64_t hi = d->nnz * (uint64_t)(g + 1) / (uint64_t)n;
	while (r0 < d->n_rows && d->row_ptr[r0] < lo)
		r0++;
	r1 = r0;
	while (r1 < d->n_rows && (g == n - 1 || d->row_ptr[r1] < hi))
		r1++;
	*v = *d;
	memset(v->owned, 0, sizeof v->owned);
	v->map = NULL;
	v->map_len = 0;
	v->input = NULL;
	v->csv_kinds[0] = v->csv_kinds[1] = NULL;
	v->n_rows = r1 - r0;
	v->nnz = d->row_ptr[r1] - d->row_ptr[r0];
	/* row_ptr keeps absolute offsets: the engine subtracts row_ptr[0] */
	v->row_ptr = d->row_ptr + r0;
	v->idx = d->idx + d->row_ptr[r0];
	v->val = d->val ? d->val + d->row_ptr[r0] : NULL;
	v->label = d->label + r0;
	v->weight = NULL;
}

int gpu_multi_linear_open(const struct boar_dataset *d, const boar_options *o,
			  const struct boar_model *m,
			  struct gpu_multi_linear **out, boar_error *err)
{
	int rc;
	const int n = o->n_gpus;
	struct gpu_multi_linear *c;
	if ((rc = gpu_check_shapes(d, o, m, err)) ||
	    (rc = gpu_devices_check(o->gpu_id, n, err)))
		return rc;
	c = (struct gpu_multi_linear *)calloc(1, sizeof *c);
	if (c) {
		c->share = (struct boar_dataset *)calloc(n, sizeof *c->share);
		c->ctx = (boar_gpu_ctx **)calloc(n, sizeof *c->ctx);
	}
	if (!c || !c->share || !c->ctx) {
		gpu_multi_linear_close(c);
		return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
	}
	c->n = n;
	for (int g = 0; g < n; g++) {
		boar_options og = *o;
		og.gpu_id = o->gpu_id + g;
		og.n_gpus = 1;
		cut_share(d, n, g, &c->share[g]);
		if ((rc = boar_gpu_open(&c->share[g], &og, m, &c->ctx[g], err)))
			goto fail;
	}
	c->len = (c->ctx[0]->dim + 1) * (c->ctx[0]->lv.adagrad ? 2 : 1);
	CK(cudaSetDevice(c->ctx[0]->device), "cudaSetDevice");
	CK(cudaMalloc(&c->other, c->len * sizeof(float)),
	   "cudaMalloc(replica merge)");
	CK(cudaMalloc(&c->start, c->len * sizeof(float)),
	   "cudaMalloc(replica merge)");
	CK(cudaMemcpy(c->start, c->ctx[0]->w, c->len * sizeof(float),
		      cudaMemcpyDeviceToDevice),
	   "cudaMemcpy(replica merge)");
	for (int g = 1; g < n; g++) {
		gpu_multi_peer(c->ctx[g]->device, c->ctx[0]->device);
		gpu_multi_peer(c->ctx[0]->device, c->ctx[g]->device);
	}
	*out = c;
	return 0;
fail:
	gpu_multi_linear_close(c);
	return rc;
}

struct replica_sweep {
	boar_gpu_ctx *ctx;
	int epoch, rc;
	double eta, loss;
	boar_error err;
};

static void *sweep_main(void *p)
{
	struct replica_sweep *r = (struct replica_sweep *)p;
	r->rc = boar_gpu_epoch(r->ctx, r->epoch, r->eta, &r->loss, &r->err);
	return NULL;
}

/* acc[k] += x[k] - base[k]: another replica's change added. */
static __global__ void add_change(float *acc, const float *x,
				  const float *base, uint64_t n)
{
	for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     k < n; k += (uint64_t)gridDim.x * blockDim.x)
		acc[k] += x[k] - base[k];
}

/* Every replica's w becomes w0 + the sum of the replicas' changes
 * (through device 0, whose own w holds w0 + its change to begin with),
 * and w0 the merge, for the next epoch. */
static int merge(struct gpu_multi_linear *c, boar_error *err)
{
	int rc = 0;
	boar_gpu_ctx *z = c->ctx[0];
	const size_t bytes = c->len * sizeof(float);
	const unsigned grid = 4u * (unsigned)z->sm_count;
	CK(cudaSetDevice(z->device), "cudaSetDevice");
	for (int g = 1; g < c->n; g++) {
		CK(cudaMemcpyPeer(c->other, z->device, c->ctx[g]->w,
				  c->ctx[g]->device, bytes),
		   "gathering a replica");
		add_change<<<grid, 256>>>(z->w, c->other, c->start, c->len);
		CK(cudaGetLastError(), "merging replicas");
	}
	CK(cudaMemcpy(c->start, z->w, bytes, cudaMemcpyDeviceToDevice),
	   "merging replicas");
	CK(cudaDeviceSynchronize(), "merging replicas");
	for (int g = 1; g < c->n; g++)
		CK(cudaMemcpyPeer(c->ctx[g]->w, c->ctx[g]->device, z->w,
				  z->device, bytes),
		   "sending the merge");
	CK(cudaDeviceSynchronize(), "sending the merge");
fail:
	return rc;
}

int gpu_multi_linear_epoch(struct gpu_multi_linear *c, int epoch, double eta,
			   double *loss_sum, boar_error *err)
{
	struct replica_sweep *r =
		(struct replica_sweep *)calloc(c->n, sizeof *r);
	pthread_t *th = (pthread_t *)calloc(c->n, sizeof *th);
	char *started = (char *)calloc(c->n, 1);
	int rc = 0;
	if (!r || !th || !started) {
		free(r);
		free(th);
		free(started);
		return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
	}
	for (int g = 0; g < c->n; g++) {
		r[g].ctx = c->ctx[g];
		r[g].epoch = epoch;
		r[g].eta = eta;
	}
	/* replicas 1.. on threads of their own first, then replica 0 here
	 * (and any a thread could not take) */
	for (int g = 1; g < c->n; g++)
		started[g] = !pthread_create(&th[g], NULL, sweep_main, &r[g]);
	for (int g = 0; g < c->n; g++)
		if (!started[g])
			sweep_main(&r[g]);
	for (int g = 1; g < c->n; g++)
		if (started[g])
			pthread_join(th[g], NULL);
	free(started);
	for (int g = 0; g < c->n && !rc; g++) {
		if (r[g].rc) {
			rc = r[g].rc;
			if (err)
				*err = r[g].err;
		}
		*loss_sum += r[g].loss;
	}
	free(r);
	free(th);
	return rc ? rc : merge(c, err);
}

int gpu_multi_linear_download(struct gpu_multi_linear *c,
			      struct boar_model *m, boar_error *err)
{
	return boar_gpu_download(c->ctx[0], m, err);
}

void gpu_multi_linear_close(struct gpu_multi_linear *c)
{
	if (!c)
		return;
	for (int g = 0; c->ctx && g < c->n; g++)
		boar_gpu_close(c->ctx[g]);
	cudaFree(c->other); /* device 0's: unified addressing finds it */
	cudaFree(c->start);
	(void)cudaGetLastError();
	free(c->ctx);
	free(c->share);
	free(c);
}
