/* gpu_preload.cu - the training rows to the card while the file is parsed.
 *
 * `boar train --device gpu` starts CUDA on a thread while the LIBSVM
 * reader parses (engine_ops.h, boar_engine_warm_start). On one GPU that
 * thread is this one: after CUDA is up it allocates device arrays of the
 * reader's counted sizes and copies into them each range of non-zeros that
 * the reader's rows_ready hook (boar_load_options) reports finished, while
 * the reader goes on with the rest. CUDA takes about as long to start as
 * half the parse, so by then half the rows wait; COPIERS threads (this
 * one and a few it starts) take them in grabs of up to GRAB_NNZ, then the
 * later ones as they come. Each copier has a stream and a ring of pinned
 * staging buffers: it fills one while the copy engine drains the others,
 * so the parser's arrays need no pinning (which would cost as much as the
 * copy) and the copiers' memcpy is the only host work. One copier alone
 * could not keep up with 16 parsing threads (bench/RESULTS-gpu.md).
 *
 * A grab's adjacent ranges are joined first: each parsing thread reports
 * its piece's windows in order, so a grab joins into a few long runs.
 *
 * Only the non-zeros (idx, val: nearly all the bytes) are copied here;
 * row offsets are fixed up at the end of the load and labels are small,
 * so the engine copies both at open. When the load is over, done() waits
 * for the copies and keeps them only when the dataset still has the
 * reported arrays, at the counted sizes (boar_rows_ready says that the
 * rows otherwise moved); the engine then takes them (gpu_preload_take)
 * instead of copying. Any failure here (no device, no room, a CUDA error)
 * only means the engine copies as it always did.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ctx.h"
#include "gpu_preload.h"

/* The staging ring of a copier: big enough that a copy amortizes its
 * start, small enough to pin in a few milliseconds. */
#define RING_BUFS 3
#define RING_BYTES ((size_t)8 << 20)
#define COPIERS 4

/* A copier wakes for this many reported non-zeros (or the load's end) and
 * takes at most GRAB_NNZ at a time, leaving the rest to the others. */
#define BATCH_NNZ (RING_BYTES / sizeof(uint32_t))
#define GRAB_NNZ (4 * BATCH_NNZ)

struct nz_range {
	uint64_t a, b; /* non-zeros [a, b) */
};

struct gpu_preload;

struct copier {
	struct gpu_preload *p;
	pthread_t thread;
	int started;
	cudaStream_t stream;
	unsigned char *ring[RING_BUFS];
	cudaEvent_t ring_free[RING_BUFS];
	int next;
	uint64_t copied;    /* non-zeros it sent to the card */
	struct nz_range *grab;
	size_t cap;
};

struct gpu_preload {
	int device;
	pthread_t thread;   /* copier 0, which starts CUDA and the others */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* the reader's arrays, from its first report */
	const uint32_t *h_idx;
	const float *h_val;
	uint64_t nnz_cap, rows_cap;
	struct nz_range *q; /* reported, not yet taken by a copier */
	size_t qn, qcap;
	uint64_t q_nnz;     /* non-zeros in q */
	int load_over;      /* done() was called: no more reports */
	int give_up;        /* no device, no room, a failed copy */
	/* set by copier 0 (read by others after it is joined) */
	uint32_t *d_idx;
	float *d_val;
	struct copier cp[COPIERS];
	uint64_t copied;
	/* after done() */
	int finished, whole, taken;
	const struct boar_dataset *d;
};

static int by_start(const void *x, const void *y)
{
	const struct nz_range *a = (const struct nz_range *)x;
	const struct nz_range *b = (const struct nz_range *)y;
	return a->a < b->a ? -1 : a->a > b->a;
}

/* Sorts r[0..n) and joins touching ranges; returns the new count. */
static size_t join_ranges(struct nz_range *r, size_t n)
{
	if (n < 2)
		return n;
	qsort(r, n, sizeof *r, by_start);
	size_t m = 0;
	for (size_t k = 1; k < n; k++) {
		if (r[k].a == r[m].b)
			r[m].b = r[k].b;
		else
			r[++m] = r[k];
	}
	return m + 1;
}

/* Device arrays for the counted non-zeros, when they fit beside the
 * engine's headroom and a margin for the model and the rest of the data.
 * 0, or -1 (then the engine copies). */
static int preload_alloc(struct gpu_preload *p)
{
	size_t free_b = 0, total_b = 0;
	uint64_t bytes = p->nnz_cap * (sizeof(uint32_t) + sizeof(float));
	uint64_t n = p->nnz_cap ? p->nnz_cap : 1;
	if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
		return -1;
	uint64_t headroom = total_b / 20 > GPU_MIN_HEADROOM ? total_b / 20
							    : GPU_MIN_HEADROOM;
	uint64_t rest = p->rows_cap * (sizeof(uint64_t) + sizeof(float));
	if (bytes + rest + headroom > free_b - free_b / 8)
		return -1;
	if (cudaMalloc(&p->d_idx, n * sizeof(uint32_t)) != cudaSuccess ||
	    cudaMalloc(&p->d_val, n * sizeof(float)) != cudaSuccess)
		return -1;
	return 0;
}

/* A copier's stream and ring. 0 or -1. */
static int copier_open(struct copier *c)
{
	if (cudaSetDevice(c->p->device) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking) !=
		    cudaSuccess)
		return -1;
	for (int k = 0; k < RING_BUFS; k++)
		if (cudaMallocHost(&c->ring[k], RING_BYTES) != cudaSuccess ||
		    cudaEventCreateWithFlags(&c->ring_free[k],
					     cudaEventDisableTiming) !=
			    cudaSuccess)
			return -1;
	return 0;
}

static void copier_close(struct copier *c)
{
	if (c->stream)
		cudaStreamDestroy(c->stream);
	for (int k = 0; k < RING_BUFS; k++) {
		if (c->ring[k])
			cudaFreeHost(c->ring[k]);
		if (c->ring_free[k])
			cudaEventDestroy(c->ring_free[k]);
	}
	free(c->grab);
}

/* len bytes of host memory to dst on the card, through c's ring. */
static int stage_copy(struct copier *c, void *dst, const void *src,
		      size_t len)
{
	unsigned char *to = (unsigned char *)dst;
	const unsigned char *from = (const unsigned char *)src;
	while (len) {
		int k = c->next;
		c->next = (k + 1) % RING_BUFS;
		size_t n = len < RING_BYTES ? len : RING_BYTES;
		/* the copy out of this buffer, a ring ago, is done */
		if (cudaEventSynchronize(c->ring_free[k]) != cudaSuccess)
			return -1;
		memcpy(c->ring[k], from, n);
		if (cudaMemcpyAsync(to, c->ring[k], n, cudaMemcpyHostToDevice,
				    c->stream) != cudaSuccess ||
		    cudaEventRecord(c->ring_free[k], c->stream) != cudaSuccess)
			return -1;
		to += n;
		from += n;
		len -= n;
	}
	return 0;
}

static int copy_range(struct copier *c, const struct nz_range *r)
{
	struct gpu_preload *p = c->p;
	uint64_t n = r->b - r->a;
	if (stage_copy(c, p->d_idx + r->a, p->h_idx + r->a,
		       n * sizeof(uint32_t)) ||
	    stage_copy(c, p->d_val + r->a, p->h_val + r->a, n * sizeof(float)))
		return -1;
	c->copied += n;
	return 0;
}

/* Takes up to GRAB_NNZ of the queue (from its end) into c->grab; the
 * count, 0 when the load is over and nothing is left. Called locked;
 * waits there. */
static size_t take(struct copier *c)
{
	struct gpu_preload *p = c->p;
	for (;;) {
		while (p->q_nnz < BATCH_NNZ && !p->load_over)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->qn || p->load_over)
			break;
	}
	size_t n = 0;
	uint64_t nnz = 0;
	while (p->qn && nnz < GRAB_NNZ) {
		if (n == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 256;
			struct nz_range *t = (struct nz_range *)realloc(
				c->grab, cap * sizeof *t);
			if (!t) {
				p->give_up = 1;
				break;
			}
			c->grab = t;
			c->cap = cap;
		}
		struct nz_range r = p->q[--p->qn];
		c->grab[n++] = r;
		nnz += r.b - r.a;
	}
	p->q_nnz -= nnz;
	if (p->qn && (p->q_nnz >= BATCH_NNZ || p->load_over))
		pthread_cond_signal(&p->cv); /* more for another copier */
	return n;
}

/* A copier: copies grabs of the reported ranges until the load is over
 * and the queue empty; on any failure it gives the preload up and only
 * drains the queue. */
static void *copier_main(void *arg)
{
	struct copier *c = (struct copier *)arg;
	struct gpu_preload *p = c->p;
	int ok = !copier_open(c);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (!ok)
			p->give_up = 1;
		size_t n = take(c);
		if (!n)
			break;
		ok &= !p->give_up;
		pthread_mutex_unlock(&p->mu);
		n = join_ranges(c->grab, n);
		for (size_t k = 0; ok && k < n; k++)
			ok = !copy_range(c, &c->grab[k]);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	if (c->stream && cudaStreamSynchronize(c->stream) != cudaSuccess)
		ok = 0;
	(void)cudaGetLastError();
	if (!ok) {
		pthread_mutex_lock(&p->mu);
		p->give_up = 1;
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

/* Copier 0: starts CUDA, allocates for the counted sizes once the first
 * rows are reported, starts the other copiers and copies with them. */
static void *preload_main(void *arg)
{
	struct gpu_preload *p = (struct gpu_preload *)arg;
	int ok = cudaSetDevice(p->device) == cudaSuccess &&
		 cudaFree(0) == cudaSuccess;
	pthread_mutex_lock(&p->mu);
	while (!p->h_idx && !p->load_over)
		pthread_cond_wait(&p->cv, &p->mu);
	ok = ok && p->h_idx && !p->give_up;
	pthread_mutex_unlock(&p->mu);
	ok = ok && !preload_alloc(p);
	if (!ok) {
		pthread_mutex_lock(&p->mu);
		p->give_up = 1;
		pthread_mutex_unlock(&p->mu);
	}
	if (!ok)
		return NULL; /* the reports are dropped (give_up) */
	for (int k = 1; k < COPIERS; k++)
		p->cp[k].started = !pthread_create(&p->cp[k].thread, NULL,
						   copier_main, &p->cp[k]);
	copier_main(&p->cp[0]);
	for (int k = 1; k < COPIERS; k++)
		if (p->cp[k].started)
			pthread_join(p->cp[k].thread, NULL);
	for (int k = 0; k < COPIERS; k++)
		p->copied += p->cp[k].copied;
	return NULL;
}

static void *preload_start(int device)
{
	struct gpu_preload *p =
		(struct gpu_preload *)calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->device = device;
	for (int k = 0; k < COPIERS; k++)
		p->cp[k].p = p;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, preload_main, p)) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		free(p);
		return NULL;
	}
	return p;
}

/* The reader's hook: queue the finished non-zeros for the copiers. */
static void preload_rows(const boar_rows_ready *r, void *pv)
{
	struct gpu_preload *p = (struct gpu_preload *)pv;
	pthread_mutex_lock(&p->mu);
	if (!p->h_idx && !p->give_up) {
		p->h_idx = r->idx;
		p->h_val = r->val;
		p->nnz_cap = r->nnz_cap;
		p->rows_cap = r->rows_cap;
		pthread_cond_broadcast(&p->cv); /* copier 0 allocates */
	}
	if (p->load_over || p->give_up || r->idx != p->h_idx ||
	    r->val != p->h_val || r->nnz_cap != p->nnz_cap ||
	    r->nnz_end > p->nnz_cap || r->nnz_begin > r->nnz_end) {
		p->give_up = 1; /* another load, or not what was promised */
	} else if (r->nnz_end > r->nnz_begin) {
		if (p->qn == p->qcap) {
			size_t c = p->qcap ? 2 * p->qcap : 256;
			struct nz_range *t = (struct nz_range *)realloc(
				p->q, c * sizeof *t);
			if (!t) {
				p->give_up = 1;
				goto out;
			}
			p->q = t;
			p->qcap = c;
		}
		p->q[p->qn].a = r->nnz_begin;
		p->q[p->qn].b = r->nnz_end;
		p->qn++;
		p->q_nnz += r->nnz_end - r->nnz_begin;
		if (p->q_nnz >= BATCH_NNZ)
			pthread_cond_signal(&p->cv);
	}
out:
	pthread_mutex_unlock(&p->mu);
}

static void free_device(struct gpu_preload *p)
{
	if (!p->d_idx && !p->d_val)
		return;
	cudaSetDevice(p->device);
	cudaFree(p->d_idx);
	cudaFree(p->d_val);
	p->d_idx = NULL;
	p->d_val = NULL;
}

/* The load is over (d its dataset, or NULL): the copy, when it is whole
 * and d's; the first call decides, later ones repeat its answer. */
static const void *preload_done(void *pv, const struct boar_dataset *d)
{
	struct gpu_preload *p = (struct gpu_preload *)pv;
	if (!p->finished) {
		pthread_mutex_lock(&p->mu);
		p->load_over = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
		p->finished = 1;
		p->d = d;
		p->whole = d && !p->give_up && p->d_idx &&
			   d->task == BOAR_TASK_LINEAR && d->idx == p->h_idx &&
			   d->val == p->h_val && d->nnz == p->nnz_cap &&
			   d->n_rows == p->rows_cap && p->copied == d->nnz;
		if (!p->whole)
			free_device(p);
	}
	return p->whole ? p : NULL;
}

static void preload_release(void *pv)
{
	struct gpu_preload *p = (struct gpu_preload *)pv;
	if (!p)
		return;
	preload_done(p, NULL);
	free_device(p);
	for (int k = 0; k < COPIERS; k++)
		copier_close(&p->cp[k]);
	(void)cudaGetLastError();
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->q);
	free(p);
}

/* Whether pre holds d's non-zeros on device, not yet taken. */
static int holds(const struct gpu_preload *p, const struct boar_dataset *d,
		 int device)
{
	return p && p->whole && !p->taken && p->d == d && p->device == device &&
	       d->idx == p->h_idx && d->val == p->h_val &&
	       d->nnz == p->nnz_cap && d->n_rows == p->rows_cap;
}

uint64_t gpu_preload_bytes(const void *pre, const struct boar_dataset *d,
			   int device)
{
	const struct gpu_preload *p = (const struct gpu_preload *)pre;
	return holds(p, d, device)
		       ? p->nnz_cap * (sizeof(uint32_t) + sizeof(float))
		       : 0;
}

int gpu_preload_take(const void *pre, const struct boar_dataset *d,
		     int device, uint32_t **idx, float **val)
{
	struct gpu_preload *p = (struct gpu_preload *)pre;
	if (!holds(p, d, device))
		return 0;
	*idx = p->d_idx;
	*val = p->d_val;
	p->d_idx = NULL;
	p->d_val = NULL;
	p->taken = 1;
	return 1;
}

extern "C" const struct boar_gpu_preload_ops gpu_preload_ops = {
	preload_start,
	preload_rows,
	preload_done,
	preload_release,
};
