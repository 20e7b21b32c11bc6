/* train_cluster.h - what the cluster driver's two files share
 * (engine-internal): train_cluster.c runs the clocks against the
 * transport, cluster_keys.c finds each clock's keys. */
#ifndef BOAR_ENGINE_TRAIN_CLUSTER_H
#define BOAR_ENGINE_TRAIN_CLUSTER_H

#include <stdint.h>

#include <omp.h>

#include "data/feature_map.h"
#include "train.h"

/* Bits of the model's keys (from key 0): w, clear outside the words
 * [lo, hi) the last keys set in it touched. */
struct cluster_bits {
	uint64_t *w;
	uint64_t lo, hi;
};

struct cluster {
	const boar_ps_transport *t;
	int local_rows; /* t->local_rows, where t's size has it */
	/* Local keys (the engine's) to the model's: NULL where they are
	 * the same (every feature used). */
	const struct feature_map *fm;
	uint64_t dim;      /* the model's features (global) */
	uint64_t n_keys;   /* the engine's keys: (its dim + 1) * width */
	int can_shard;     /* the transport takes a model left sharded */
	int sharded;       /* finish: the model stays in the servers */
	int gathers;       /* the transport's finish gathers the model */
	int final_in_host; /* finish puts the gathered model in the host
			      model, where the last epoch is evaluated */
	float *gathered;   /* finish: the whole model, (dim + 1) * width */
	uint32_t width; /* keys per feature: K, or 1 */
	uint64_t *seen;  /* a bit per feature, all clear between clocks */
	/* This epoch's keys, found in one pass over the rows in storage
	 * order (epoch_marks): a bitmap per clock, and each row's clock. */
	uint64_t first, last, clocks; /* the schedule (cluster_start) */
	uint64_t words;               /* bitmap words per clock */
	uint64_t *clock_bits;         /* copies x clocks x words, or NULL */
	int copies;                   /* of the bitmaps: one per thread
					 (plain stores) or one (atomics) */
	uint32_t *clock_of;           /* per row: its clock, or NO_CLOCK */
	uint64_t next;                /* the clock the next pull is for */
	/* The transport's pull_ahead (or NULL), and the keys of clock
	 * ahead_k (NO_CLOCK: none) asked for with it. */
	int (*pull_ahead)(void *ctx, const uint64_t *keys, uint32_t n,
			  boar_error *err);
	uint64_t *ahead_keys, ahead_nk, ahead_k;
	/* The transport's pull_ahead_into (or NULL), and where the values
	 * of the keys asked ahead go (not the union's: with_vals), to
	 * become c->before when their clock starts. */
	int (*pull_ahead_into)(void *ctx, const uint64_t *keys, uint32_t n,
			       float *vals, boar_error *err);
	float *ahead_before;
	/* The transport's pull_ahead_ready (or NULL); loaded_ahead: the
	 * values asked ahead were collected and loaded with the store of
	 * the clock before (cluster_store.c), into what becomes before. */
	int (*pull_ahead_ready)(void *ctx);
	int loaded_ahead;
	/* The transport's pull_ahead_bits (or NULL), and the model's keys as
	 * bits (cluster_ask_bits.c; w NULL where a bitmap of every key
	 * would be too large): ahead_gbits those of ahead_gkeys unless they
	 * were the union with an evaluation's keys (ahead_with), gbits
	 * those of gkeys (kept, as gkeys is, until their pull is
	 * collected). */
	int (*pull_ahead_bits)(void *ctx, const uint64_t *keys, uint32_t n,
			       const uint64_t *bits, uint64_t bits_base,
			       float *vals, boar_error *err);
	struct cluster_bits gbits, ahead_gbits;
	/* The next clock's keys found while the current clock's answer is
	 * still coming (find_ahead): clock prep_k (NO_CLOCK: none), to be
	 * asked for as ask[0..n_ask) once that answer is in; prep_with: ask
	 * is the union with the evaluation's keys. */
	const uint64_t *ask;
	uint64_t n_ask, prep_k;
	int prep_with;
	/* The last clock of an epoch asks for the next epoch's first, with
	 * that epoch's order drawn ahead into next_order (the CPU engine's
	 * orders only; NULL: not drawn, the first clock is pulled when it
	 * starts). ahead_got: the answer was collected already (into
	 * before), for a request (refresh, finish) that came in between. */
	uint32_t *next_order;
	int epoch, ahead_got;
	/* The current clock's values came from a pull of its keys alone,
	 * the last one collected (not the union with an evaluation's keys,
	 * nor a pull collected before an evaluation pulled its own). */
	int pulled_alone;
	/* The keys an evaluation reads (the test set's features and the
	 * bias, ascending; cluster_eval_keys), found at the start; NULL (no
	 * test set): every key. */
	uint64_t *eval_keys, n_eval;
	/* Where an evaluation follows every epoch: the next epoch's first
	 * clock asked ahead together with the keys the evaluation reads, so
	 * that its refresh needs no pull of its own. Their union (the
	 * engine's keys, and the model's: the same array without a map),
	 * its values once collected, and where each of the clock's keys is
	 * in it; ahead_with: the pull asked ahead is that union. */
	uint64_t *with, *gwith, n_with;
	float *with_vals;
	uint32_t *with_pos;
	int ahead_with;
	uint64_t *keys;  /* the current clock's keys, ascending */
	uint64_t nk;
	/* The same keys as the transport knows them (the model's): the
	 * arrays above where there is no map. */
	uint64_t *gkeys, *ahead_gkeys;
	float *before, *delta;
	uint64_t cap;
	/* AdaGrad's sums shared through the servers (cluster_adagrad.c):
	 * key_copies 2 (gkeys, before and delta hold the clock's sums after
	 * its weights), else 1; shared_sums: the transport's shared_sums. */
	int shared_sums, key_copies;
	struct cluster_sums *sums;
	double phase[BOAR_PS_PHASES]; /* seconds per boar_ps_phase */
	double mark;                  /* when the last phase ended */
};

#define NO_CLOCK UINT32_MAX

/* The train_hook's finish and final_into_host, and the model returned
 * (cluster_finish.c): see there. */
int cluster_finish(void *ctx, const struct train_run *r, boar_error *err);
int cluster_final_into_host(void *ctx, const struct train_run *r);
int cluster_global_model(struct cluster *c, const boar_dataset *train,
			 struct boar_model *lm, boar_model **out,
			 boar_error *err);

/* The pull asked ahead collected now (train_cluster.c). @return 0 or an
 * error. */
int cluster_settle_ahead(struct cluster *c, boar_error *err);
/* After clock k's sweep: its deltas into c->delta (the bias's damped),
 * and where the next clock's answer is in, its values collected and
 * loaded in the same pass (c->loaded_ahead). @return 0 or an error. */
int cluster_store(struct cluster *c, const struct train_run *r, uint64_t k,
		  boar_error *err);
/* Less work than this many non-zeros (or 16 times as many bitmap words)
 * stays on one thread: a parallel region costs more than it saves. */
#define PARALLEL_MIN (1u << 18)

/* The worker's arrays of a clock's keys, values and bits (megabytes each
 * with a large model, first written in the first epoch), zeroed or not:
 * in huge pages where the system gives them on request
 * (base/huge_pages.h), for fewer faults in that epoch and fewer
 * page walks where the bitmaps are set at random. */
void *cluster_alloc(size_t bytes, int zeroed);

/* The worker's threads (the engine's). */
static inline int threads_of(const struct train_run *r)
{
	return r->o.threads > 0 ? r->o.threads : omp_get_max_threads();
}

/* The key finders' scratch for the schedule in c (first, last, clocks)
 * and r's data and threads: words, seen (NULL: out of memory) and the
 * epoch's bitmaps (clock_bits, clock_of, copies; NULL where they would
 * not fit or memory ran out: clocks are then marked one by one). */
void cluster_keys_start(struct cluster *c, const struct train_run *r);
/* cluster_ask_bits.c: gbits and ahead_gbits, where the transport takes
 * bits and a bitmap of the model's keys is no larger than a clock's key
 * array (else their w stay NULL); freed. */
void cluster_ask_bits_start(struct cluster *c);
void cluster_ask_bits_free(struct cluster *c);
/* Where the keys about to be found ahead should have their bits set:
 * ahead_gbits cleared (its words of the keys before), or NULL (none: not
 * the union with an evaluation's keys, nor with shared sums). */
uint64_t *cluster_ask_bits_ready(struct cluster *c);
/* keys[0..n) (ascending) as the bits of bits (key k: bit k % 64 of word
 * k / 64), the words from keys[0]'s to keys[n - 1]'s cleared first, on
 * `threads` threads. */
void cluster_keys_as_bits(const uint64_t *keys, uint64_t n, uint64_t *bits,
			  int threads);
/* After the keys found ahead (ahead_gkeys, ahead_nk) set their bits in
 * what cluster_ask_bits_ready gave (bits; NULL: none): the words they
 * touched, for the next cluster_ask_bits_ready to clear. */
void cluster_ask_bits_found(struct cluster *c, const uint64_t *bits);

/* The bits of ascending keys, a word at a time: the word being made (w,
 * x) kept in a register and or-ed into bits once the keys leave it
 * (another thread's run of keys may end or begin in the same word), and
 * by bit_run_end after the run's last key. */
struct bit_run {
	uint64_t *bits, w, x;
};

static inline void bit_run_add(struct bit_run *b, uint64_t key)
{
	if (key >> 6 != b->w) {
		if (b->x)
			__atomic_fetch_or(&b->bits[b->w], b->x,
					  __ATOMIC_RELAXED);
		b->w = key >> 6;
		b->x = 0;
	}
	b->x |= 1ull << (key & 63);
}

static inline void bit_run_end(struct bit_run *b)
{
	if (b->x)
		__atomic_fetch_or(&b->bits[b->w], b->x, __ATOMIC_RELAXED);
}

/* Drops the epoch's bitmaps (clocks are then marked one by one). */
void cluster_keys_no_bitmaps(struct cluster *c);
/* Frees what cluster_keys_start made. */
void cluster_keys_free(struct cluster *c);
/* Where clock k of an epoch starts in its order (the driver's cut). */
uint64_t cluster_clock_begin(const struct cluster *c, uint64_t k);
/* Distinct keys of clock k's rows (positions of order) plus the bias,
 * ascending, into keys (the engine's), and as the model knows them into
 * gkeys (cluster_to_global's; nothing more where gkeys is keys); with
 * gbits (clear wherever the model's keys may fall, or NULL), their bits
 * set there (cluster_keys_as_bits'). @return how many. */
uint64_t cluster_clock_keys(struct cluster *c, const struct train_run *r,
			    const uint32_t *order, uint64_t k, uint64_t *keys,
			    uint64_t *gkeys, uint64_t *gbits);
/* The keys (the engine's) an evaluation of test reads, into a new
 * c->eval_keys (c->n_eval of them): test's features below the engine's
 * dim, and the bias. c->seen is scratch, clear again after.
 * @return 0, or -1 out of memory. */
int cluster_eval_keys(struct cluster *c, const struct train_run *r,
		      const struct boar_dataset *test);
/* The union of ascending a[0..na) and b[0..nb), ascending, into out;
 * pos_a[i]: where a[i] is in it. @return its size. */
uint64_t cluster_union(const uint64_t *a, uint64_t na, const uint64_t *b,
		       uint64_t nb, uint64_t *out, uint32_t *pos_a);
/* keys[0..n) (the engine's) as the model's keys, into out (without a
 * map: a copy, or nothing where out is keys). */
void cluster_to_global(const struct cluster *c, const struct train_run *r,
		       const uint64_t *keys, uint64_t *out, uint64_t n);

#endif
