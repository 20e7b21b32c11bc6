/* test_engine_hot.c - which features the CPU engine treats as hot, and the
 * rows it rewrites for them (src/engine/engine_hot.c).
 *
 * A multiclass model's hot features (in a large share of the rows) are
 * listed at the head of each row, as ids, and stepped by compare-and-swap
 * by the sweep: racy stores lost enough of their updates to move the loss
 * of a 3-class set 5-35% from one thread's. They are listed only where an
 * update can be lost (more than one thread, racy updates), and a binary
 * model of small data replicates nothing (too few rows per replica). The
 * rewritten rows must hold the same non-zeros as the dataset's, and
 * training through them must still learn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "data/dataset.h"
#include "engine/engine.h"
#include "model/model.h"
#include "testutil.h"

#define ROWS 3000
#define DIM 400

/* Class c in 1..3 sets feature c to 1; features 4..6 are in every other
 * row, the rest in about 1 row of 100. */
static boar_dataset *make_data(void)
{
	size_t cap = (size_t)ROWS * 200, len = 0;
	char *text = malloc(cap);
	unsigned s = 7;
	for (int r = 0; r < ROWS && text; r++) {
		int c = 1 + r % 3;
		len += (size_t)snprintf(text + len, cap - len, "%d", c);
		for (int j = 1; j <= DIM; j++) {
			s = s * 1103515245u + 12345u;
			unsigned u = (s >> 16) % 100;
			int on = j <= 3 ? j == c : (j <= 6 ? u < 50 : u == 0);
			if (on)
				len += (size_t)snprintf(text + len, cap - len,
							" %d:%.2f", j,
							j <= 3 ? 1.0 : 0.01 * (u + 1));
		}
		len += (size_t)snprintf(text + len, cap - len, "\n");
	}
	const char *path = test_put_file("c3.svm", text, len);
	free(text);
	boar_load_options lo;
	boar_load_options_default(&lo);
	boar_dataset *d = NULL;
	boar_error err;
	int rc = boar_dataset_load(path, &lo, &d, &err);
	CHECK(rc == 0, "load: %s", err.message);
	return rc ? NULL : d;
}

static uint32_t feature_count(const boar_dataset *d, uint32_t j)
{
	uint32_t n = 0;
	for (uint64_t k = 0; k < d->nnz; k++)
		n += d->idx[k] == j;
	return n;
}

/* Every row of the engine holds the dataset row's non-zeros, its first
 * hot_n of them the hot ids, in order, the rest in the dataset's order. */
static void check_rows(const struct boar_engine *e, const boar_dataset *d,
		       uint32_t thr)
{
	const struct boar_rows *rw = &e->rows;
	int bad = 0;
	for (uint64_t r = 0; r < d->n_rows && !bad; r++) {
		uint64_t lo = d->row_ptr[r], n = d->row_ptr[r + 1] - lo;
		uint64_t elo = rw->row_ptr[r];
		uint32_t h = rw->hot_n[r], seen_hot = 0, at = 0;
		for (uint64_t k = 0; k < n; k++) {
			uint32_t j = d->idx[lo + k];
			int hot = feature_count(d, j) >= thr;
			seen_hot += hot;
			uint64_t want = hot ? elo + seen_hot - 1 : elo + h + at++;
			bad |= rw->idx[want] != j || rw->val[want] != d->val[lo + k];
		}
		bad |= seen_hot != h;
	}
	CHECK(!bad, "a rewritten row differs from the dataset's");
}

static struct boar_engine *open_engine(const boar_dataset *d, int classes,
				       int threads, int update)
{
	static const float labels[3] = {1, 2, 3};
	struct boar_model *m =
		classes ? boar_model_alloc_multiclass(BOAR_LOSS_SOFTMAX, d->dim,
						      3, labels)
			: boar_model_alloc(BOAR_TASK_LINEAR, BOAR_LOSS_LOGISTIC,
					   d->dim, 0, 0, 0);
	boar_options o;
	boar_options_default(&o);
	o.threads = threads;
	o.update = update;
	o.optimizer = BOAR_OPT_ADAGRAD; /* values as given (not NORMALIZED's) */
	struct boar_engine *e = NULL;
	boar_error err;
	int rc = m ? boar_engine_create_subset(d, &o, m, NULL, d->n_rows,
					       BOAR_LAYOUT_ALL, &e, &err)
		   : BOAR_ENOMEM;
	CHECK(rc == 0, "engine: %s", rc == BOAR_ENOMEM ? "no memory" : err.message);
	return e;
}

static void close_engine(struct boar_engine *e)
{
	struct boar_model *m = e->m;
	boar_engine_free(e);
	boar_model_free((boar_model *)m);
}

int main(void)
{
	snprintf(test_dir, sizeof test_dir, "/tmp/boar-hot-XXXXXX");
	if (!mkdtemp(test_dir))
		TEST_SKIP("no scratch directory");
	boar_dataset *d = make_data();
	if (!d)
		return TEST_RESULT();
	/* 4 threads: hot = in at least 0.5 * ROWS / 4 rows (375): the class
	 * features (1000 rows each) and 4..6 (about 1500), nothing else */
	uint32_t thr = (uint32_t)(0.5 * ROWS / 4) + 1;
	CHECK(feature_count(d, 1) >= thr && feature_count(d, 4) >= thr &&
		      feature_count(d, 7) < thr,
	      "the data does not have the intended shape");

	struct boar_engine *e = open_engine(d, 1, 4, BOAR_UPDATE_RACY);
	if (e) {
		CHECK(e->rows.hot_n != NULL, "multiclass, 4 racy threads: no hot features listed");
		CHECK_EQ_INT(e->n_hot, 0);  /* none replicated */
		if (e->rows.hot_n)
			check_rows(e, d, thr);
		/* a sweep through the rewritten rows learns: the second
		 * epoch's loss is below the first's */
		double l1 = 0, l2 = 0;
		CHECK(boar_engine_sweep(e, 1, 0, d->n_rows, 0.1, &l1) == 0 &&
			      boar_engine_sweep(e, 2, 0, d->n_rows, 0.1, &l2) == 0,
		      "sweep failed");
		CHECK(l2 < l1 && l2 / ROWS < 0.5, "loss %g then %g", l1 / ROWS,
		      l2 / ROWS);
		close_engine(e);
	}
	/* no update can be lost: nothing listed */
	if ((e = open_engine(d, 1, 4, BOAR_UPDATE_ATOMIC))) {
		CHECK(e->rows.hot_n == NULL, "multiclass, atomic: hot features listed");
		close_engine(e);
	}
	if ((e = open_engine(d, 1, 1, BOAR_UPDATE_RACY))) {
		CHECK(e->rows.hot_n == NULL, "multiclass, 1 thread: hot features listed");
		close_engine(e);
	}
	/* binary: 3000 rows are too few to replicate any feature */
	if ((e = open_engine(d, 0, 4, BOAR_UPDATE_RACY))) {
		CHECK(e->rows.hot_n == NULL && e->n_hot == 0,
		      "binary, small data: features replicated");
		CHECK_EQ_INT(e->rep_n, 1);
		close_engine(e);
	}
	boar_dataset_free(d);
	unlink(test_put_file("c3.svm", "", 0));
	rmdir(test_dir);
	return TEST_RESULT();
}
