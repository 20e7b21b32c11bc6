/* engine_ops.h - what an engine offers the training driver (train.c).
 *
 * The core owns this interface; the engines implement it: the CPU Hogwild!
 * engine (engine_cpu.c over engine.c), the CUDA engine (gpu/gpu_ops.c,
 * built into the plugin libboar-gpu.so that engine_gpu.c opens at
 * device = GPU) and, when no plugin can be opened, a stub whose open says
 * why. The driver never names an engine: it opens one, asks for each
 * epoch's order, sweeps slices of it, moves weights by key (cluster
 * clocks), syncs the weights to the host model (evaluation, the end) and
 * closes it. So the core includes no engine header and the engines include
 * only core headers (dataset.h, model.h, this one).
 *
 * What an engine cannot do is said once, in its caps, and refused by one
 * table (engine_caps.c) with one message per missing capability.
 *
 * A plain C struct of function pointers, versioned by abi: the GPU plugin
 * is built separately and is refused when its abi differs.
 */
#ifndef BOAR_ENGINE_OPS_H
#define BOAR_ENGINE_OPS_H

#include <stdint.h>

#include "boar.h"

#ifdef __cplusplus
extern "C" {
#endif

struct boar_dataset;
struct boar_model;

/* What a run may need of its engine (and of where it runs: see
 * engine_caps.c). The first one missing, in this order, is the one a
 * refusal names. */
#define BOAR_CAPS_MAP(X)                                                    \
	X(MF, "matrix factorization")                                       \
	X(MULTICLASS, "multiclass models")                                  \
	X(WARM_START, "a warm start from a model")                          \
	X(EARLY_STOP, "early stopping")                                     \
	X(SUBSET, "a holdout (early stopping without a test set)")          \
	X(DETERMINISTIC, "deterministic training")                          \
	X(WEIGHTS, "instance or class weights")                             \
	X(SLICES, "slices of an epoch and weights by key")                  \
	X(NORMALIZED, "optimizer normalized (use adagrad)")                 \
	X(MF_NONNEG, "non-negative factors (mf_nonneg)")                    \
	X(MF_L2_SPLIT, "an l2_user or l2_item other than l2")               \
	X(MF_ABSOLUTE, "the absolute (MAE) loss of MF")                    \
	X(BIAS_SCALE, "a bias_scale other than 1")

enum boar_cap_bit {
#define BOAR_CAP_BIT(name, what) BOAR_CAP_BIT_##name,
	BOAR_CAPS_MAP(BOAR_CAP_BIT)
#undef BOAR_CAP_BIT
	BOAR_CAP_COUNT
};
#define BOAR_CAP(name) (1u << BOAR_CAP_BIT_##name)
#define BOAR_CAPS_ALL ((1u << BOAR_CAP_COUNT) - 1)

/* What an engine may do to the rows and weights it is given (the layout
 * argument of open below; an engine that cannot, ignores it). */
enum boar_engine_layout {
	/* Copy the rows once, shuffled, into its own arrays and visit them
	 * in random blocks (engine_pack.c): faster sweeps for the price of a
	 * copy, so boar_train asks for it when it runs more than one epoch.
	 * The orders a packed engine hands out then index its copy, not d:
	 * callers that map order entries to d's rows (the cluster worker)
	 * leave it out. */
	BOAR_LAYOUT_PACK = 1,
	/* Keep AdaGrad's sums beside the weights in an array of its own
	 * (engine.c), one cache line per coordinate instead of two: the
	 * caller changes the model's weights between sweeps only through
	 * the engine (weights by key, below), and reads them after a
	 * sync, which hands them back. */
	BOAR_LAYOUT_INTERLEAVE = 2,
	BOAR_LAYOUT_ALL = BOAR_LAYOUT_PACK | BOAR_LAYOUT_INTERLEAVE,
};

/* Bump when a member of boar_engine_ops changes. */
#define BOAR_ENGINE_ABI 3 /* 3: store_deltas for store_keys */

struct boar_engine_ops {
	int abi;          /* BOAR_ENGINE_ABI */
	const char *name; /* "the CPU engine", "the GPU engine" */
	unsigned caps;    /* BOAR_CAP(...) bits */
	/* Prepares to train m (shaped for d, initialized) on rows[0..n) of
	 * d (rows NULL: all n = d->n_rows) with resolved options o, laid out
	 * as layout (enum boar_engine_layout) allows. */
	int (*open)(const struct boar_dataset *d, const boar_options *o,
		    struct boar_model *m, const uint32_t *rows, uint64_t n,
		    int layout, void **out, boar_error *err);
	/* Rows in an epoch. */
	uint64_t (*rows)(void *e);
	/* *order = the rows of `epoch` (1-based, asked in increasing order)
	 * in the order a sweep visits them, rows() entries; NULL when the
	 * engine orders blocks of its own (MF). */
	int (*order)(void *e, int epoch, const uint32_t **order,
		     boar_error *err);
	/* Sweeps positions [begin, end) of epoch's order with step size eta;
	 * adds the progressive loss of those rows to *loss_sum. */
	int (*sweep)(void *e, int epoch, uint64_t begin, uint64_t end,
		     double eta, double *loss_sum, boar_error *err);
	/* The engine's weights of n distinct keys (positions in the linear
	 * model's w) from vals; and, after a sweep, how far each moved from
	 * the value loaded: deltas[i] = its weight - before[i] (one pass over
	 * the keys, where storing the weights and subtracting took two). */
	int (*load_keys)(void *e, const uint64_t *keys, const float *vals,
			 uint64_t n, boar_error *err);
	int (*store_deltas)(void *e, const uint64_t *keys, const float *before,
			    float *deltas, uint64_t n, boar_error *err);
	/* The engine's weights into the host model m (the one it opened). */
	int (*sync)(void *e, struct boar_model *m, boar_error *err);
	void (*close)(void *e);
	/* Rows swept since open, roughly (a few dozen per thread may be
	 * missing), read from another thread while a sweep runs (relaxed
	 * loads); UINT64_MAX, or a NULL member, when the engine cannot tell
	 * (boar_sweep_stats). */
	uint64_t (*rows_done)(void *e);
};

/* The table of an engine whose members are PREFIX_open ... PREFIX_close:
 * one list of the members, so that every engine names them alike and one
 * added above is added to every engine. */
#define BOAR_ENGINE_OPS(prefix, engine_name, engine_caps)                    \
	{                                                                    \
		.abi = BOAR_ENGINE_ABI, .name = (engine_name),               \
		.caps = (engine_caps), .open = prefix##_open,                \
		.rows = prefix##_rows, .order = prefix##_order,              \
		.sweep = prefix##_sweep, .load_keys = prefix##_load_keys,    \
		.store_deltas = prefix##_store_deltas, .sync = prefix##_sync,\
		.close = prefix##_close, .rows_done = prefix##_rows_done,    \
	}

/* The CPU engine (engine_cpu.c). */
extern const struct boar_engine_ops boar_engine_cpu_ops;

/* *ops = the engine for o->device: the CPU's, or the GPU plugin's
 * (engine_gpu.c opens libboar-gpu.so.N: o->gpu_plugin if set, else beside
 * the library or program, else the install's libdir, else the loader's
 * search path). BOAR_ENOGPU with every place tried when none opens: the
 * stub of a build or machine without the CUDA engine. */
int boar_engine_for(const boar_options *o, const struct boar_engine_ops **ops,
		    boar_error *err);

/* For o->device = GPU, opens the plugin and starts CUDA (driver and the
 * device's context, a few tenths of a second) on a thread, so that it
 * overlaps what the caller does next (reading the data); NULL when there
 * is nothing to start (CPU, no plugin, no thread). Whatever fails is left
 * for boar_train to report. boar_engine_warm_join waits for it (NULL: no-op). */
void *boar_engine_warm_start(const boar_options *o);
void boar_engine_warm_join(void *warm);

/* The training file's rows to the card while it is parsed (one GPU): the
 * loader's rows_ready hook (boar_load_options; ctx the warm handle) hands
 * each finished range to the warm thread, which, once CUDA is up, copies
 * it into device arrays of the counted sizes. boar_engine_warm_done, after
 * the load (d: the dataset, NULL when it failed), waits for the copies
 * and returns what boar_options.gpu_preload takes: the copy when it is
 * whole and still d's rows in place (boar_rows_ready says when they move),
 * else NULL (the engine then copies as usual). The copy belongs to the
 * warm handle until an engine opened on d takes it; boar_engine_warm_join
 * frees what was not taken. Where nothing is copied (--gpus N, data
 * that is not a plain LIBSVM file) done only waits for CUDA and returns
 * NULL; a NULL handle (CPU, no plugin): no-ops. */
void boar_engine_warm_rows(const boar_rows_ready *r, void *warm);
const void *boar_engine_warm_done(void *warm, const struct boar_dataset *d);

/* The entry point of the GPU plugin: its ops when abi matches, else NULL. */
typedef const struct boar_engine_ops *(*boar_gpu_plugin_fn)(int abi);
#define BOAR_GPU_PLUGIN_SYMBOL "boar_gpu_plugin_ops"
#define BOAR_GPU_WARM_SYMBOL "boar_gpu_plugin_warm" /* void (int device) */
#define BOAR_GPU_PLUGIN_NAME "libboar-gpu.so.0"

/* The plugin's copy of the rows while they are parsed (the warm thread of
 * one GPU; see boar_engine_warm_rows): start opens CUDA on device and
 * then copies the rows it is given until done, which returns the copy for
 * boar_options.gpu_preload or NULL; release frees the handle and what no
 * engine took. */
struct boar_gpu_preload_ops {
	void *(*start)(int device);
	void (*rows)(const boar_rows_ready *r, void *p);
	const void *(*done)(void *p, const struct boar_dataset *d);
	void (*release)(void *p);
};
#define BOAR_GPU_PRELOAD_SYMBOL "boar_gpu_plugin_preload" /* ops (void) */

/* What the run asks of the engine (BOAR_CAP bits), from the data, the
 * resolved options, the fresh model and whether rows are held out. */
unsigned boar_caps_needed(const struct boar_dataset *d, const boar_options *o,
			  const struct boar_model *m, int holdout);

/* 0 when `have` covers `need`; else BOAR_EINVAL with "WHO does not support
 * WHAT; ADVICE" for the first capability missing. */
int boar_caps_check(unsigned need, unsigned have, const char *who,
		    const char *advice, boar_error *err);

#ifdef __cplusplus
}
#endif
#endif
