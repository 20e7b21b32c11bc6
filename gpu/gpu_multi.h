/* gpu_multi.h - the multi-GPU engine's parts (C++, inside the plugin).
 *
 * --gpus N (boar_options.n_gpus) trains matrix factorization on devices
 * gpu_id .. gpu_id + N - 1 of one host, all driven by one host context
 * (gpu_multi.cu): gpu_multi_mf.cu sweeps an N x N grid of user x item
 * blocks (src/data/rating_grid.h), the item blocks passed around the ring
 * of GPUs between sub-epochs. Linear models take one GPU (gpu_multi.cu
 * says why).
 */
#ifndef BOAR_GPU_MULTI_H
#define BOAR_GPU_MULTI_H

#include "gpu_ctx.h"

/* The engine's entry points (gpu_engine.h) for o->n_gpus > 1: a context
 * whose multi_mf does the work. */
int gpu_multi_open(const struct boar_dataset *train, const boar_options *o,
		   const struct boar_model *init, boar_gpu_ctx **out,
		   boar_error *err);
int gpu_multi_epoch(boar_gpu_ctx *c, int epoch, double eta,
		    double *loss_sum, boar_error *err);
int gpu_multi_download(boar_gpu_ctx *c, struct boar_model *m,
		       boar_error *err);
void gpu_multi_close(boar_gpu_ctx *c);

/* Lets device `from` copy straight into `to` (P2P over NVLink or PCIe)
 * where the pair allows it; 1 if it does, 0 when copies between them go
 * through the host (cudaMemcpyPeerAsync stages them). Leaves `from`
 * current. */
int gpu_multi_peer(int from, int to);

int gpu_multi_mf_open(const struct boar_dataset *d, const boar_options *o,
		      const struct boar_model *m, struct gpu_multi_mf **out,
		      boar_error *err);
int gpu_multi_mf_epoch(struct gpu_multi_mf *c, int epoch, double eta,
		       double *loss_sum, boar_error *err);
int gpu_multi_mf_download(struct gpu_multi_mf *c, struct boar_model *m,
			  boar_error *err);
void gpu_multi_mf_close(struct gpu_multi_mf *c);


#endif
