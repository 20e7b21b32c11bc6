/* gpu_multi.cu - several GPUs of one host behind one engine context
 * (--gpus N, boar_options.n_gpus): the devices asked for, P2P between
 * them, and the context's calls handed to the scheme of the task
 * (gpu_multi.h: an N x N grid of blocks for MF, replicas merged by
 * adding their changes for linear models). One host thread drives MF's
 * devices (its copies and sweeps are queued asynchronously); linear
 * replicas sweep on a thread each.
 *
 * Resident data only: each GPU's share must fit on its card (streaming
 * through chunks is the one-GPU engine's). Slices of an epoch and weights
 * by key (cluster workers) take one GPU.
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
	if (o->gpu_chunk_bytes)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: n_gpus above 1 keeps the data on the "
				 "cards: no streamed chunks (gpu_chunk_bytes)");
	struct boar_gpu_ctx *c =
		(struct boar_gpu_ctx *)calloc(1, sizeof *c);
	if (!c)
		return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
	c->device = o->gpu_id;
	c->task = train ? train->task : 0;
	c->ds = train;
	if (c->task == BOAR_TASK_MF)
		rc = gpu_multi_mf_open(train, o, init, &c->multi_mf, err);
	else
		rc = gpu_multi_linear_open(train, o, init, &c->multi_linear,
					   err);
	if (rc) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int gpu_multi_epoch(boar_gpu_ctx *c, int epoch, double eta,
		    double *loss_sum, boar_error *err)
{
	if (c->multi_mf)
		return gpu_multi_mf_epoch(c->multi_mf, epoch, eta, loss_sum, err);
	return gpu_multi_linear_epoch(c->multi_linear, epoch, eta, loss_sum,
				      err);
}

int gpu_multi_download(boar_gpu_ctx *c, struct boar_model *m,
		       boar_error *err)
{
	if (c->multi_mf)
		return gpu_multi_mf_download(c->multi_mf, m, err);
	return gpu_multi_linear_download(c->multi_linear, m, err);
}

void gpu_multi_close(boar_gpu_ctx *c)
{
	gpu_multi_mf_close(c->multi_mf);
	gpu_multi_linear_close(c->multi_linear);
	free(c);
}
