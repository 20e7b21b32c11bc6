/* engine.h - the CPU Hogwild! engine as a library-internal API.
 *
 * The driver (train.c) reaches it only through the engine interface
 * (engine_cpu.c implements engine_ops.h with the functions below), for
 * whole epochs or, in cluster training, slices of one between pulls and
 * pushes. The engine owns the
 * training-only state (per-feature regularization scales, AdaGrad sums, the
 * row order) and updates the caller's model in place.
 */
#ifndef BOAR_ENGINE_H
#define BOAR_ENGINE_H

#include <stdint.h>

#include "boar.h"
#include "engine_ops.h"

struct boar_dataset;
struct boar_model;
struct boar_engine;

/* Prepares to train m (already shaped and initialized for d, see
 * boar_model_init_for()) on d with resolved options o (copied). */
int boar_engine_create(const struct boar_dataset *d, const boar_options *o,
		       struct boar_model *m, struct boar_engine **out,
		       boar_error *err);

/* Same, training only on rows[0..n) of d (e.g. all but a holdout), laid
 * out as layout (enum boar_engine_layout bits, engine_ops.h) allows. */
int boar_engine_create_subset(const struct boar_dataset *d,
			      const boar_options *o, struct boar_model *m,
			      const uint32_t *rows, uint64_t n, int layout,
			      struct boar_engine **out, boar_error *err);

/* Rows in an epoch (n_rows of the dataset, or the subset's size). */
uint64_t boar_engine_rows(const struct boar_engine *e);

/* The row order of `epoch` (1-based; boar_engine_rows() entries); NULL for
 * MF, which orders blocks of ratings instead (engine.c). Epochs must be asked
 * for in increasing order: each epoch's order is drawn from the previous
 * one, which keeps reshuffling O(n) and parallel. */
const uint32_t *boar_engine_order(struct boar_engine *e, int epoch);
/* Epoch `epoch`'s order into to[n], drawn from the previous epoch's (from):
 * what boar_engine_order hands out (a cluster worker draws the next one
 * while it still sweeps this one). Any thread count gives the same. */
void boar_order_next(const uint32_t *from, uint32_t *to, uint64_t n,
		     uint64_t seed, int epoch, int threads);

/* One Hogwild! sweep over order[begin..end) of `epoch` on the engine's
 * threads with step size eta (the driver's schedule), updating the model in
 * place. Adds the progressive loss of the visited rows to *loss_sum. */
int boar_engine_sweep(struct boar_engine *e, int epoch, uint64_t begin,
		      uint64_t end, double eta, double *loss_sum);

void boar_engine_free(struct boar_engine *e);

/* The interleaved weights (engine.c, wg) into the model, if it lacks their
 * latest steps; the driver's sync (engine_cpu.c). */
void boar_engine_export(struct boar_engine *e);

/* ---- shared between engine.c and the sweeps */

/* The rows a linear sweep reads, indexed by the entries of the epoch's
 * order: the dataset's own arrays, or the engine's packed copy. */
struct boar_rows {
	const uint64_t *row_ptr;
	const uint32_t *idx;
	const float *val;
	const float *label;
	const float *row_weight;   /* instance x class weight, or NULL */
	const uint32_t *row_class; /* multiclass class index, or NULL */
	const uint16_t *hot_n; /* entries at the head of each row that are
				  hot slots (binary) or contended ids
				  (multiclass; engine_hot.c), or NULL */
};

/* Rows per block of a packed linear engine. */
#define BOAR_ROW_BLOCK 64

/* One rating, packed so that a sweep touches one cache line per rating. */
struct boar_triplet {
	uint32_t user, item;
	float rating;
};

struct boar_engine {
	const struct boar_dataset *d;
	struct boar_model *m;
	boar_options o;     /* resolved: no BOAR_AUTO left */
	int threads;
	float *reg_scale;   /* linear with l1/l2: n_rows / rows-with-feature */
	float *accum;       /* AdaGrad sums: linear dim+1; MF users + items */
	float *wg;          /* or a binary model's weights and AdaGrad sums
			       interleaved, w_j at 2j and its sum at 2j + 1,
			       copied to the model at a sync */
	int wg_ahead;       /* wg has steps the model lacks */
	/* wg compacted (engine_compact.c): slot c < wg_n holds feature
	 * wg_ids[c] (ascending), slot wg_n the bias; the sums of the
	 * features left out aside in wg_idle_* (ids ascending) */
	int wg_tried;
	uint32_t *wg_ids, *wg_idle_ids;
	uint64_t wg_n, wg_idle_n;
	float *wg_idle_sums, wg_zero;
	/* Optimizer NORMALIZED (math/step.h): each feature's scale s_j
	 * (dim + 1, the biases' 1). The sweeps see the values divided by it
	 * (the engine's copy of the rows) and the weights times it, the
	 * model's weights in between sweeps; the step is eta * norm_factor. */
	float *norm_scale;
	double norm_factor;
	struct boar_rows rows; /* what the linear sweeps read */
	float *row_weight;  /* instance x class weight per row, or NULL */
	uint32_t *row_class; /* multiclass: class index of each row */
	void *packed[4];    /* a packed engine's copies of d's CSR arrays */
	float *det_buf;     /* deterministic: a batch's derivatives */
	uint64_t n;         /* rows in an epoch */
	uint32_t *order;    /* the current epoch's row order */
	uint32_t *spare;    /* scratch of the same size for reshuffling */
	struct boar_triplet *trips; /* MF: the ratings, packed (engine.c) */
	uint64_t *block_start; /* MF: block b is trips[block_start[b]..[b+1]) */
	uint64_t *cell_block;  /* MF: grid cell c owns block ids
				  cell_block[c]..cell_block[c+1] */
	uint32_t grid;         /* MF: users and items cut into grid ranges */
	uint32_t *block_order; /* MF or packed rows: the epoch's block order */
	uint64_t n_blocks;
	int order_epoch;    /* epoch held in order (0: the initial shuffle) */
	/* Hot coordinates (sweep_replica.h): each thread's replica of
	 * rep_n slots (the n_hot hot features, then the biases), living at
	 * w[rep_at[s]]; thread t's slots start at rep_slots + t * rep_stride. */
	uint32_t n_hot, rep_n, rep_stride;
	uint64_t *rep_at;
	struct boar_rep_slot *rep_slots;
	uint64_t *rep_syncs; /* rounds of replica syncs (a line of its own) */
	uint32_t *hot_slot;  /* while packing: slot + 1 of each feature, or 0 */
	int hot_ids;         /* the head keeps ids (contended), not slots */
	uint16_t *hot_n;     /* see boar_rows.hot_n */
	void *remapped[2];   /* unpacked rows with hot slots: idx, val copies */
};

/* A cluster worker's weights by key (engine_ops.h's load_keys and
 * store_deltas): keys are positions in the model's w, wherever the
 * engine keeps them. */
void boar_engine_load_keys(struct boar_engine *e, const uint64_t *keys,
			   const float *vals, uint64_t n);
void boar_engine_store_deltas(const struct boar_engine *e,
			      const uint64_t *keys, const float *before,
			      float *deltas, uint64_t n);
/* store_deltas of a clock's keys a[0..na) and load_keys of the next
 * clock's b[0..nb) (both ascending) in one pass, the values of b's keys
 * that a has too with a's delta added (vals[i] += deltas[j] where b[i] ==
 * a[j], before they load): the next clock's values pulled before this
 * clock's push, made to count it as a pull after it would. One pass over
 * the weights and each list, with no branch on the keys, where the store,
 * the merge of the pushed deltas into the pulled values and the load
 * took three (each about as long as the sweep's own misses on a model
 * larger than the caches). vals is written back as loaded. */
void boar_engine_store_load(struct boar_engine *e, const uint64_t *a,
			    const float *before, float *deltas, uint64_t na,
			    const uint64_t *b, float *vals, uint64_t nb);

/* engine_compact.c: wg renumbered to the features the rows use (once,
 * before the first sweep); the address of coordinate j's AdaGrad sum in
 * wg, compacted or not; the compacted weights into the model. */
void boar_engine_compact(struct boar_engine *e);
float *boar_engine_wg_sum(struct boar_engine *e, uint64_t j);
void boar_engine_export_compact(struct boar_engine *e);

/* Sweeps of one model kind over order[begin..end); return the loss sum. */
double boar_sweep_linear(struct boar_engine *e, const uint32_t *order,
			 uint64_t begin, uint64_t end, float eta);
double boar_sweep_multiclass(struct boar_engine *e, const uint32_t *order,
			     uint64_t begin, uint64_t end, float eta);
/* Rows per batch of the deterministic sweep. */
#define BOAR_DET_BATCH 512

double boar_sweep_deterministic(struct boar_engine *e, const uint32_t *order,
				uint64_t begin, uint64_t end, float eta);
/* engine_pack.c: copies the rows of order[0..n) into the engine's own
 * arrays (row weights and classes too) and points rows at them; 0 or
 * BOAR_ENOMEM (then the engine is left as it was). */
int boar_engine_pack_rows(struct boar_engine *e);
/* engine_hot.c: picks the hot features (when the rows will be copied
 * (remap), with more than one thread: replicated for a binary model, into
 * rep_at; stepped by compare-and-swap for a multiclass one) into hot_slot,
 * and sizes every thread's replica (the biases always have one).
 * 0 or BOAR_ENOMEM. */
int boar_engine_pick_hot(struct boar_engine *e, int remap);
/* Copies one row's ids and values to dst, hot features first as slot ids
 * (or ids, hot_ids) (hot_slot set), the rest in order; returns how many
 * are hot. */
uint16_t boar_engine_copy_row(const struct boar_engine *e, const uint32_t *idx,
			      const float *val, uint64_t len, uint32_t *didx,
			      float *dval);
/* Unpacked rows with hot features: private copies of the dataset's ids and
 * values with the hot ones remapped (if there is room; else the hot
 * features are dropped and only the biases are replicated). */
void boar_engine_remap_rows(struct boar_engine *e);
/* This thread's replica, opened (a sweep's slice starts with it). */
struct boar_replica;
void boar_engine_replica(struct boar_engine *e, struct boar_replica *r);
/* engine_norm.c, optimizer NORMALIZED: the scales and the step's factor
 * from the engine's rows (0 or BOAR_ENOMEM); a scaled copy of the values
 * when the rows are still the dataset's (copy_row scales the others);
 * the model's weights into the sweeps' space (to_sweep) or back. */
int boar_engine_norm_setup(struct boar_engine *e);
int boar_engine_norm_values(struct boar_engine *e);
void boar_engine_norm_weights(struct boar_engine *e, int to_sweep);
/* engine_pack.c: whether `bytes` more fit in memory comfortably. */
int boar_engine_room_for(uint64_t bytes);

/* The epoch's order of a packed engine: its blocks in a fresh random order,
 * expanded into order[]. */
void boar_engine_order_blocks(struct boar_engine *e, int epoch);

/* shuffle_ratings.c: the ratings rows[0..n) (rows NULL: the first n) of d
 * into out[n] in a uniformly random order drawn from seed; the same order
 * at any thread count. 0 or BOAR_ENOMEM. */
int boar_shuffle_ratings(const struct boar_dataset *d, const uint32_t *rows,
			 uint64_t n, uint64_t seed, int threads,
			 struct boar_triplet *out);

/* Ratings per block of the MF sweep (see engine.c). */
#define BOAR_MF_BLOCK 256

/* MF sweeps a whole epoch (the range arguments are not used: the cluster
 * does not train MF), cell stratum by cell stratum (engine.c). */
double boar_sweep_mf(struct boar_engine *e, uint64_t begin, uint64_t end,
		     float eta);

#endif
