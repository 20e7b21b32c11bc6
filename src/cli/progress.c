/* progress.c - progress lines and metric summaries (see progress.h). */
#include <math.h>
#include <unistd.h>

#include "progress.h"

void progress_init(struct progress *p, int quiet)
{
	p->quiet = quiet;
	p->tty = isatty(STDERR_FILENO);
	p->open = 0;
	p->holdout = 0;
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
	if (p->tty) {
		/* \033[K clears what a longer previous line left behind. */
		fprintf(stderr, "\r%s\033[K", line);
		p->open = 1;
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
}

void progress_done(struct progress *p)
{
	if (p->open)
		fputc('\n', stderr);
	p->open = 0;
}

const char *progress_loss_name(const boar_model *m)
{
	if (boar_model_task(m) == BOAR_TASK_MF)
		return "squared loss";
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
