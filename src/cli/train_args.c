/* train_args.c - parsing `boar train`'s options (see train_args.h).
 *
 * The option table is the single list of what train accepts: the parser
 * walks it and --help prints it, each default read from a freshly
 * defaulted struct so the two can never disagree.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "common.h"
#include "data_args.h"
#include "flag_words.h"
#include "search.h"
#include "train_args.h"

enum {
	O_TASK = 1, O_LOSS, O_OPTIMIZER, O_UPDATE, O_EPOCHS, O_ETA,
	O_ETA_DECAY, O_L1, O_L2, O_SEED, O_THREADS, O_HASH_BITS, O_RANK,
	O_MF_BIASES, O_NO_MF_BIASES, O_INIT_SCALE, O_DEVICE, O_GPU, O_STREAMS,
	O_TEST, O_CACHE, O_MODEL_OUT, O_JSON, O_QUIET, O_HELP, O_WEIGHTS,
	O_CLASS_WEIGHT, O_INIT_MODEL, O_EARLY_STOP, O_HOLDOUT, O_TARGET_RMSE,
	O_MF_STORAGE, O_DETERMINISTIC, O_SAVE_RESUME, O_CV, O_SEARCH,
	O_SEARCH_PARALLEL, O_L2_USER, O_L2_ITEM, O_MF_NONNEG, O_BIAS,
	O_BIAS_SCALE, O_MF_LOSS, O_GPUS,
	O_LOSS_PARAM, /* + the loss's code: --huber-delta ... */
	O_LAST_ = O_LOSS_PARAM + BOAR_LOSS_COUNT
};

/* "logistic|hinge|..." and "sgd|adagrad|auto", from boar.h's lists. */
#define LOSS_BAR(N, code, name, kind, prob, param, dflt, help) "|" #name
#define OPT_BAR(N, code, name, acc, help) "|" #name
static const char loss_bar[] = BOAR_LOSS_MAP(LOSS_BAR);
static const char opt_bar[] = BOAR_OPTIMIZER_MAP(OPT_BAR) "|auto";
#undef LOSS_BAR
#undef OPT_BAR

static const struct cli_opt train_opts[] = {
	{ O_TASK, "task", 0, "auto|linear|mf",
	  "linear: LIBSVM, VW or CSV rows; mf: user item rating triplets" },
	CLI_DATA_OPTS,
	{ O_LOSS, "loss", 0, loss_bar + 1,
	  "loss of the linear model (losses: below); labels 1..K: binary "
	  "losses train one-vs-rest, softmax a multinomial model; "
	  "--init-model: the model's loss" },
	{ O_OPTIMIZER, "optimizer", 0, opt_bar + 1,
	  "how steps are sized (optimizers: below); auto: the task's "
	  "default" },
	{ O_UPDATE, "update", 0, "atomic|racy",
	  "atomic: compare-and-swap adds, none lost; racy: plain stores as "
	  "in Hogwild! (faster, measured); on the GPU both run atomicAdd" },
	{ O_EPOCHS, "epochs", 0, "N", "passes over the training data" },
	{ O_ETA, "eta", 0, "X|auto",
	  "initial step size (> 0; auto mf sgd: divided by the ratings' "
	  "standard deviation, except for --mf-loss mae, whose gradient "
	  "does not grow with the ratings)" },
	{ O_ETA_DECAY, "eta-decay", 0, "X|auto",
	  "the step is multiplied by this after every epoch, with any "
	  "optimizer (AdaGrad's too); 1 = no decay, for long runs" },
	{ O_L1, "l1", 0, "X", "L1 regularization (>= 0)" },
	{ O_L2, "l2", 0, "X|auto",
	  "L2 regularization (>= 0; linear: split by feature frequency; "
	  "auto mf: times the ratings' standard deviation, but for "
	  "--mf-loss mae); boar minimizes "
	  "the mean row loss + l2 |w|^2 / 2, so LIBLINEAR's -c C is "
	  "l2 = 1 / (C n) for n training rows (bias aside)" },
	{ O_L2_USER, "l2-user", 0, "X|auto",
	  "mf: L2 of the user factors and biases (LIBMF's -l2 for P; cpu "
	  "unless equal to --l2)" },
	{ O_L2_ITEM, "l2-item", 0, "X|auto",
	  "mf: L2 of the item factors and biases (LIBMF's -l2 for Q)" },
	{ O_BIAS, "bias", 0, "on|off",
	  "linear: learn a bias (intercept); off: the model goes through "
	  "the origin (LIBLINEAR's -B -1)" },
	{ O_BIAS_SCALE, "bias-scale", 0, "X",
	  "linear: the bias feature's value (LIBLINEAR's -B X, > 0): the "
	  "margin gains X b and b steps as a feature of value X; boar never "
	  "regularizes the bias, so X sets only how fast it moves (cpu)" },
	{ O_SEED, "seed", 0, "S", "seed for shuffling and initialization" },
	{ O_THREADS, "threads", 0, "N", "training and parsing threads, 0 = all cores" },
	{ O_HASH_BITS, "hash-bits", 0, "B",
	  "hash feature ids into 2^B weights, 0 = ids as given" },
	{ O_RANK, "rank", 0, "K", "mf: factors per user and item" },
	{ O_MF_BIASES, "mf-biases", 0, NULL,
	  "mf: learn a global mean and user/item biases" },
	{ O_NO_MF_BIASES, "no-mf-biases", 0, NULL, "mf: factors only" },
	{ O_INIT_SCALE, "init-scale", 0, "X",
	  "mf: factors start as U(-X, X) / sqrt(rank)" },
	{ O_MF_NONNEG, "mf-nonneg", 0, NULL,
	  "mf: non-negative factors (LIBMF's -n): each step is projected "
	  "onto >= 0, factors start as U(0, X) / sqrt(rank); the mean and "
	  "biases stay free (cpu)" },
	{ O_MF_LOSS, "mf-loss", 0, "squared|mae",
	  "mf: the loss fitted (LIBMF's -f 0 / -f 1): squared fits the mean "
	  "rating (RMSE); mae the absolute error, the median, which a few "
	  "wild ratings cannot drag; test and holdout loss are then the MAE, "
	  "which early stopping watches (--init-model: the model's)" },
	{ O_DEVICE, "device", 0, "cpu|gpu", "where the sweep runs" },
	{ O_MF_STORAGE, "mf-storage", 0, "f32|f16|bf16",
	  "gpu mf: how factors are stored (f16/bf16: half the memory "
	  "traffic, fp32 arithmetic, stochastic rounding)" },
	{ O_GPU, "gpu", 0, "N", "gpu: which CUDA device (the first, with --gpus)" },
	{ O_GPUS, "gpus", 0, "N",
	  "gpu mf: Hogwild! on N GPUs of this host (devices --gpu .. --gpu "
	  "+ N - 1): an N x N grid of user x item blocks, the item blocks "
	  "passed between the GPUs; the ratings must fit on the cards "
	  "(linear models: one GPU)" },
	{ O_STREAMS, "streams", 0, "S", "gpu: CUDA streams that carry the data" },
	{ O_TEST, "test", 0, "FILE", "evaluate on FILE after every epoch" },
	{ O_WEIGHTS, "weights", 0, "FILE",
	  "instance weights: one number >= 0 per line, one line per "
	  "training row (LIBLINEAR's -W)" },
	{ O_CLASS_WEIGHT, "class-weight", 0, "LABEL:W",
	  "scale the loss of rows labelled LABEL by W >= 0 (LIBLINEAR's "
	  "-wi); repeat for more classes" },
	{ O_INIT_MODEL, "init-model", 0, "MODEL",
	  "warm start: continue training MODEL (its task, loss, classes, "
	  "hashing, rank and biases; options that contradict them are "
	  "refused) on FILE" },
	{ O_CV, "cv", 0, "K",
	  "K-fold cross-validation (LIBLINEAR's and LIBMF's -v): train on "
	  "K-1 folds, test on the K-th, each in turn; prints each fold's "
	  "metrics and their mean +- sd (stdout; --json: objects); saves no "
	  "model; with --search: the folds that judge it; 0 = off" },
	{ O_SEARCH, "search", 0, "SPEC",
	  "model selection (LIBLINEAR's -C): train every combination of "
	  "SPEC's values, e.g. 'l2=0,1e-6..1e-2:5,eta=0.1,0.3,1' (NAME=V,V,..."
	  " for eta, l1, l2; A..B:N is N values log-spaced from A to B), "
	  "several at once on the threads; judge each by --cv K folds "
	  "(default 5), a --holdout FRACTION or --test FILE (RMSE for "
	  "regression and mf, MAE for --mf-loss mae, else the loss); print "
	  "the table (stderr; --json: an object per configuration); -m "
	  "saves the best, retrained on all of FILE" },
	{ O_SEARCH_PARALLEL, "search-parallel", 0, "N",
	  "--search: configurations trained at once, --threads split "
	  "between them; 0 = one per thread (one thread each: faster than "
	  "one at a time on all threads, and the same models run to run)" },
	{ O_SAVE_RESUME, "save-resume", 0, NULL,
	  "keep the optimizer state (AdaGrad sums, where the step schedule "
	  "is) in the model, so that --init-model continues training rather "
	  "than restarting it (as VW's --save_resume); a model that has it "
	  "keeps it when continued" },
	{ O_EARLY_STOP, "early-stop", 0, "N",
	  "stop after N epochs without a lower loss on the --holdout rows "
	  "(or, without them, on --test) and keep the best epoch's model; "
	  "0 = off" },
	{ O_TARGET_RMSE, "target-rmse", 0, "X",
	  "mf: stop once the --test RMSE is at most X and report the time "
	  "to it (sweeps and wall clock); 0 = off" },
	{ O_HOLDOUT, "holdout", 0, "FRACTION",
	  "hold this fraction of the training rows out (drawn from the "
	  "seed) and report their loss, beside --test if given; early "
	  "stopping watches them (0.1 if --early-stop is on without "
	  "--test); with --search: the rows that judge it" },
	{ O_DETERMINISTIC, "deterministic", 0, NULL,
	  "the same model at any --threads (fixed row batches applied in "
	  "order; slower than Hogwild!)" },
	{ O_CACHE, "cache", 0, NULL,
	  "read/write a binary cache FILE.boarcache beside each input" },
	{ O_MODEL_OUT, "model-out", 'm', "FILE", "save the model to FILE" },
	{ O_JSON, "json", 0, NULL,
	  "one JSON object per epoch on stdout" },
	{ O_QUIET, "quiet", 'q', NULL,
	  "no progress or summary on stderr (progress: a line per epoch; on "
	  "a terminal also a live line below them: a bar while FILE is "
	  "read, the running epoch's rows, rate and ETA; never a '\\r' "
	  "when stderr is not a terminal)" },
	{ O_HELP, "help", 'h', NULL, "this help" },
	{ 0 },
};

static const char *const task_names[] = { "auto", "linear", "mf", NULL };
/* Names indexed by code; the last entry stays NULL. */
static const char *const loss_names[BOAR_LOSS_COUNT + 1] = {
#define LOSS_NAME(N, code, name, kind, prob, param, dflt, help) [code] = #name,
	BOAR_LOSS_MAP(LOSS_NAME)
#undef LOSS_NAME
};
static const char *const opt_names[BOAR_OPT_CODES + 1] = {
#define OPT_NAME(N, code, name, acc, help) [code] = #name,
	BOAR_OPTIMIZER_MAP(OPT_NAME)
#undef OPT_NAME
	[BOAR_OPT_AUTO] = "auto",
};

/* --NAME-PARAM for each loss with a parameter (--huber-delta); the rows
 * of losses without one are skipped by all_opts(). */
static const struct cli_opt loss_param_opts[BOAR_LOSS_COUNT] = {
#define LOSS_PARAM_OPT(N, code, name, kind, prob, param, dflt, help) \
	[code] = { O_LOSS_PARAM + (code), #name "-" param, 0, "X",      \
		   "--loss " #name ": its " param " (range: see the loss)" },
	BOAR_LOSS_MAP(LOSS_PARAM_OPT)
#undef LOSS_PARAM_OPT
};

#define N_TRAIN_OPTS (sizeof train_opts / sizeof train_opts[0] - 1)

/* train_opts and the loss parameters' options, ending in { 0 }. */
static const struct cli_opt *all_opts(struct cli_opt buf[N_TRAIN_OPTS +
							 BOAR_LOSS_COUNT + 1])
{
	size_t n = N_TRAIN_OPTS;
	memcpy(buf, train_opts, n * sizeof *buf);
	for (int k = 0; k < BOAR_LOSS_COUNT; k++)
		if (boar_loss_describe(k)->param[0])
			buf[n++] = loss_param_opts[k];
	buf[n] = (struct cli_opt){ 0 };
	return buf;
}
static const char *const update_names[] = { "atomic", "racy", NULL };
static const char *const device_names[] = { "cpu", "gpu", NULL };
static const char *const storage_names[] = { "f32", "f16", "bf16", NULL };

/* Names are indexed by the enum values of boar.h; make sure they stay so. */
_Static_assert(BOAR_TASK_MF == 2 &&
		       BOAR_UPDATE_RACY == 1 && BOAR_DEVICE_GPU == 1 &&
		       BOAR_STORAGE_BF16 == 2,
	       "CLI name tables out of step with boar.h");

static const char *name_of(const char *const *names, int v)
{
	for (int k = 0; names[k]; k++)
		if (k == v)
			return names[k];
	return "?";
}

/* The library reads no environment: the CLI passes the GPU engine's
 * experiment knobs (bench/RESULTS-gpu.md) and where its plugin is. */
static void gpu_env(boar_options *o)
{
	const char *s;
	if ((s = getenv("BOAR_GPU_RACY")) && !strcmp(s, "1"))
		o->gpu_racy_kernels = 1;
	if ((s = getenv("BOAR_GPU_CHUNK_BYTES")) && *s)
		o->gpu_chunk_bytes = strtoull(s, NULL, 10);
	if ((s = getenv("BOAR_GPU_ROWS_PER_BLOCK")) && *s)
		o->gpu_rows_per_block = (uint32_t)strtoul(s, NULL, 10);
	if ((s = getenv("BOAR_GPU_PLUGIN")) && *s)
		o->gpu_plugin = s;
}

void train_args_default(struct train_args *a)
{
	memset(a, 0, sizeof *a);
	boar_options_default(&a->opt);
	boar_load_options_default(&a->load);
	gpu_env(&a->opt);
}

/* What an AUTO optimizer, eta, eta-decay or l2 becomes, per task, as the library
 * resolves it (boar_options_resolve_task): e.g. eta "auto: linear 0.3
 * (adagrad), 0.1 (sgd); mf 0.02 (sgd), 0.05 (adagrad)". */
static void auto_default(int id, char *buf, size_t n)
{
	static const int tasks[2] = { BOAR_TASK_LINEAR, BOAR_TASK_MF };
	size_t at = (size_t)snprintf(buf, n, "auto:");
	for (int t = 0; t < 2 && at < n; t++) {
		boar_options d;
		boar_options_default(&d);
		boar_options_resolve_task(&d, tasks[t]);
		const char *task = tasks[t] == BOAR_TASK_MF ? "mf" : "linear";
		const char *sep = t ? ";" : "";
		if (id == O_OPTIMIZER) {
			boar_options g; /* the GPU's choice, when another */
			boar_options_default(&g);
			g.device = BOAR_DEVICE_GPU;
			boar_options_resolve_task(&g, tasks[t]);
			at += (size_t)snprintf(buf + at, n - at, "%s %s %s", sep,
					       task, name_of(opt_names, d.optimizer));
			if (g.optimizer != d.optimizer && at < n)
				at += (size_t)snprintf(buf + at, n - at,
						       " (%s on the gpu)",
						       name_of(opt_names, g.optimizer));
		} else if (id == O_L2) {
			at += (size_t)snprintf(buf + at, n - at, "%s %s %g", sep,
					       task, d.l2);
		} else {
			/* eta or eta-decay, per optimizer */
			at += (size_t)snprintf(buf + at, n - at, "%s %s %g (%s)",
					       sep, task,
					       id == O_ETA ? d.eta : d.eta_decay,
					       name_of(opt_names, d.optimizer));
			/* then every other optimizer the task takes */
			for (int k = 0; k < BOAR_OPT_CODES && at < n; k++) {
				boar_options e;
				boar_options_default(&e);
				e.optimizer = k;
				boar_error ignored;
				if (k == BOAR_OPT_AUTO || k == d.optimizer ||
				    boar_options_check(&e, NULL, &ignored))
					continue;
				boar_options_resolve_task(&e, tasks[t]);
				if (tasks[t] == BOAR_TASK_MF &&
				    k == BOAR_OPT_NORMALIZED)
					continue;
				at += (size_t)snprintf(buf + at, n - at,
						       ", %g (%s)",
						       id == O_ETA ? e.eta
								   : e.eta_decay,
						       name_of(opt_names, k));
			}
		}
	}
}

static void default_of(int id, char *buf, size_t n)
{
	struct train_args d;
	train_args_default(&d);
	const boar_options *o = &d.opt;
	buf[0] = '\0';
	if (id >= CLI_DATA_FIRST && id <= CLI_DATA_LAST) {
		cli_data_default(id, buf, n);
		return;
	}
	if (id >= O_LOSS_PARAM && id < O_LAST_) {
		snprintf(buf, n, "%g",
			 boar_loss_describe(id - O_LOSS_PARAM)->param_default);
		return;
	}
	switch (id) {
	case O_TASK:
		snprintf(buf, n, "%s", name_of(task_names, o->task));
		break;
	case O_LOSS:
		snprintf(buf, n, "%s", name_of(loss_names, o->loss));
		break;
	case O_OPTIMIZER:
		if (o->optimizer == BOAR_OPT_AUTO)
			auto_default(O_OPTIMIZER, buf, n);
		else
			snprintf(buf, n, "%s", name_of(opt_names, o->optimizer));
		break;
	case O_UPDATE:
		snprintf(buf, n, "%s", name_of(update_names, o->update));
		break;
	case O_EPOCHS:
		snprintf(buf, n, "%d", o->epochs);
		break;
	case O_ETA:
	case O_ETA_DECAY:
	case O_L2: {
		double v = id == O_ETA ? o->eta
			   : id == O_ETA_DECAY ? o->eta_decay : o->l2;
		if (v == BOAR_AUTO)
			auto_default(id, buf, n);
		else
			snprintf(buf, n, "%g", v);
		break;
	}
	case O_L1:
		snprintf(buf, n, "%g", o->l1);
		break;
	case O_SEED:
		snprintf(buf, n, "%llu", (unsigned long long)o->seed);
		break;
	case O_THREADS:
		if (o->threads)
			snprintf(buf, n, "%d", o->threads);
		else
			snprintf(buf, n, "0, all cores");
		break;
	case O_HASH_BITS:
		snprintf(buf, n, "%d", o->hash_bits);
		break;
	case O_RANK:
		snprintf(buf, n, "%u", o->rank);
		break;
	case O_MF_BIASES:
		snprintf(buf, n, "%s", o->mf_biases ? "on" : "off");
		break;
	case O_INIT_SCALE:
		snprintf(buf, n, "%g", o->init_scale);
		break;
	case O_L2_USER:
	case O_L2_ITEM:
		snprintf(buf, n, "auto: --l2");
		break;
	case O_BIAS:
		snprintf(buf, n, "%s", o->bias_scale > 0 ? "on" : "off");
		break;
	case O_BIAS_SCALE:
		snprintf(buf, n, "%g", o->bias_scale);
		break;
	case O_DEVICE:
		snprintf(buf, n, "%s", name_of(device_names, o->device));
		break;
	case O_GPU:
		snprintf(buf, n, "%d", o->gpu_id);
		break;
	case O_STREAMS:
		snprintf(buf, n, "%d", o->streams);
		break;
	case O_GPUS:
		snprintf(buf, n, "%d", o->n_gpus);
		break;
	case O_EARLY_STOP:
		if (o->early_stop == BOAR_EARLY_STOP_AUTO)
			snprintf(buf, n, "auto: mf 2 on a 0.02 holdout (gpu: on "
					 "--test), linear 0");
		else
			snprintf(buf, n, "%d", o->early_stop);
		break;
	case O_MF_STORAGE:
		snprintf(buf, n, "%s", name_of(storage_names, o->mf_storage));
		break;
	case O_MF_LOSS:
		snprintf(buf, n, "%s", name_of(cli_mf_loss_names, o->mf_loss));
		break;
	case O_TARGET_RMSE:
		snprintf(buf, n, "%g", d.target_rmse);
		break;
	case O_CV:
	case O_SEARCH_PARALLEL:
		snprintf(buf, n, "0");
		break;
	case O_HOLDOUT:
		snprintf(buf, n, "%g", o->holdout);
		break;
	case O_CACHE:
	case O_JSON:
	case O_QUIET:
	case O_DETERMINISTIC:
	case O_SAVE_RESUME:
	case O_SEARCH:
		snprintf(buf, n, "off");
		break;
	case O_WEIGHTS:
		snprintf(buf, n, "all 1");
		break;
	}
}

void train_args_help(FILE *out)
{
	fputs("usage: boar train [options] FILE\n"
	      "\n"
	      "Fits a model to FILE with lock-free Hogwild! SGD. FILE is LIBSVM/SVMlight\n"
	      "(\"label idx:val ...\", 1-based ascending indices), Vowpal Wabbit text\n"
	      "(\"label [weight] |ns name[:value] ...\", names hashed with murmur3 as VW\n"
	      "does) or CSV/TSV (a label column, numeric and hashed categorical columns)\n"
	      "for linear models, or \"user item rating\" lines (space, comma or ::\n"
	      "separated, optional header) for matrix factorization; any of them may be\n"
	      "gzip-compressed. Format and task are inferred unless --format/--task say.\n"
	      "VW and CSV features are hashed into 2^--hash-bits slots (18 when 0).\n"
	      "The Criteo sample: boar train --csv-label Label --csv-ignore Id --csv-log\n"
	      "FILE.csv; the model remembers how its data was read (format, hashing,\n"
	      "CSV columns and transforms), so eval and predict need none of it again.\n"
	      "Progress goes to stderr, --json objects to stdout. Every option takes\n"
	      "its value as --opt VALUE or --opt=VALUE. FILE - is standard input.\n"
	      "Ctrl-C or SIGTERM: the running epoch ends and the best model so far\n"
	      "is kept (and saved with -m), exit 128+signal; a second one quits now.\n"
	      "\n"
	      "options:\n",
	      out);
	struct cli_opt opts[N_TRAIN_OPTS + BOAR_LOSS_COUNT + 1];
	cli_print_options(out, all_opts(opts), default_of);
	fputs("\nlosses:\n", out);
	for (int k = 0; k < BOAR_LOSS_COUNT; k++)
		fprintf(out, "  %-10s %s\n", boar_loss_describe(k)->name,
			boar_loss_describe(k)->help);
	fputs("optimizers:\n", out);
#define OPT_HELP(N, code, name, acc, help) \
	fprintf(out, "  %-10s %s\n", #name, help);
	BOAR_OPTIMIZER_MAP(OPT_HELP)
#undef OPT_HELP
	fputs("\n"
	      "--threads 1 with a fixed --seed gives bit-identical models run to run;\n"
	      "with more threads updates race by design and results vary slightly,\n"
	      "unless --deterministic is given.\n",
	      out);
}

/* --class-weight LABEL:W. The label is a number as written in the data
 * file (1, -1, 3.5); the same label twice is refused, since which of the
 * two should win is a guess. */
static int class_weight(struct train_args *a, struct cli_parser *p)
{
	const char *v = p->value;
	const char *colon = strrchr(v, ':');
	int n = a->opt.n_class_weights;
	double label, w;
	char buf[64];

	if (!colon || colon == v || !colon[1] ||
	    (size_t)(colon - v) >= sizeof buf)
		return cli_fail(p, "%s: '%s' is not LABEL:WEIGHT (e.g. 1:5)",
				p->opt, v);
	if (n >= TRAIN_ARGS_MAX_CLASS_WEIGHTS)
		return cli_fail(p, "%s: at most %d class weights",
				p->opt, TRAIN_ARGS_MAX_CLASS_WEIGHTS);
	/* Parse both halves with the strict number parser. */
	memcpy(buf, v, colon - v);
	buf[colon - v] = '\0';
	p->value = buf;
	int rc = cli_double(p, -1e30, 1e30, &label);
	p->value = colon + 1;
	if (!rc)
		rc = cli_double(p, 0, 1e6, &w);
	p->value = v;
	if (rc)
		return -1;
	for (int k = 0; k < n; k++)
		if (a->cw_labels[k] == (float)label)
			return cli_fail(p, "%s: label %g is given twice",
					p->opt, label);
	a->cw_labels[n] = (float)label;
	a->cw_values[n] = (float)w;
	a->opt.n_class_weights = n + 1;
	return 0;
}

/* X|auto: BOAR_AUTO for "auto", else a number in [0, hi], or in (0, hi]
 * when positive. */
static int number_or_auto(struct cli_parser *p, int positive, double hi,
			  double *out)
{
	if (!strcmp(p->value, "auto")) {
		*out = BOAR_AUTO;
		return 0;
	}
	return positive ? cli_double_gt(p, 0, hi, out)
			: cli_double(p, 0, hi, out);
}

/* Applies one option; returns -1 with p->why set on a bad value. */
static int apply(struct train_args *a, struct cli_parser *p, int id)
{
	boar_options *o = &a->opt;
	if (id >= CLI_DATA_FIRST && id <= CLI_DATA_LAST) {
		a->data_given |= CLI_DATA_BIT(id);
		int rc = cli_data_apply(&a->load, p, id);
		a->opt.max_memory = a->load.max_memory; /* data and model */
		return rc;
	}
	if (id >= O_LOSS_PARAM && id < O_LAST_) {
		a->loss_param_of = id - O_LOSS_PARAM + 1;
		return cli_double_gt(p, 0, 1e30, &o->loss_param);
	}
	switch (id) {
	case O_TASK:
		if (cli_choice(p, task_names, &o->task))
			return -1;
		a->load.task = o->task;
		return 0;
	case O_LOSS:
		a->loss_given = 1;
		return cli_choice(p, loss_names, &o->loss);
	case O_OPTIMIZER:
		return cli_choice(p, opt_names, &o->optimizer);
	case O_UPDATE:
		return cli_choice(p, update_names, &o->update);
	case O_EPOCHS:
		return cli_int(p, 1, 1000000, &o->epochs);
	case O_ETA:
		return number_or_auto(p, 1, 1e6, &o->eta);
	case O_ETA_DECAY:
		return number_or_auto(p, 1, 1e3, &o->eta_decay);
	case O_L1:
		return cli_double(p, 0, 1e6, &o->l1);
	case O_L2:
		return number_or_auto(p, 0, 1e6, &o->l2);
	case O_SEED:
		return cli_u64(p, 0, UINT64_MAX, &o->seed);
	case O_THREADS:
		if (cli_int(p, 0, 4096, &o->threads))
			return -1;
		a->load.threads = o->threads;
		return 0;
	case O_HASH_BITS:
		if (cli_int(p, 0, 32, &o->hash_bits))
			return -1;
		a->load.hash_bits = o->hash_bits;
		a->hash_bits_given = 1;
		return 0;
	case O_RANK:
		a->rank_given = 1;
		return cli_u32(p, 1, 65536, &o->rank);
	case O_MF_BIASES:
		o->mf_biases = 1;
		a->biases_given = 1;
		return 0;
	case O_NO_MF_BIASES:
		o->mf_biases = 0;
		a->biases_given = 1;
		return 0;
	case O_SAVE_RESUME:
		o->save_resume = 1;
		return 0;
	case O_L2_USER:
		return number_or_auto(p, 0, 1e6, &o->l2_user);
	case O_L2_ITEM:
		return number_or_auto(p, 0, 1e6, &o->l2_item);
	case O_MF_NONNEG:
		o->mf_nonneg = 1;
		return 0;
	case O_BIAS: {
		int on = 1;
		static const char *const off_on[] = { "off", "on", NULL };
		if (cli_choice(p, off_on, &on))
			return -1;
		a->bias_given |= on ? 1 : 2;
		o->bias_scale = on ? (a->bias_given & 4 ? o->bias_scale : 1.0)
				   : 0.0;
		return 0;
	}
	case O_BIAS_SCALE:
		a->bias_given |= 4;
		return cli_double_gt(p, 0, 1e6, &o->bias_scale);
	case O_CV:
		return cli_int(p, 0, 1000, &a->cv);
	case O_SEARCH_PARALLEL:
		return cli_int(p, 0, 4096, &a->search_parallel);
	case O_SEARCH:
		return search_spec_add(&a->search, p->value, p->why,
				       sizeof p->why);
	case O_INIT_SCALE:
		return cli_double_gt(p, 0, 1e6, &o->init_scale);
	case O_DEVICE:
		return cli_choice(p, device_names, &o->device);
	case O_GPU:
		return cli_int(p, 0, 1023, &o->gpu_id);
	case O_STREAMS:
		return cli_int(p, 1, 1024, &o->streams);
	case O_GPUS:
		return cli_int(p, 1, 64, &o->n_gpus);
	case O_TEST:
		a->test_path = p->value;
		return 0;
	case O_CACHE:
		a->load.use_cache = 1;
		return 0;
	case O_MODEL_OUT:
		a->model_out = p->value;
		return 0;
	case O_JSON:
		a->json = 1;
		return 0;
	case O_QUIET:
		a->quiet = 1;
		return 0;
	case O_WEIGHTS:
		a->weights_path = p->value;
		return 0;
	case O_CLASS_WEIGHT:
		return class_weight(a, p);
	case O_INIT_MODEL:
		a->init_model_path = p->value;
		return 0;
	case O_EARLY_STOP:
		return cli_int(p, 0, 1000000, &o->early_stop);
	case O_HOLDOUT:
		return cli_double(p, 0, 0.99, &o->holdout);
	case O_TARGET_RMSE:
		return cli_double(p, 0, 1e30, &a->target_rmse);
	case O_MF_STORAGE:
		return cli_choice(p, storage_names, &o->mf_storage);
	case O_MF_LOSS:
		a->mf_loss_given = 1;
		return cli_choice(p, cli_mf_loss_names, &o->mf_loss);
	case O_DETERMINISTIC:
		o->deterministic = 1;
		return 0;
	}
	return cli_fail(p, "internal: option %d not handled", id);
}

/* Vowpal Wabbit's -q AB (a quadratic interaction) where boar's -q is
 * --quiet: "-q AB" with AB two characters that name no file, or "-qAB",
 * is read as --quadratic AB (and is not quiet), which stderr says, so that
 * a VW command line does what its user means rather than training
 * without the crosses (unless --quiet). -q before a two-letter file stays
 * --quiet.
 * @return 1 when it took argv's next words, 0 when they are not VW's -q,
 * -1 with p->why on a bad interaction. */
static int vw_quadratic(struct train_args *a, struct cli_parser *p)
{
	if (p->only_positional || p->i >= p->argc ||
	    strncmp(p->argv[p->i], "-q", 2))
		return 0;
	const char *q = p->argv[p->i], *ab = q[2] ? q + 2 : NULL;
	if (!ab && p->i + 1 < p->argc && access(p->argv[p->i + 1], F_OK) != 0)
		ab = p->argv[p->i + 1];
	if (!ab || strlen(ab) != 2 || ab[0] == '-')
		return 0;
	p->i += q[2] ? 1 : 2;
	snprintf(p->opt, sizeof p->opt, "-q");
	p->value = ab;
	if (!a->vw_q_count++)
		a->vw_q = ab;
	return apply(a, p, CLI_DATA_VW_QUADRATIC) ? -1 : 1;
}

int train_args_parse(struct train_args *a, int argc, char **argv, char *why,
		     size_t why_len)
{
	struct cli_parser p;
	int id;

	struct cli_opt opts[N_TRAIN_OPTS + BOAR_LOSS_COUNT + 1];
	train_args_default(a);
	cli_init(&p, argc, argv);
	for (;;) {
		int vw = vw_quadratic(a, &p);
		if (vw < 0)
			goto fail;
		if (vw)
			continue;
		if ((id = cli_next(&p, all_opts(opts))) == CLI_END)
			break;
		if (id == CLI_ERROR)
			goto fail;
		if (id == O_HELP)
			return TRAIN_ARGS_HELP;
		if (id == CLI_POSITIONAL) {
			if (a->train_path) {
				cli_fail(&p, "one training FILE expected, got "
					 "'%s' and '%s'%s", a->train_path,
					 p.value, strlen(a->train_path) == 2 ||
					 strlen(p.value) == 2
					 ? " (VW's -q AB is --quadratic AB: "
					   "-q before a file is --quiet)" : "");
				goto fail;
			}
			a->train_path = p.value;
			continue;
		}
		if (apply(a, &p, id))
			goto fail;
	}
	if (!a->train_path) {
		cli_fail(&p, "train needs a training FILE");
		goto fail;
	}
	if (a->test_path && !strcmp(a->test_path, "-") &&
	    !strcmp(a->train_path, "-")) {
		cli_fail(&p, "FILE and --test cannot both be standard input (-)");
		goto fail;
	}
	if (a->search.given && search_args_check(a, &p))
		goto fail;
	if (a->cv == 1 || (a->cv && !a->search.given &&
			   (a->test_path || a->model_out ||
			    a->init_model_path))) {
		cli_fail(&p, a->cv == 1 ? "--cv needs K >= 2 folds"
					: "--cv saves no model and tests on its "
					  "own folds: drop --test, -m and "
					  "--init-model");
		goto fail;
	}
	a->train_path = cli_data_path(a->train_path);
	a->test_path = cli_data_path(a->test_path);
	if (a->opt.n_class_weights) {
		a->opt.class_weight_labels = a->cw_labels;
		a->opt.class_weight_values = a->cw_values;
	}
	if (a->loss_param_of && a->loss_param_of - 1 != a->opt.loss) {
		const boar_loss_desc *l = boar_loss_describe(a->loss_param_of - 1);
		cli_fail(&p, "--%s-%s is for --loss %s", l->name, l->param,
			 l->name);
		goto fail;
	}
	if ((a->bias_given & 2) && (a->bias_given & 5)) {
		cli_fail(&p, "--bias off contradicts --bias on and --bias-scale");
		goto fail;
	}
	if (a->target_rmse > 0 && !a->test_path) {
		cli_fail(&p, "--target-rmse needs a --test set to watch");
		goto fail;
	}
	/* The library is the authority on what combinations make sense. */
	boar_error bad;
	char words[sizeof bad.message];
	if (boar_options_check(&a->opt, NULL, &bad)) {
		cli_fail(&p, "%s", cli_flag_words(bad.message, words, sizeof words));
		goto fail;
	}
	if (a->vw_q_count && !a->quiet)
		fprintf(stderr, "boar: -q %s read as --quadratic %s%s (Vowpal "
			"Wabbit's -q); boar's quiet flag is --quiet\n",
			a->vw_q, a->vw_q,
			a->vw_q_count > 1 ? ", and the other -q alike" : "");
	return TRAIN_ARGS_OK;
fail:
	snprintf(why, why_len, "%s", p.why);
	return TRAIN_ARGS_ERROR;
}
