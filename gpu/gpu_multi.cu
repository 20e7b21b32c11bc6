/* gpu_multi.cu - several GPUs of one host behind one engine context
 * (--gpus N, boar_options.n_gpus): P2P between the devices, and the
 * context's calls handed to the N x N grid of blocks of matrix
 * factorization (gpu_multi_mf.cu). One host thread drives every device:
 * its copies and sweeps are queued asynchronously.
 *
 * Resident data only: each GPU's share must fit on its card (streaming
 * through chunks is the one-GPU engine's). Linear models, and with them
 * slices of an epoch and weights by key (cluster workers), take one GPU.
 */
#include <stdlib.h>

#include "gpu_multi.h"

/* Pairs already enabled in this process (devices below 64): enabling
 * again is an error the CUDA tools report, though harmless. */
#define PEER_TABLE 64
static unsigned char peer_on[PEER_TABLE][PEER_TABLE];

int gpu_multi_peer(int from, int to)
{
	int can = 0;
	const int known = from < PEER_TABLE && to < PEER_TABLE;
	if (from == to || cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess ||
	    !can || cudaSetDevice(from) != cudaSuccess) {
		(void)cudaGetLastError();
		return 0;
	}
	if (known && peer_on[from][to])
		return 1;
	cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
	(void)cudaGetLastError(); /* "already enabled" is no failure */
	int on = e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled;
	if (known)
		peer_on[from][to] = (unsigned char)on;
	return on;
}

int gpu_multi_open(const struct boar_dataset *train, const boar_options *o,
		   const struct boar_model *init, boar_gpu_ctx **out,
		   boar_error *err)
{
	int rc;
	/* Linear replicas on each GPU's share of the rows, merged after
	 * every epoch, were built and measured on two H200s (at c27efe7,
	 * bench/RESULTS-gpu.md): averaging them trailed one GPU's test loss
	 * by 14%, adding their changes ran SGD on a9a to 0.69 accuracy
	 * (0.85 on one GPU), and the epoch was no faster (7.7 ms against
	 * 7.1 on 4M rows: the merge's copies cost what the halved sweep
	 * saves). So they take one GPU until a merge that is right and pays
	 * exists. */
	if (!train || train->task != BOAR_TASK_MF)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: n_gpus above 1 is for matrix "
				 "factorization; linear models train on one GPU");
	if (o->gpu_chunk_bytes)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: n_gpus above 1 keeps the data on the "
				 "cards: no streamed chunks (gpu_chunk_bytes)");
	struct boar_gpu_ctx *c =
		(struct boar_gpu_ctx *)calloc(1, sizeof *c);
	if (!c)
		return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
	c->device = o->gpu_id;
	c->task = train->task;
	c->ds = train;
	if ((rc = gpu_multi_mf_open(train, o, init, &c->multi_mf, err))) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int gpu_multi_epoch(boar_gpu_ctx *c, int epoch, double eta,
		    double *loss_sum, boar_error *err)
{
	return gpu_multi_mf_epoch(c->multi_mf, epoch, eta, loss_sum, err);
}

int gpu_multi_download(boar_gpu_ctx *c, struct boar_model *m,
		       boar_error *err)
{
	return gpu_multi_mf_download(c->multi_mf, m, err);
}

void gpu_multi_close(boar_gpu_ctx *c)
{
	gpu_multi_mf_close(c->multi_mf);
	free(c);
}
