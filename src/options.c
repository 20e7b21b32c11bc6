/* options.c - training options: defaults in one function, validation in
 * another, and resolution of the task-dependent defaults (BOAR_AUTO); the
 * loss and optimizer tables of boar.h turned into lookups. */
#include <math.h>
#include <string.h>

#include "dataset.h"
#include "model.h"
#include "options.h"
#include "train_state.h"

static const boar_loss_desc loss_table[] = {
#define LOSS_DESC(N, code, name, kind, prob, param, dflt, help) \
	[code] = {#name, BOAR_LOSS_KIND_##kind, prob, param, dflt, help},
	BOAR_LOSS_MAP(LOSS_DESC)
#undef LOSS_DESC
};
_Static_assert(sizeof loss_table / sizeof loss_table[0] == BOAR_LOSS_COUNT,
	       "BOAR_LOSS_MAP codes must be 0 .. BOAR_LOSS_COUNT - 1");

const boar_loss_desc *boar_loss_describe(int loss)
{
	return loss >= 0 && loss < BOAR_LOSS_COUNT ? &loss_table[loss] : NULL;
}

int boar_loss_from_name(const char *name)
{
	for (int k = 0; name && k < BOAR_LOSS_COUNT; k++)
		if (!strcmp(loss_table[k].name, name))
			return k;
	return -1;
}

static const char *const optimizer_names[] = {
#define OPT_NAME(N, code, name, acc, help) [code] = #name,
	BOAR_OPTIMIZER_MAP(OPT_NAME)
#undef OPT_NAME
	[BOAR_OPT_AUTO] = "auto",
};
#define N_OPTIMIZER_CODES \
	(int)(sizeof optimizer_names / sizeof optimizer_names[0])
_Static_assert(N_OPTIMIZER_CODES == BOAR_OPT_CODES,
	       "BOAR_OPTIMIZER_MAP codes must be 0 .. BOAR_OPT_CODES - 1");

const char *boar_optimizer_name(int optimizer)
{
	if (optimizer < 0 || optimizer >= N_OPTIMIZER_CODES)
		return NULL;
	return optimizer_names[optimizer];
}

int boar_optimizer_from_name(const char *name)
{
	for (int k = 0; name && k < N_OPTIMIZER_CODES; k++)
		if (optimizer_names[k] && !strcmp(optimizer_names[k], name))
			return k;
	return -1;
}

#define MAX_CPU_RANK 1024

void boar_options_fill(boar_options *o)
{
	memset(o, 0, sizeof *o);
	o->task = BOAR_TASK_AUTO;
	o->loss = BOAR_LOSS_LOGISTIC;
	o->optimizer = BOAR_OPT_AUTO;
	o->update = BOAR_UPDATE_RACY;
	o->epochs = 10;
	o->eta = BOAR_AUTO;
	o->eta_decay = 0.9;
	o->l1 = 0;
	o->l2 = BOAR_AUTO;
	o->seed = 1;
	o->threads = 0;
	o->hash_bits = 0;
	o->rank = 16;
	o->mf_biases = 1;
	o->init_scale = 0.1;
	o->device = BOAR_DEVICE_CPU;
	o->gpu_id = 0;
	o->streams = 4;
	o->loss_param = BOAR_AUTO;
}

static int is_auto(double v)
{
	return v == BOAR_AUTO;
}

const char *boar_options_validate(const boar_options *o,
				  const boar_dataset *d)
{
	if (o->task < BOAR_TASK_AUTO || o->task > BOAR_TASK_MF)
		return "task must be auto, linear or mf";
	const boar_loss_desc *loss = boar_loss_describe(o->loss);
	if (!loss)
		return "loss must be one of boar.h's BOAR_LOSS_MAP";
	if (!is_auto(o->loss_param) && !loss->param[0])
		return "the loss takes no parameter: leave loss_param BOAR_AUTO";
	if (!is_auto(o->loss_param) &&
	    !(o->loss_param > 0 && isfinite(o->loss_param)))
		return "the loss's parameter must be a positive finite number";
	if (!boar_optimizer_name(o->optimizer))
		return "optimizer must be one of boar.h's BOAR_OPTIMIZER_MAP or "
		       "auto";
	if (o->update != BOAR_UPDATE_ATOMIC && o->update != BOAR_UPDATE_RACY)
		return "update must be atomic or racy";
	if (o->epochs < 1)
		return "epochs must be at least 1";
	if (!is_auto(o->eta) && !(o->eta > 0 && isfinite(o->eta)))
		return "eta must be a positive finite number";
	if (!(o->eta_decay > 0 && o->eta_decay <= 1))
		return "eta_decay must be in (0, 1]";
	if (!(o->l1 >= 0 && isfinite(o->l1)))
		return "l1 must be >= 0";
	if (!is_auto(o->l2) && !(o->l2 >= 0 && isfinite(o->l2)))
		return "l2 must be >= 0";
	if (o->threads < 0 || o->threads > 4096)
		return "threads must be 0 (all cores) to 4096";
	if (o->hash_bits < 0 || o->hash_bits > 32)
		return "hash_bits must be 0 (off) to 32";
	if (o->device != BOAR_DEVICE_CPU && o->device != BOAR_DEVICE_GPU)
		return "device must be cpu or gpu";
	if (o->gpu_id < 0)
		return "gpu_id must be >= 0";
	if (o->streams < 1 || o->streams > 64)
		return "streams must be 1 to 64";
	if (!(o->init_scale > 0 && isfinite(o->init_scale)))
		return "init_scale must be > 0";
	if (o->early_stop < 0)
		return "early_stop must be >= 0 (0: off)";
	if (!(o->holdout >= 0 && o->holdout < 1))
		return "holdout must be a fraction in [0, 1)";
	if (o->n_class_weights < 0 ||
	    (o->n_class_weights &&
	     (!o->class_weight_labels || !o->class_weight_values)))
		return "class weights need n_class_weights labels and values";
	for (int k = 0; k < o->n_class_weights; k++)
		if (!(o->class_weight_values[k] >= 0 &&
		      isfinite(o->class_weight_values[k])))
			return "class weights must be finite and >= 0";
	/* What an engine cannot do is refused by the driver from its
	 * capabilities (engine_caps.c), not here. */
	if (o->device == BOAR_DEVICE_GPU &&
	    (o->save_resume || (o->init_model && o->init_model->state)))
		return "the GPU engine keeps its optimizer state on the card: "
		       "save-resume and resuming it need the CPU";
	if (o->init_model && d && o->init_model->task != d->task)
		return "the initial model is of another task than the data";
	int task = o->task;
	if (d && task == BOAR_TASK_AUTO)
		task = d->task;
	if (d && task != d->task)
		return task == BOAR_TASK_MF
			       ? "task mf needs a ratings file (user item rating)"
			       : "task linear needs a LIBSVM file, not ratings";
	if (task == BOAR_TASK_MF) {
		if (o->rank < 1)
			return "rank must be at least 1";
		if (o->device == BOAR_DEVICE_CPU && o->rank > MAX_CPU_RANK)
			return "rank must be at most 1024";
		if (o->l1 > 0)
			return "l1 is for linear models; MF takes l2";
		if (o->deterministic)
			return "deterministic training is for linear models; "
			       "for MF use threads = 1";
	}
	if (d && d->n_rows == 0)
		return "the training set has no rows";
	if (d && o->test && o->test->task != d->task)
		return "the test set is not of the training set's task";
	if (d && o->test && (o->test->hash_bits != d->hash_bits ||
			     o->test->slot_ids != d->slot_ids))
		return "the test set must be loaded like the training set "
		       "(same format family and hash-bits)";
	return NULL;
}

void boar_options_resolve_task(boar_options *o, int task)
{
	if (o->task == BOAR_TASK_AUTO)
		o->task = task;
	/* Chosen on a9a, the RCV1 sample, 20 Newsgroups, synthetic data and
	 * MovieLens (bench/RESULTS.md): AdaGrad at 0.3 is at or near the best
	 * accuracy on all four linear sets (0.1 was too timid for unit-length
	 * text rows); plain SGD needs smaller steps. `boar help train` prints
	 * these by calling this function, so help and code cannot disagree. */
	int mf = o->task == BOAR_TASK_MF;
	if (o->optimizer == BOAR_OPT_AUTO)
		o->optimizer = mf ? BOAR_OPT_SGD : BOAR_OPT_ADAGRAD;
	if (is_auto(o->eta))
		o->eta = o->optimizer == BOAR_OPT_ADAGRAD ? (mf ? 0.05 : 0.3)
							  : (mf ? 0.02 : 0.1);
	if (is_auto(o->l2))
		o->l2 = mf ? 0.1 : 0.0;
	if (o->task == BOAR_TASK_MF)
		o->loss = BOAR_LOSS_SQUARED;
	const boar_loss_desc *loss = boar_loss_describe(o->loss);
	if (!loss->param[0])
		o->loss_param = 0;
	else if (is_auto(o->loss_param))
		o->loss_param = loss->param_default;
}

void boar_options_resolve(boar_options *o, const boar_dataset *d)
{
	boar_options_resolve_task(o, d->task);
}
