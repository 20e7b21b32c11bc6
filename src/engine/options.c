/* options.c - training options: defaults in one function, validation in
 * another, and resolution of the task-dependent defaults (BOAR_AUTO); the
 * loss and optimizer tables of boar.h turned into lookups. */
#include <math.h>
#include <string.h>

#include "data/dataset.h"
#include "math/loss.h"
#include "model/model.h"
#include "base/options.h"
#include "model/train_state.h"

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
	return BOAR_EINVAL;
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
	return BOAR_EINVAL;
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
	o->eta_decay = BOAR_AUTO;
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
	o->n_gpus = 1;
	o->loss_param = BOAR_AUTO;
	o->early_stop = BOAR_EARLY_STOP_AUTO;
	o->l2_user = BOAR_AUTO;
	o->l2_item = BOAR_AUTO;
	o->bias_scale = 1.0;
}

static int is_auto(double v)
{
	return v == BOAR_AUTO;
}

/* The rules each field keeps on its own. */
static const char *check_fields(const boar_options *o)
{
	if (o->task < BOAR_TASK_AUTO || o->task > BOAR_TASK_MF)
		return "task must be auto, linear or mf";
	const boar_loss_desc *loss = boar_loss_describe(o->loss);
	if (!loss)
		return "loss must be one of boar.h's BOAR_LOSS_MAP";
	if (!is_auto(o->loss_param) && !loss->param[0])
		return "the loss takes no parameter: leave loss_param BOAR_AUTO";
	if (!is_auto(o->loss_param) && !boar_loss_param_ok(o->loss, o->loss_param))
		return o->loss == BOAR_LOSS_QUANTILE
			       ? "loss_param (quantile's tau) must be in (0, 1)"
			       : "the loss's parameter must be a positive "
				 "finite number";
	if (!boar_optimizer_name(o->optimizer))
		return "optimizer must be one of boar.h's BOAR_OPTIMIZER_MAP or "
		       "auto";
	if (o->update != BOAR_UPDATE_ATOMIC && o->update != BOAR_UPDATE_RACY)
		return "update must be atomic or racy";
	if (o->epochs < 1)
		return "epochs must be at least 1";
	if (!is_auto(o->eta) && !(o->eta > 0 && isfinite(o->eta)))
		return "eta must be a positive finite number";
	if (!is_auto(o->eta_decay) && !(o->eta_decay > 0 && o->eta_decay <= 1))
		return "eta_decay must be in (0, 1]";
	if (!(o->l1 >= 0 && isfinite(o->l1)))
		return "l1 must be >= 0";
	if (!is_auto(o->l2) && !(o->l2 >= 0 && isfinite(o->l2)))
		return "l2 must be >= 0";
	if ((!is_auto(o->l2_user) && !(o->l2_user >= 0 && isfinite(o->l2_user))) ||
	    (!is_auto(o->l2_item) && !(o->l2_item >= 0 && isfinite(o->l2_item))))
		return "l2_user and l2_item must be >= 0";
	if (o->mf_nonneg != 0 && o->mf_nonneg != 1)
		return "mf_nonneg must be 0 or 1";
	if (o->mf_loss != BOAR_MF_LOSS_SQUARED &&
	    o->mf_loss != BOAR_MF_LOSS_ABSOLUTE)
		return "mf_loss must be squared or absolute (enum boar_mf_loss)";
	if (!(o->bias_scale >= 0 && o->bias_scale <= 1e6))
		return "bias_scale must be in [0, 1e6] (0: no bias)";
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
	if (o->n_gpus < 1 || o->n_gpus > 64)
		return "n_gpus must be 1 to 64";
	if (o->n_gpus > 1 && o->device != BOAR_DEVICE_GPU)
		return "n_gpus above 1 is for device gpu";
	if (!(o->init_scale > 0 && isfinite(o->init_scale)))
		return "init_scale must be > 0";
	if (o->early_stop < 0 && o->early_stop != BOAR_EARLY_STOP_AUTO)
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
	return NULL;
}

/* The rules between fields, the task and the data. */
static const char *check_task(const boar_options *o,
			      const boar_dataset *d)
{
	/* What an engine cannot do is refused by the driver from its
	 * capabilities (engine_caps.c), not here. */
	if (o->device == BOAR_DEVICE_GPU &&
	    (o->save_resume || (o->init_model && o->init_model->state)))
		return "the GPU engine keeps its optimizer state on the card: "
		       "save_resume and resuming it need the CPU";
	if (o->init_model && d && o->init_model->task != d->task)
		return "the initial model is of another task than the data";
	int task = o->task;
	if (d && task == BOAR_TASK_AUTO)
		task = d->task;
	if (d && task != d->task)
		return task == BOAR_TASK_MF
			       ? "task mf needs a ratings file (user item rating)"
			       : "task linear needs a LIBSVM file, not ratings";
	if (o->n_gpus > 1 && d && task != BOAR_TASK_MF)
		return "n_gpus above 1 is for matrix factorization; linear "
		       "models train on one GPU";
	if (o->mf_storage < BOAR_STORAGE_F32 || o->mf_storage > BOAR_STORAGE_BF16)
		return "mf_storage must be f32, f16 or bf16";
	if (o->mf_storage != BOAR_STORAGE_F32 &&
	    (o->device != BOAR_DEVICE_GPU || (d && task != BOAR_TASK_MF)))
		return "mf_storage f16 and bf16 are for MF on the GPU (the CPU "
		       "keeps fp32)";
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
		if (o->bias_scale != 1.0)
			return "bias_scale is for linear models (MF's biases: "
			       "mf_biases)";
		if (o->optimizer == BOAR_OPT_NORMALIZED)
			return "optimizer normalized is for linear models; MF "
			       "takes sgd or adagrad";
	}
	if (task == BOAR_TASK_LINEAR &&
	    (!is_auto(o->l2_user) || !is_auto(o->l2_item) || o->mf_nonneg))
		return "l2_user, l2_item and mf_nonneg are for matrix "
		       "factorization";
	if (task == BOAR_TASK_LINEAR && o->mf_loss != BOAR_MF_LOSS_SQUARED)
		return "mf_loss is for matrix factorization (a linear model "
		       "fits the median with loss quantile, tau 0.5)";
	if (d && d->n_rows == 0)
		return "the training set has no rows";
	if (d && o->test && o->test->task != d->task)
		return "the test set is not of the training set's task";
	if (d && o->test && (o->test->hash_bits != d->hash_bits ||
			     o->test->slot_ids != d->slot_ids))
		return "the test set must be loaded like the training set "
		       "(same format family and hash_bits)";
	return NULL;
}

const char *boar_options_validate(const boar_options *o,
				  const boar_dataset *d)
{
	const char *why = check_fields(o);
	return why ? why : check_task(o, d);
}

/* The spread of the ratings about their mean (1 when there are none), so
 * that the MF step means the same on 1..5 stars and on -10..10 jokes. */
static double rating_std(const boar_dataset *d)
{
	double s = 0, s2 = 0;
	uint64_t n = d ? d->n_rows : 0;
	for (uint64_t r = 0; r < n; r++) {
		s += d->label[r];
		s2 += (double)d->label[r] * d->label[r];
	}
	double var = n ? s2 / n - (s / n) * (s / n) : 1.0;
	return var > 1e-12 ? sqrt(var) : 1.0;
}

/* MF defaults, chosen by test RMSE after 20 epochs on synthetic low-rank
 * ratings of four shapes and on MovieLens (bench/RESULTS.md, "MF
 * defaults"). Plain SGD at a constant step: the old 0.9-per-epoch decay
 * froze learning on the plateau before the factors left it. A small L2
 * keeps the bias of the shrinkage below the noise of clean low-rank data;
 * what it lets noisy data overfit (MovieLens, rows with fewer ratings than
 * the rank) early stopping takes back, by watching 2% of the training
 * ratings held out (beside --test, which it does not watch). The GPU
 * engine trains on every row: it stops early on --test, when given, as
 * the CPU does on data too small for 2% to be MF_MIN_HOLDOUT ratings. eta and l2 follow the ratings' spread (1 without data). */
#define MF_MIN_HOLDOUT 20
static void resolve_mf(boar_options *o, double spread, uint64_t rows)
{
	if (o->init_model) /* a warm start keeps the model's loss */
		o->mf_loss = o->init_model->mf_loss;
	/* The squared loss's error is of the ratings' spread, the absolute
	 * loss's sign is 1 on any scale: what eta and l2 are measured by. */
	double grad = o->mf_loss == BOAR_MF_LOSS_ABSOLUTE ? 1.0 : spread;
	if (o->optimizer == BOAR_OPT_AUTO)
		o->optimizer = BOAR_OPT_SGD;
	if (is_auto(o->eta))
		o->eta = o->optimizer == BOAR_OPT_ADAGRAD ? 0.05
							  : 0.08 / grad;
	if (is_auto(o->eta_decay))
		o->eta_decay = 1.0;
	if (is_auto(o->l2))
		o->l2 = 0.002 * grad;
	if (is_auto(o->l2_user))
		o->l2_user = o->l2;
	if (is_auto(o->l2_item))
		o->l2_item = o->l2;
	if (o->early_stop == BOAR_EARLY_STOP_AUTO) {
		int hold = o->device == BOAR_DEVICE_CPU &&
			   rows * 0.02 >= MF_MIN_HOLDOUT;
		o->early_stop = hold || o->test || o->holdout > 0 ? 2 : 0;
		if (hold && o->holdout == 0)
			o->holdout = 0.02;
	}
	o->loss = BOAR_LOSS_SQUARED;
}

/* Chosen on a9a, the RCV1 sample, 20 Newsgroups and synthetic data
 * (bench/RESULTS.md): AdaGrad at 0.3 is at or near the best accuracy on
 * all four linear sets (0.1 was too timid for unit-length text rows);
 * plain SGD needs smaller steps. NORMALIZED, the default where the engine
 * has it (not the GPU: its device is an option here; cluster training is
 * the driver's), at 0.5: on the seven sets of bench/RESULTS-defaults.md,
 * raw term counts want more, small and dense sets less, and 0.5 keeps
 * every set within issue 12's bar against a tuned LIBLINEAR. `boar help
 * train` prints these by calling boar_options_resolve_task, so help and
 * code cannot disagree. */
#define NORMALIZED_ETA 0.5
static void resolve(boar_options *o, int task, double spread, uint64_t rows)
{
	if (o->task == BOAR_TASK_AUTO)
		o->task = task;
	if (o->task == BOAR_TASK_MF) {
		resolve_mf(o, spread, rows);
		return;
	}
	if (o->optimizer == BOAR_OPT_AUTO)
		o->optimizer = o->device == BOAR_DEVICE_GPU ? BOAR_OPT_ADAGRAD
							    : BOAR_OPT_NORMALIZED;
	if (is_auto(o->eta))
		o->eta = o->optimizer == BOAR_OPT_ADAGRAD      ? 0.3
			 : o->optimizer == BOAR_OPT_NORMALIZED ? NORMALIZED_ETA
							       : 0.1;
	/* NORMALIZED's AdaGrad sums shrink its step already, as in NAG and
	 * VW, which decay nothing per pass: on the panel of
	 * bench/RESULTS-defaults.md a 0.9 decay cost 20 Newsgroups up to
	 * 0.13 point of accuracy and 2-8% of log loss (criteo and rcv1 did
	 * 1.5-3% better with it), and it leaves no step to long
	 * early-stopping runs (issue 12). */
	if (is_auto(o->eta_decay))
		o->eta_decay = o->optimizer == BOAR_OPT_NORMALIZED ? 1.0 : 0.9;
	if (is_auto(o->l2))
		o->l2 = 0.0;
	if (o->early_stop == BOAR_EARLY_STOP_AUTO)
		o->early_stop = 0;
	const boar_loss_desc *loss = boar_loss_describe(o->loss);
	if (!loss->param[0])
		o->loss_param = 0;
	else if (is_auto(o->loss_param))
		o->loss_param = loss->param_default;
}

void boar_options_resolve_task(boar_options *o, int task)
{
	resolve(o, task, 1.0, UINT64_MAX);
}

void boar_options_resolve_mf(boar_options *o, double spread, uint64_t rows)
{
	resolve(o, BOAR_TASK_MF, spread > 1e-6 ? spread : 1.0, rows);
}

void boar_options_resolve(boar_options *o, const boar_dataset *d)
{
	resolve(o, d->task, d->task == BOAR_TASK_MF ? rating_std(d) : 1.0,
		d->n_rows);
}
