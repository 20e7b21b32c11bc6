/* progress.c - progress lines and metric summaries (see progress.h). */
#include <unistd.h>

#include "progress.h"

void progress_init(struct progress *p, int quiet)
{
	p->quiet = quiet;
	p->tty = isatty(STDERR_FILENO);
	p->open = 0;
}

void progress_epoch(struct progress *p, const boar_epoch_stats *s, int epochs,
		    int binary)
{
	if (p->quiet)
		return;
	char line[256];
	int n = snprintf(line, sizeof line,
			 "epoch %3d/%d  %7.3f s  %8.1f M upd/s  train loss %.4f",
			 s->epoch, epochs, s->seconds, s->updates_per_sec / 1e6,
			 s->train_loss);
	if (s->has_test && n > 0 && (size_t)n < sizeof line) {
		if (binary)
			snprintf(line + n, sizeof line - n,
				 "  test loss %.4f  accuracy %.4f  AUC %.4f",
				 s->test_loss, s->test_accuracy, s->test_auc);
		else
			snprintf(line + n, sizeof line - n,
				 "  test loss %.4f  RMSE %.4f", s->test_loss,
				 s->test_rmse);
	}
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
	switch (boar_model_loss(m)) {
	case BOAR_LOSS_LOGISTIC:
		return "log loss";
	case BOAR_LOSS_HINGE:
		return "hinge loss";
	}
	return "squared loss";
}

void progress_summary(FILE *out, const char *name, const boar_model *m,
		      const boar_metrics *mt)
{
	fprintf(out, "%s (%llu rows): ", name, (unsigned long long)mt->rows);
	if (mt->binary)
		fprintf(out, "accuracy %.4f  AUC %.4f  %s %.4f\n", mt->accuracy,
			mt->auc, progress_loss_name(m), mt->loss);
	else
		fprintf(out, "RMSE %.4f  %s %.4f\n", mt->rmse,
			progress_loss_name(m), mt->loss);
}
