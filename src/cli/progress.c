/* progress.c - progress lines and metric summaries (see progress.h). */
#include <math.h>
#include <stdarg.h>
#include <unistd.h>

#include "common.h"
#include "progress.h"

void progress_init(struct progress *p, int quiet)
{
	p->quiet = quiet;
	p->tty = isatty(STDERR_FILENO);
	p->open = 0;
	p->holdout = 0;
	p->t0 = 0;
}

/* snprintf into line at *n, keeping *n within the buffer. */
static void append(char *line, size_t size, int *n, const char *fmt, double a,
		   double b, double c)
{
	if (*n < 0 || (size_t)*n >= size)
		return;
	int k = snprintf(line + *n, size - *n, fmt, a, b, c);
	if (k > 0)
		*n += k;
}

void progress_epoch(struct progress *p, const boar_epoch_stats *s, int epochs,
		    int kind)
{
	if (p->quiet)
		return;
	char line[320];
	int n = snprintf(line, sizeof line,
			 "epoch %3d/%d  %7.3f s  %8.1f M upd/s  train loss %.4f",
			 s->epoch, epochs, s->seconds, s->updates_per_sec / 1e6,
			 s->train_loss);
	if (s->has_test) {
		append(line, sizeof line, &n, "  test loss %.4f", s->test_loss,
		       0, 0);
		if (kind == PROGRESS_RMSE)
			append(line, sizeof line, &n, "  RMSE %.4f  MAE %.4f",
			       s->test_rmse, s->test_mae, 0);
		else
			append(line, sizeof line, &n, "  accuracy %.4f",
			       s->test_accuracy, 0, 0);
		/* AUC is undefined for multiclass, and for a test set of
		 * one class: no column rather than "nan". */
		if (kind == PROGRESS_BINARY && isfinite(s->test_auc))
			append(line, sizeof line, &n, "  AUC %.4f", s->test_auc,
			       0, 0);
	}
	if (p->holdout || (s->has_holdout && !s->has_test)) {
		append(line, sizeof line, &n, "  holdout loss %.4f",
		       s->holdout_loss, 0, 0);
	}
	if (s->has_holdout)
		append(line, sizeof line, &n, "  (best epoch %.0f)",
		       s->best_epoch, 0, 0);
	progress_clear(p);
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

void progress_clear(struct progress *p)
{
	/* \033[K clears the rest of the line the live text took. */
	if (p->open)
		fputs("\r\033[K", stderr);
	p->open = 0;
}

void progress_live(struct progress *p, const char *fmt, ...)
{
	if (p->quiet || !p->tty)
		return;
	char line[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	p->open = 1;
}

void progress_done(struct progress *p)
{
	progress_clear(p);
	fflush(stderr);
}

/* "1m05s" or "12s": a duration people read at a glance. */
static void duration(char *buf, size_t n, double s)
{
	if (!(s >= 0) || s > 99 * 3600)
		snprintf(buf, n, "?");
	else if (s >= 60)
		snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, n, "%.0fs", s);
}

void progress_sweep(const boar_sweep_stats *s, void *ctx)
{
	struct progress *p = ctx;
	double rate = s->seconds > 0 ? s->rows_done / s->seconds : 0;
	char eta[16];
	duration(eta, sizeof eta,
		 rate > 0 ? (double)(s->rows - s->rows_done) / rate : -1);
	progress_live(p, "epoch %d: %llu/%llu rows (%.0f%%)  %.2f M rows/s  "
			 "ETA %s", s->epoch, (unsigned long long)s->rows_done,
		      (unsigned long long)s->rows,
		      s->rows ? 100.0 * s->rows_done / s->rows : 0,
		      rate / 1e6, eta);
}

void progress_bytes(uint64_t done, uint64_t total, void *ctx)
{
	struct progress *p = ctx;
	if (!p->t0)
		p->t0 = cli_now();
	double mb = done / 1048576.0, secs = cli_now() - p->t0;
	if (!total) {
		progress_live(p, "reading: %.0f MiB", mb);
		return;
	}
	char bar[31];
	int fill = (int)(30.0 * (done < total ? done : total) / total);
	for (int i = 0; i < 30; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[30] = 0;
	char eta[16];
	duration(eta, sizeof eta,
		 done && secs > 0 ? secs * (double)(total - done) / done : -1);
	progress_live(p, "reading [%s] %.0f/%.0f MiB  ETA %s", bar, mb,
		      total / 1048576.0, done < total ? eta : "0s");
}

const char *progress_loss_name(const boar_model *m)
{
	if (boar_model_task(m) == BOAR_TASK_MF)
		return boar_model_mf_loss(m) == BOAR_MF_LOSS_ABSOLUTE
			       ? "absolute loss (MAE)" : "squared loss";
	int ovr = boar_model_classes(m, NULL) > 0;
	const boar_loss_desc *l = boar_loss_describe(boar_model_loss(m));
	static const char *const names[][2] = {
#define LOSS_LABEL(N, code, name, kind, prob, param, dflt, help) \
	[code] = { prob ? "log loss" : #name " loss",             \
		   prob ? "one-vs-rest log loss"                  \
			: "one-vs-rest " #name " loss" },
		BOAR_LOSS_MAP(LOSS_LABEL)
#undef LOSS_LABEL
	};
	if (!l)
		return "loss";
	return names[boar_model_loss(m)][ovr && l->kind == BOAR_LOSS_KIND_BINARY];
}

void progress_summary(FILE *out, const char *name, const boar_model *m,
		      const boar_metrics *mt)
{
	uint32_t k = boar_model_classes(m, NULL);
	fprintf(out, "%s (%llu rows): ", name, (unsigned long long)mt->rows);
	if (k)
		fprintf(out, "accuracy %.4f  %s %.4f  (%u classes)\n",
			mt->accuracy, progress_loss_name(m), mt->loss, k);
	else if (mt->binary && isfinite(mt->auc))
		fprintf(out, "accuracy %.4f  AUC %.4f  %s %.4f\n", mt->accuracy,
			mt->auc, progress_loss_name(m), mt->loss);
	else if (mt->binary)
		fprintf(out, "accuracy %.4f  AUC n/a (one class)  %s %.4f\n",
			mt->accuracy, progress_loss_name(m), mt->loss);
	else if (boar_model_loss(m) == BOAR_LOSS_QUANTILE)
		fprintf(out, "RMSE %.4f  MAE %.4f  %s %.4f  labels below the "
			"prediction %.4f\n", mt->rmse, mt->mae,
			progress_loss_name(m), mt->loss, mt->below);
	else
		fprintf(out, "RMSE %.4f  MAE %.4f  %s %.4f\n", mt->rmse, mt->mae,
			progress_loss_name(m), mt->loss);
}

int progress_load(const char *path, const boar_load_options *o, int quiet,
		  boar_dataset **out, boar_error *err)
{
	struct progress p;
	boar_load_options lo = *o;
	progress_init(&p, quiet);
	if (p.tty && !quiet) {
		lo.progress = progress_bytes;
		lo.progress_ctx = &p;
		p.t0 = cli_now(); /* the first block's time counts */
	}
	int rc = boar_dataset_load(path, &lo, out, err);
	progress_done(&p);
	return rc;
}
