/* boar.h - the one public header of libboar.
 *
 * libboar fits models on sparse data with lock-free Hogwild! SGD: sparse
 * linear models (logistic, hinge, squared loss) on CSR rows and matrix
 * factorization on (user, item, rating) triplets.
 *
 * Errors, one convention for every function below:
 *  - A function that can fail returns an int: 0 on success (or a count
 *    >= 0 where its comment says so), else a negative BOAR_E* code. No
 *    function reports failure by NaN, NULL or -1. Out-parameters are
 *    written only on success.
 *  - Every such function takes a boar_error *err as its last parameter:
 *    NULL if you only want the code; else on failure it receives the code
 *    and a one-line message naming the file and line, the row, or the
 *    option field (e.g. "eta_decay", "load_options.format"), never a
 *    program's command-line flags.
 *  - Functions that cannot fail (accessors, boar_*_init, boar_*_free) return
 *    a value or nothing; lookups by name or code (boar_*_name,
 *    boar_*_from_name, boar_loss_describe) return NULL or BOAR_EINVAL for
 *    one they do not know.
 *  - The library never prints, never exits and keeps no global mutable
 *    state: everything hangs off handles the caller owns.
 *    boar_*_free(NULL) is a no-op.
 *  - The library reads no environment variables: whatever a program takes
 *    from its environment it passes in options.
 *
 * Changed in 0.2 (the shared library's symbol version is BOAR_0.2, so a
 * program built for 0.1 is refused by the loader rather than misled):
 * boar_options_check, boar_model_predict_row and boar_model_predict_pair
 * return a status (the reason in *err, the score in an out-parameter);
 * boar_model_weights returns a status and the array in *w; the from_name
 * lookups and boar_dataset_row return BOAR_EINVAL instead of -1; boar_predict,
 * boar_predict_scores, boar_evaluate, boar_model_factors,
 * boar_model_predict_scores and boar_dataset_row take a boar_error*.
 *
 * Option structs (boar_options, boar_load_options, boar_gen_options,
 * boar_ps_transport) can grow without
 * breaking programs built against an older boar.h: their first field is
 * `size`, which boar_options_default() sets to the size the caller was
 * compiled with (and so do the other *_default macros; fill a
 * boar_ps_transport's yourself: sizeof). The library
 * reads only that many bytes and takes its defaults for fields added
 * later; a size it does not know (0, or larger than its own) is refused
 * with BOAR_EINVAL. New fields are only ever added at the end.
 *
 * Threads: a boar_dataset and a boar_model are immutable once built and may
 * be read by any number of threads at once (predict, evaluate, train from the
 * same dataset). boar_train() uses its own OpenMP threads internally.
 */
#ifndef BOAR_H
#define BOAR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BOAR_VERSION_MAJOR 0
#define BOAR_VERSION_MINOR 2
#define BOAR_VERSION_PATCH 0
#define BOAR_VERSION_NUMBER \
	(BOAR_VERSION_MAJOR * 10000 + BOAR_VERSION_MINOR * 100 + BOAR_VERSION_PATCH)

#if defined(__GNUC__) && defined(BOAR_BUILDING_LIBRARY)
#define BOAR_API __attribute__((visibility("default")))
#else
#define BOAR_API
#endif

/* @return the version this library was built as, e.g. "0.2.0". */
BOAR_API const char *boar_version(void);

/* ---------------------------------------------------------------- errors */

/* Error codes, generated with their messages from one table. */
#define BOAR_ERRNO_MAP(X)                                                    \
	X(NOMEM, -1, "out of memory")                                        \
	X(IO, -2, "input/output error")                                      \
	X(PARSE, -3, "malformed input")                                      \
	X(INVAL, -4, "invalid argument")                                     \
	X(FORMAT, -5, "not a boar file of a version this build reads")       \
	X(CORRUPT, -6, "file is truncated or corrupt")                       \
	X(DIVERGED, -7, "training diverged (non-finite weights)")            \
	X(NOGPU, -8, "this build has no GPU support")                        \
	X(NODEVICE, -9, "no usable GPU device")                              \
	X(GPU, -10, "GPU runtime error")                                     \
	X(MISMATCH, -11, "model and data do not fit together")               \
	X(CANCELLED, -12, "stopped by the progress callback")                \
	X(NET, -13, "network error")                                         \
	X(PROTO, -14, "protocol error from peer")                            \
	X(AUTH, -15, "authentication failed")                                \
	X(TIMEOUT, -16, "timed out")

enum {
	BOAR_OK = 0,
#define BOAR_ERRNO_ENUM(name, value, msg) BOAR_E##name = (value),
	BOAR_ERRNO_MAP(BOAR_ERRNO_ENUM)
#undef BOAR_ERRNO_ENUM
};

/* @return a static message for a BOAR_E* code (never NULL). */
BOAR_API const char *boar_strerror(int code);

/* Details of a failure: the code, and where/why in words. */
typedef struct boar_error {
	int code;          /* BOAR_E* */
	uint64_t line;     /* 1-based line of the input, 0 if not about a line */
	char message[512]; /* e.g. "a9a:12: index 0: indices are 1-based" */
} boar_error;

/* -------------------------------------------------------------- datasets */

typedef struct boar_dataset boar_dataset;
typedef struct boar_model boar_model;

enum boar_task {
	BOAR_TASK_AUTO = 0,   /* infer from the file */
	BOAR_TASK_LINEAR = 1, /* CSR rows with one label each */
	BOAR_TASK_MF = 2,     /* (user, item, rating) triplets */
};

/* The input formats, one X(NAME, code, name, task, hashed, help) line
 * each: the enum below and the CLI's --format names come from this list,
 * and the loader calls the parser boar_parse_<name>() (src/data/parse_common.h).
 * task is the task of the format's data (LINEAR or MF); hashed is 1 when
 * features are names, always hashed into slots (hash_bits 0 means 18).
 * AUTO (code 0: detect) is not a format. */
#define BOAR_FORMAT_MAP(X)                                                    \
	X(LIBSVM, 1, libsvm, LINEAR, 0,                                      \
	  "\"label idx:val idx:val ...\" (SVMlight too)")                    \
	X(RATINGS, 2, ratings, MF, 0,                                        \
	  "\"user item rating [...]\": space, ',' or '::'")                  \
	X(VW, 3, vw, LINEAR, 1, "Vowpal Wabbit text: \"label [w] |ns f:v ...\"") \
	X(CSV, 4, csv, LINEAR, 1,                                            \
	  "CSV/TSV: label, numeric, categorical columns")

enum boar_format {
	BOAR_FORMAT_AUTO = 0,
#define BOAR_FORMAT_ENUM_(N, code, name, task, hashed, help) \
	BOAR_FORMAT_##N = (code),
	BOAR_FORMAT_MAP(BOAR_FORMAT_ENUM_)
#undef BOAR_FORMAT_ENUM_
};
/* How many format codes there are, AUTO included: 0 .. BOAR_FORMAT_CODES-1. */
#define BOAR_FORMAT_COUNT_(N, code, name, task, hashed, help) +1
enum { BOAR_FORMAT_CODES = 1 BOAR_FORMAT_MAP(BOAR_FORMAT_COUNT_) };
#undef BOAR_FORMAT_COUNT_

/* @return a format's name ("libsvm", ..., "auto" for 0), or NULL. */
BOAR_API const char *boar_format_name(int format);
/* @return the BOAR_FORMAT_* code named `name` (AUTO included), or
 *         BOAR_EINVAL. */
BOAR_API int boar_format_from_name(const char *name);

/* Rows the reader of a regular file has finished (LIBSVM, VW or CSV;
 * boar_load_options.rows_ready):
 * non-zeros [nnz_begin, nnz_end) of idx and val, and labels [row_begin,
 * row_end), now hold their final bytes, in arrays of nnz_cap and rows_cap
 * entries sized by the reader's counting pass. Every position is reported
 * once, and all of them by the end of the load. They are the loaded
 * dataset's own arrays and positions when the file held exactly the
 * counted rows and non-zeros (the dataset then has these idx, val and
 * label, nnz == nnz_cap and n_rows == rows_cap); otherwise (comments,
 * blank lines, qid tokens, hashed slots merged) the rows moved afterwards
 * and a copy made from the reports is stale. Row offsets are fixed up at
 * the end of the load and are not reported. */
typedef struct boar_rows_ready {
	const uint32_t *idx;
	const float *val, *label;
	uint64_t nnz_cap, rows_cap;
	uint64_t nnz_begin, nnz_end, row_begin, row_end;
} boar_rows_ready;

typedef struct boar_load_options {
	size_t size;      /* sizeof, set by boar_load_options_default */
	int task;         /* enum boar_task */
	int format;       /* enum boar_format */
	int threads;      /* parser threads; 0 = all cores */
	int use_cache;    /* 1: read/write a binary cache beside the file */
	const char *cache_path; /* NULL: FILE.boarcache */
	int hash_bits;    /* 0: ids as given; B > 0: hash ids into 2^B slots.
			     VW and CSV always hash (murmur3): 0 means 18 */
	/* CSV/TSV. A column is a 0-based index or a header name; a list is
	 * comma-separated columns or ranges A-B of them ("Id", "C1-C26").
	 * Columns in no list are numeric unless a value in the file is not a
	 * number, then categorical: one hashed feature per (column, value). */
	const char *csv_label;       /* the label column; NULL: column 0 */
	const char *csv_ignore;      /* columns to skip; NULL: none */
	const char *csv_categorical; /* always categorical; NULL: none */
	const char *csv_numeric;     /* always numeric; NULL: none */
	int csv_separator; /* ',' '\t' ';' ...; 0: ',' or tab, from line 1 */
	int csv_header;    /* 1: line 1 is a header; -1: it is not; 0: auto, a
			      header when its label field is not a number */
	int csv_log;       /* 1: a numeric value v becomes sign(v) log(1+|v|),
			      for long-tailed counts such as Criteo's */
	/* Bytes the dataset may take; more is refused (BOAR_ENOMEM, with the
	 * size it would need) before it is allocated. 0: 3/4 of physical
	 * memory. */
	uint64_t max_memory;
	/* Rows for prediction: a row may have no label (a VW row that starts
	 * at its tag or '|', an empty CSV label field, or, with
	 * csv_label_at, a CSV file without the label column); its label
	 * reads as 0. */
	int labels_optional;
	/* CSV with labels_optional: 1 + the index the label column had in
	 * the training file (0: unknown), so that a file without that column
	 * hashes its other columns as training did. Set by
	 * boar_model_load_options. */
	int csv_label_at;
	/* VW: namespaces, by first letter as VW's --ignore and --keep name
	 * them (' ' the unnamed one), whose features are dropped, or the
	 * only ones kept; NULL: none. */
	const char *vw_ignore;
	const char *vw_keep;
	/* Called after each block of text (tens of MiB) is parsed with the
	 * bytes of the file read so far and its size (0 when not a regular
	 * file), on the loading thread; NULL: none. */
	void (*progress)(uint64_t done, uint64_t total, void *ctx);
	void *progress_ctx;
	/* VW features generated while parsing (so every engine sees them as
	 * ordinary features); namespaces by first letter, ':' any
	 * namespace, items comma-separated; NULL: none. Interactions "ab,abc"
	 * (VW's -q ab, --interactions abc) cross the namespaces' features:
	 * value the product, slot VW's (FNV-combined namespaced hashes).
	 * N-grams "2" or "a2,b3" (VW's --ngram) add the 2..N-grams of each
	 * namespace's consecutive tokens as features "t1^t2..."; skips "1"
	 * or "a1" (VW's --skips) let a gram skip up to K tokens. */
	const char *vw_interactions;
	const char *vw_ngrams;
	const char *vw_skips;
	/* Called as the reader of a regular file of LIBSVM, VW or CSV rows
	 * (not gzip, not a cache) finishes rows, from its parsing threads,
	 * several at once (see boar_rows_ready); no other input calls it
	 * (ratings neither). The CLI's GPU
	 * training copies the rows to the card while the rest is parsed.
	 * NULL: none. */
	void (*rows_ready)(const boar_rows_ready *r, void *ctx);
	void *rows_ready_ctx;
} boar_load_options;

/* Fills *o with defaults: auto task and format, all cores, no cache (a
 * macro passing the caller's size, see "Option structs" above). */
#define boar_load_options_default(o) boar_load_options_init((o), sizeof *(o))
BOAR_API void boar_load_options_init(boar_load_options *o, size_t size);

/* Parses a LIBSVM/SVMlight, ratings, VW or CSV file, gzip-compressed or
 * not (or maps its valid cache).
 * @return 0 and *out, or BOAR_EIO / BOAR_EPARSE / BOAR_ENOMEM ... with *err
 *         naming file and line. */
BOAR_API int boar_dataset_load(const char *path, const boar_load_options *o,
			       boar_dataset **out, boar_error *err);

/* The same from text in memory (len bytes, not NUL-terminated; `name`
 * names it in error messages): for rows that come a few at a time, from a
 * pipe or a socket. Format AUTO is detected from the text; a CSV with a
 * header needs its header line at the start of the text. n_rows may be 0
 * (only blank lines). */
BOAR_API int boar_dataset_parse_text(const char *text, size_t len,
				     const char *name,
				     const boar_load_options *o,
				     boar_dataset **out, boar_error *err);

/* Builds a linear-task dataset from the caller's CSR arrays (copied).
 * row_ptr has n_rows+1 entries; idx are 0-based feature ids < n_features,
 * strictly ascending within a row; values and labels finite.
 * @return 0, BOAR_EINVAL (with *err saying which rule and row) or NOMEM. */
BOAR_API int boar_dataset_from_csr(uint64_t n_rows, uint32_t n_features,
				   const uint64_t *row_ptr, const uint32_t *idx,
				   const float *val, const float *labels,
				   boar_dataset **out, boar_error *err);

/* Builds a ratings dataset from the caller's triplets (copied). */
BOAR_API int boar_dataset_from_ratings(uint64_t n, const uint32_t *users,
				       const uint32_t *items,
				       const float *ratings,
				       boar_dataset **out, boar_error *err);

BOAR_API void boar_dataset_free(boar_dataset *d);

/* A dataset of rows[0..n) of d (copied, in that order, instance weights
 * too): folds for cross-validation or any split the caller draws. Rows
 * may repeat (a bootstrap sample). @return 0, BOAR_EINVAL or NOMEM. */
BOAR_API int boar_dataset_subset(const boar_dataset *d, const uint64_t *rows,
				 uint64_t n, boar_dataset **out,
				 boar_error *err);

/* Splits d by a draw u in [0, 1) per row, hashed from (seed, row) (the
 * same at any thread count and in any order): *held gets the rows with
 * lo <= u < hi, *rest the others, each in row order (either may be NULL).
 * Fold f of K is [f/K, (f+1)/K), so the K folds cover every row once; a
 * holdout of fraction F is [0, F). @return 0, BOAR_EINVAL (also when a side
 * would be empty) or NOMEM. */
BOAR_API int boar_dataset_split(const boar_dataset *d, uint64_t seed,
				double lo, double hi, boar_dataset **rest,
				boar_dataset **held, boar_error *err);

/* Instance weights: row r's loss is scaled by w[r] (finite, >= 0); n must
 * be the dataset's row count. Copied. Call before sharing the dataset. */
BOAR_API int boar_dataset_set_weights(boar_dataset *d, const float *w,
				      uint64_t n, boar_error *err);
/* Same, from a text file of one weight per line (LIBLINEAR's -W). */
BOAR_API int boar_dataset_load_weights(boar_dataset *d, const char *path,
				       boar_error *err);
BOAR_API int boar_dataset_task(const boar_dataset *d);      /* BOAR_TASK_* */
BOAR_API uint64_t boar_dataset_rows(const boar_dataset *d); /* rows/ratings */
BOAR_API uint64_t boar_dataset_nnz(const boar_dataset *d);
/* Linear: largest feature id + 1. Ratings: largest user id + 1. */
BOAR_API uint64_t boar_dataset_features(const boar_dataset *d);
/* Ratings: largest item id + 1; linear: 0. */
BOAR_API uint64_t boar_dataset_items(const boar_dataset *d);

/* Row r of a linear dataset: its ids (0-based; already hashed if the data
 * was loaded with hash_bits, so not for boar_model_predict_row of a hashed
 * model), values and label, pointing into the dataset. @return nnz, or
 * BOAR_EINVAL when r is out of range or the dataset holds ratings. */
BOAR_API int64_t boar_dataset_row(const boar_dataset *d, uint64_t r,
				  const uint32_t **idx, const float **val,
				  float *label, boar_error *err);

/* Synthetic data with a known ground truth. */
typedef struct boar_gen_options {
	size_t size;       /* sizeof, set by boar_gen_options_default */
	int task;          /* BOAR_TASK_LINEAR or BOAR_TASK_MF */
	uint64_t rows;     /* rows (linear) or ratings (MF) */
	uint32_t features; /* linear: dimension; MF: users */
	uint32_t items;    /* MF: items */
	uint32_t nnz_per_row; /* linear: mean non-zeros per row */
	double skew;       /* 0 uniform ids; s > 0: id = D * u^(1+s) power law */
	uint32_t rank;     /* MF: true rank */
	double noise;      /* label-flip probability / rating noise stddev */
	uint64_t seed;
} boar_gen_options;

#define boar_gen_options_default(o) boar_gen_options_init((o), sizeof *(o))
BOAR_API void boar_gen_options_init(boar_gen_options *o, size_t size);
/* Draws a dataset from a hidden model (sparse linear weights, or low-rank
 * factors) so that a fit can be checked against a known optimum.
 * @return 0 and *out, BOAR_EINVAL with the reason in *err, or NOMEM. */
BOAR_API int boar_generate(const boar_gen_options *o, boar_dataset **out,
			   boar_error *err);
/* Writes a dataset as LIBSVM text (linear) or "user item rating" lines,
 * atomically (temp + rename). */
BOAR_API int boar_dataset_write_text(const boar_dataset *d, const char *path,
				     boar_error *err);

/* ------------------------------------------------------------- training */

/* The losses of the linear model, one X(NAME, code, name, kind, prob, param,
 * param_default, help) line each: the enum below, boar_loss_describe(), the
 * CLI's --loss names and help and the model file's loss codes all come from
 * this list. kind is how labels are read: BINARY losses see the label's sign
 * (+1/-1; one-vs-rest over classes), REGRESSION losses the real target,
 * MULTINOMIAL losses a class out of K. prob is 1 when scores are
 * probabilities (a sigmoid of the margin, or a softmax over classes), 0
 * when they are margins or values. param names the loss's one parameter
 * ("" for none), set through boar_options.loss_param. Codes are dense and
 * never reused (they are stored in model files). The math of each loss is
 * src/math/loss.h's boar_loss_<name>(). */
#define BOAR_LOSS_MAP(X)                                                      \
	X(LOGISTIC, 0, logistic, BINARY, 1, "", 0.0,                         \
	  "log loss; predicts probabilities (labels +1/-1 or 1/0)")          \
	X(HINGE, 1, hinge, BINARY, 0, "", 0.0,                               \
	  "linear SVM; predicts margins")                                    \
	X(SQUARED, 2, squared, REGRESSION, 0, "", 0.0,                       \
	  "least squares, (m - y)^2 / 2; real-valued targets")               \
	X(SOFTMAX, 3, softmax, MULTINOMIAL, 1, "", 0.0,                      \
	  "multinomial logistic over K classes")                             \
	X(HUBER, 4, huber, REGRESSION, 0, "delta", 1.0,                      \
	  "robust regression: squared within delta of the target, linear "   \
	  "beyond, so outliers pull with a force of at most delta")          \
	X(QUANTILE, 5, quantile, REGRESSION, 0, "tau", 0.5,                  \
	  "pinball loss: predicts the tau-quantile of the target (0.5: the " \
	  "median); tau in (0, 1)")                                          \
	X(POISSON, 6, poisson, REGRESSION, 0, "", 0.0,                       \
	  "counts >= 0, log link: predicts exp(margin); the loss is half "   \
	  "the Poisson deviance")

enum boar_loss_kind {
	BOAR_LOSS_KIND_BINARY = 0,      /* label sign; one-vs-rest for classes */
	BOAR_LOSS_KIND_REGRESSION = 1,  /* the label itself */
	BOAR_LOSS_KIND_MULTINOMIAL = 2, /* one model over K classes */
};

enum boar_loss {
#define BOAR_LOSS_ENUM_(N, code, name, kind, prob, param, dflt, help) \
	BOAR_LOSS_##N = (code),
	BOAR_LOSS_MAP(BOAR_LOSS_ENUM_)
#undef BOAR_LOSS_ENUM_
};
/* How many losses there are (codes 0 .. BOAR_LOSS_COUNT - 1). */
#define BOAR_LOSS_COUNT_(N, code, name, kind, prob, param, dflt, help) +1
enum { BOAR_LOSS_COUNT = 0 BOAR_LOSS_MAP(BOAR_LOSS_COUNT_) };
#undef BOAR_LOSS_COUNT_
/* Labels with more than two distinct values are classes: logistic and hinge
 * loss then train one-vs-rest (one binary model per class, in one sweep),
 * softmax a multinomial model. Class labels may be any distinct numbers
 * (e.g. 1..20); predictions give the label of the best class. */

typedef struct boar_loss_desc {
	const char *name;     /* "logistic", ... */
	int kind;             /* enum boar_loss_kind */
	int probabilistic;    /* scores are probabilities */
	const char *param;    /* its parameter's name, or "" */
	double param_default; /* used when loss_param is BOAR_AUTO */
	const char *help;     /* one line */
} boar_loss_desc;

/* @return the description of a BOAR_LOSS_* code, or NULL for an unknown
 *         one. The pointer is static. */
BOAR_API const boar_loss_desc *boar_loss_describe(int loss);
/* @return the BOAR_LOSS_* code named `name`, or BOAR_EINVAL. */
BOAR_API int boar_loss_from_name(const char *name);

/* The optimizers, one X(NAME, code, name, accumulates, help) line each.
 * An optimizer turns the epoch's step size eta into a coordinate's rate;
 * one that `accumulates` keeps one running sum per coordinate (of squared
 * gradients, for AdaGrad), one that does not steps at eta. AUTO (the
 * task's choice) is not one of them; code 2 is its. */
#define BOAR_OPTIMIZER_MAP(X)                                                 \
	X(SGD, 0, sgd, 0, "step eta * decay^(epoch - 1)")                    \
	X(ADAGRAD, 1, adagrad, 1,                                            \
	  "per-coordinate steps eta / sqrt(sum of squared gradients)")      \
	X(NORMALIZED, 3, normalized, 1,                                      \
	  "adagrad on features divided by their typical |value|: raw "       \
	  "counts and unscaled columns need no tuning (NAG; not on the "     \
	  "GPU or a cluster, where auto is adagrad)")

enum boar_optimizer {
#define BOAR_OPT_ENUM_(N, code, name, acc, help) BOAR_OPT_##N = (code),
	BOAR_OPTIMIZER_MAP(BOAR_OPT_ENUM_)
#undef BOAR_OPT_ENUM_
	BOAR_OPT_AUTO = 2, /* the task's default: NORMALIZED for linear
			      models on the CPU (AdaGrad on the GPU and
			      in cluster training), SGD
			      for MF (as accurate there, and twice as
			      fast) */
};

/* How many optimizer codes there are, AUTO included: 0 .. BOAR_OPT_CODES-1. */
#define BOAR_OPT_COUNT_(N, code, name, acc, help) +1
enum { BOAR_OPT_CODES = 1 BOAR_OPTIMIZER_MAP(BOAR_OPT_COUNT_) };
#undef BOAR_OPT_COUNT_

/* @return an optimizer's name ("sgd", "adagrad", "auto"), or NULL. */
BOAR_API const char *boar_optimizer_name(int optimizer);
/* @return the BOAR_OPT_* code named `name` (AUTO included), or
 *         BOAR_EINVAL. */
BOAR_API int boar_optimizer_from_name(const char *name);

enum boar_update {
	BOAR_UPDATE_ATOMIC = 0, /* compare-and-swap add: no update is lost */
	BOAR_UPDATE_RACY = 1,   /* relaxed load + store: updates may be lost,
				   never torn (the original Hogwild! code) */
};

enum boar_device {
	BOAR_DEVICE_CPU = 0,
	BOAR_DEVICE_GPU = 1,
};

/* How the GPU engine keeps MF factors (boar_options.mf_storage). f16 and
 * bf16 halve the memory traffic of each row; the arithmetic stays fp32 and
 * the stored values are rounded stochastically (unbiased), so small steps
 * are not rounded away. The CPU keeps fp32. */
enum boar_storage {
	BOAR_STORAGE_F32 = 0,
	BOAR_STORAGE_F16 = 1,
	BOAR_STORAGE_BF16 = 2,
};

/* The loss matrix factorization fits (boar_options.mf_loss), LIBMF's -f 0
 * and -f 1. SQUARED: (p - r)^2 / 2 of each rating, the mean (RMSE is what
 * it lowers). ABSOLUTE: |p - r|, the median (MAE): every rating pulls with
 * the error's sign only, so a few wild ratings move the factors no more
 * than any other. */
enum boar_mf_loss {
	BOAR_MF_LOSS_SQUARED = 0,
	BOAR_MF_LOSS_ABSOLUTE = 1,
};

/* What one epoch did; passed to the progress callback. */
typedef struct boar_epoch_stats {
	int epoch;              /* 1-based */
	double seconds;         /* wall time of this epoch's sweep */
	double updates_per_sec; /* non-zeros (or ratings) processed per second */
	double train_loss;      /* mean loss seen during the sweep (progressive) */
	int has_test;           /* the fields below are set */
	double test_loss;       /* log loss / hinge / squared; MF: squared */
	double test_accuracy;   /* binary tasks */
	double test_auc;        /* binary tasks */
	double test_rmse;       /* squared loss and MF */
	double eta;             /* step size used in this epoch */
	int has_holdout;        /* early stopping is watching holdout_loss */
	double holdout_loss;    /* loss on the test set or held-out rows */
	int best_epoch;         /* epoch with the lowest holdout loss so far */
	/* Added after 0.1.0 (the library allocates this struct). */
	double test_mae;        /* regression and MF: mean absolute error */
} boar_epoch_stats;

/* Called after every epoch; return non-zero to stop training (boar_train
 * then returns BOAR_ECANCELLED with the model trained so far). */
typedef int (*boar_progress_fn)(const boar_epoch_stats *s, void *ctx);

/* Progress inside an epoch (boar_options.sweep_progress). */
typedef struct boar_sweep_stats {
	int epoch;          /* 1-based */
	uint64_t rows_done; /* rows (ratings) of the epoch swept so far */
	uint64_t rows;      /* rows of the epoch (this process's share) */
	double seconds;     /* since the epoch's sweep began */
} boar_sweep_stats;
typedef void (*boar_sweep_progress_fn)(const boar_sweep_stats *s,
				       void *ctx);

/* For eta, eta_decay and l2: pick the default of the task and optimizer
 * (boar_options_resolve_task says which; MF's eta and l2 also scale with
 * the ratings' standard deviation, eta as 1/stddev, l2 as stddev). */
#define BOAR_AUTO (-1.0)
/* early_stop: 2 epochs for MF (on the CPU a 2% holdout when there is no
 * test set), off for linear models. */
#define BOAR_EARLY_STOP_AUTO (-1)

typedef struct boar_options {
	size_t size;       /* sizeof(boar_options) as the caller was compiled:
			      set by boar_options_default (see "Option
			      structs" at the top) */
	int task;          /* enum boar_task; AUTO = from the dataset */
	int loss;          /* enum boar_loss (linear task) */
	int optimizer;     /* enum boar_optimizer */
	int update;        /* enum boar_update */
	int epochs;        /* passes over the data */
	double eta;        /* initial step size; BOAR_AUTO: the task's default */
	double eta_decay;  /* step *= eta_decay after every epoch */
	double l1;         /* L1, applied lazily to touched coordinates */
	double l2;         /* L2 (linear: split by feature frequency; MF: on the
			      factors and biases); BOAR_AUTO: task's default */
	uint64_t seed;     /* shuffling and initialization */
	int threads;       /* 0 = all cores */
	int hash_bits;     /* the dataset's hashing (kept in the model) */
	uint32_t rank;     /* MF: factors per user/item */
	int mf_biases;     /* MF: learn global mean + user/item biases */
	double init_scale; /* MF: factors drawn from U(-a, a),
			      a = init_scale / sqrt(rank) */
	int device;        /* enum boar_device */
	int gpu_id;        /* which CUDA device */
	int streams;       /* GPU: CUDA streams for the data */
	const boar_dataset *test; /* evaluated after every epoch, or NULL */
	boar_progress_fn progress;
	void *progress_ctx;
	/* Warm start: continue from this model (same task and hashing; its
	 * loss, classes and rank are kept; features, users or items it has
	 * not seen start at 0). The caller keeps ownership. */
	const boar_model *init_model;
	/* Early stopping: stop after this many epochs without a lower loss on
	 * a `holdout` fraction of the training rows (drawn from the seed;
	 * 0.1 when early stopping is on with neither holdout nor test set),
	 * or without a holdout on the test set, and return the best epoch's
	 * model. 0 = off. A holdout beside a test set is held out and its
	 * loss reported either way. */
	int early_stop;
	double holdout;
	/* Same model at any thread count: rows are taken in fixed batches,
	 * gradients computed in parallel against the batch's starting weights
	 * and applied in row order. Slower than Hogwild!; see bench/. */
	int deterministic;
	/* Class weights: a row whose label equals class_weight_labels[k] has
	 * its loss scaled by class_weight_values[k] (LIBLINEAR's -wi). */
	const float *class_weight_labels;
	const float *class_weight_values;
	int n_class_weights;
	/* Fields below were added after 0.1.0 (new ones go at the end). */
	/* The CUDA engine plugin (libboar-gpu.so.N) to open for device GPU;
	 * NULL: beside libboar, then its install libdir, then the loader's
	 * search path. */
	const char *gpu_plugin;
	/* GPU experiments (0: the engine's choice): plain-store kernels for
	 * update racy (1), the bytes of a streamed chunk, and the floor of
	 * rows per thread block. */
	int gpu_racy_kernels;
	uint64_t gpu_chunk_bytes;
	uint32_t gpu_rows_per_block;
	/* Bytes the model and its training state may take; a larger model
	 * (an id near 2^32 in a tiny file) is refused with BOAR_ENOMEM and
	 * the size it would need, before it is allocated. 0: 3/4 of
	 * physical memory. */
	uint64_t max_memory;
	/* Keep the optimizer state (AdaGrad sums, the step schedule) in the
	 * model, so that a warm start from it continues where this run
	 * stopped (VW's --save_resume). A warm start from a model that has
	 * the state resumes it and keeps it. CPU only. */
	int save_resume;
	/* The loss's parameter (boar_loss_describe(loss)->param names it:
	 * Huber's delta); BOAR_AUTO: its default. A loss without one takes
	 * only BOAR_AUTO. A warm start keeps the initial model's. */
	double loss_param;
	int mf_storage;    /* enum boar_storage; GPU MF only (default F32) */
	/* Called about every 100 ms while an epoch's sweep runs (first
	 * after 100 ms: short epochs never call it), from a thread of the
	 * library's own, one call at a time and never after that epoch's
	 * progress call; with progress_ctx. NULL: none. The CPU engine's
	 * Hogwild! sweeps report it; other engines and deterministic
	 * training do not. */
	boar_sweep_progress_fn sweep_progress;
	/* MF: L2 of the user rows (factors and bias) and of the item rows
	 * apart (LIBMF's -l2 for P and Q); BOAR_AUTO: l2. CPU only when
	 * they differ. */
	double l2_user;
	double l2_item;
	/* MF: keep the factors >= 0 (LIBMF's -n): every step is projected
	 * back and the initial factors are drawn from U(0, a); the mean and
	 * biases stay free. CPU only. */
	int mf_nonneg;
	/* Linear: the value of the bias's constant feature (LIBLINEAR's -B;
	 * default 1); 0: no bias, the model goes through the origin. The bias
	 * is never regularized, so the scale sets only how fast it moves: a
	 * step of the bias's weight w is that of a feature of value B, and
	 * the margin gains B w. CPU only unless 1. */
	double bias_scale;
	/* MF: the loss fitted (enum boar_mf_loss; default SQUARED). The
	 * model keeps it (boar_model_mf_loss); its test and holdout loss is
	 * then the MAE, which early stopping watches. A warm start keeps the
	 * initial model's. */
	int mf_loss;
	/* GPU MF: train on n_gpus devices of one host, gpu_id .. gpu_id +
	 * n_gpus - 1 (default 1): the ratings cut into an n x n grid of user
	 * x item blocks, each GPU sweeping its users' row of blocks one
	 * block at a time while the item blocks rotate between the GPUs.
	 * Resident data only (no streaming); linear models take 1. */
	int n_gpus;
	/* The training rows already on the GPU, copied while they were read
	 * (boar_engine_warm_done, src/engine/engine_ops.h: the CLI's train
	 * path); NULL: none. The GPU engine takes the copy when it is this
	 * dataset's, else copies the rows as usual. */
	const void *gpu_preload;
} boar_options;

/* Fills *o with defaults (logistic, optimizer BOAR_OPT_AUTO, racy updates,
 * 10 epochs, eta, eta_decay, l2 and loss_param BOAR_AUTO (linear: decay
 * 0.9; MF: constant step), early_stop BOAR_EARLY_STOP_AUTO, no L1, seed 1,
 * all cores, rank 16, MF biases on, CPU, 4 streams) and o->size. A macro,
 * so that the size is the caller's: boar_options_init fills exactly that
 * many bytes. */
#define boar_options_default(o) boar_options_init((o), sizeof *(o))
BOAR_API void boar_options_init(boar_options *o, size_t size);

/* The options boar_train uses on data of `task` (BOAR_TASK_LINEAR or
 * BOAR_TASK_MF, for an AUTO o->task): the optimizer, eta and l2 that
 * BOAR_OPT_AUTO / BOAR_AUTO stand for, replaced in place. The one place
 * these defaults live. */
BOAR_API void boar_options_resolve_task(boar_options *o, int task);

/* Whether *o is usable with this dataset (train may be NULL: the options
 * alone).
 * @return 0, or BOAR_EINVAL with *err naming the field and the rule, such
 *         as "eta must be > 0". */
BOAR_API int boar_options_check(const boar_options *o,
				const boar_dataset *train, boar_error *err);

/* Trains a model. With threads = 1 the result is bit-for-bit reproducible
 * for a given seed; with more threads updates race by design and results
 * vary slightly run to run.
 * @return 0 and *out; BOAR_EINVAL (reason in *err), BOAR_EDIVERGED,
 *         BOAR_ECANCELLED (then *out is still set), BOAR_ENOGPU, ... */
BOAR_API int boar_train(const boar_dataset *train, const boar_options *o,
			boar_model **out, boar_error *err);

/* ------------------------------------------- training over a parameter server
 *
 * Data-parallel training over a sharded key-value store of the weights,
 * with any transport the caller brings (libboar-net, boar's io_uring
 * parameter server, is one; see net/README.md). The keys are the positions
 * of the linear model's weights: (dim + 1) * K of them, feature-major, the
 * bias(es) last. Every worker loads the whole training set and draws the
 * same row order per epoch; worker R of W sweeps the block
 * [R*n/W, (R+1)*n/W) of it in clocks of about sync_every rows. A worker
 * holds only the weights of the features its rows (and its test rows)
 * use, numbered compactly (a 2^32-weight hashed model needs a worker's
 * working set, not 16 GiB). Per clock
 * the library pulls the keys the clock's rows touch, sweeps them, pushes
 * (after - before) for those keys and ticks the clock; the bias's delta is
 * pushed as 1/W of it (every worker moves it every clock). Linear models
 * only; no warm start, holdout, early stopping or deterministic mode.
 * Callbacks return 0 or a negative BOAR_E* code with *err filled. */
typedef struct boar_ps_transport {
	size_t size;           /* sizeof(boar_ps_transport) */
	void *ctx;             /* passed to every callback */
	uint32_t rank;         /* this worker, < n_workers */
	uint32_t n_workers;
	uint64_t sync_every;   /* rows per clock; 0: 1000 */
	/* Once the model's shape is known: n_keys keys from now on. */
	int (*connect)(void *ctx, uint64_t n_keys, boar_error *err);
	/* Current values of n ascending keys into vals[n]. */
	int (*pull)(void *ctx, const uint64_t *keys, uint32_t n, float *vals,
		    boar_error *err);
	/* Adds deltas[n] to n ascending keys. */
	int (*push)(void *ctx, const uint64_t *keys, const float *deltas,
		    uint32_t n, boar_error *err);
	/* The end of a clock that swept `rows` rows. */
	int (*clock)(void *ctx, uint64_t rows, boar_error *err);
	/* After the last epoch. A worker that gathers writes the whole model
	 * into w[n_keys] and sets *gathered = 1 (the trained model is then
	 * the servers'; else it is this worker's replica). */
	int (*finish)(void *ctx, float *w, uint64_t n_keys, int *gathered,
		      boar_error *err);
	/* 1: the dataset holds only this worker's part of the rows (each
	 * worker read its own): sweep all of it every epoch. 0: every worker
	 * holds all rows and sweeps its 1/n_workers of each epoch's order. */
	int local_rows;
	/* NULL, or BOAR_PS_PHASES doubles: the library adds to each the
	 * seconds this worker spent in that phase (boar_ps_phase), to say
	 * where a cluster's wall time goes. */
	double *phase_seconds;
	/* NULL, or: ask now for the current values of n ascending keys as
	 * they will be at the next clock, for the next pull of the same
	 * keys (and n) to collect; the values it then gives count this
	 * worker's pushes of the clock in between. The library asks for the
	 * next clock's keys before each sweep, so the transport can carry
	 * them while the engine sweeps; keys stay valid until collected. */
	int (*pull_ahead)(void *ctx, const uint64_t *keys, uint32_t n,
			  boar_error *err);
	/* NULL, or: the library sets *model_sharded to 1 when the trained
	 * model stays in the servers, its dense weights ((dim + 1) * K
	 * floats, twice: the model and the gather) being over this
	 * process's memory limit (boar_options.max_memory, by default 3/4
	 * of physical memory, and ulimit -v). finish then gets w = NULL
	 * (nothing to gather; the servers must keep running), and *out is
	 * the model's head: no feature weights (dim 0), its loss, hashing,
	 * classes and input; predictions pull each row's weights from the
	 * servers (`boar predict --ps`). Else 0, and *out as before. Without
	 * this field such a model is gathered anyway. */
	int *model_sharded;
	/* AdaGrad's sums of squared gradients. 0 (the default, and a
	 * transport of an older size): each worker keeps its own sums (they
	 * see 1/n_workers of the gradients: steps about sqrt(n_workers)
	 * longer than one node's, which up to 4 workers with large clocks
	 * reach the single node's loss sooner with; 8 overshoot). 1:
	 * shared through the servers as n_keys more keys, the sum of weight
	 * key k at n_keys + k (connect then gets 2 n_keys: finish gathers
	 * them too); each worker loads them with the weights it pulls and
	 * pushes what its steps added, so a coordinate's step shrinks with
	 * every worker's gradients, as on one node (only the CPU engine; the
	 * GPU engine keeps its own); twice the traffic, and with clocks of
	 * 100000 rows the loss falls more slowly early (bench/RESULTS-net.md,
	 * "AdaGrad's sums: the default measured"). */
	int shared_sums;
	/* NULL, or: returns once every worker still training has ticked
	 * `clock` clocks, the pushes it made before them applied on every
	 * server (a barrier; workers that finished or were dropped do not
	 * hold it). With it, matrix factorization trains in DSGD strata:
	 * W workers sweep W x W blocks of users x items so that no two
	 * touch one block at once, a block of rows travels twice per group
	 * of W clocks instead of every clock, and sync_every is not used. */
	int (*wait_clock)(void *ctx, uint64_t clock, boar_error *err);
	/* NULL, or: push as push does, called instead of it where keys (the
	 * same array) and n are exactly those of the last pull, in their
	 * order, and no other pull came in between (pull_ahead may have),
	 * or of the pull before it where the last was the next clock's,
	 * collected early (pull_ahead_ready; it is another array), so the
	 * transport may send the deltas without the keys, which the
	 * servers have from that pull. The library calls it for a clock
	 * pulled alone (not for one pulled with an evaluation's keys or
	 * after an evaluation's pulls); matrix factorization uses push. */
	int (*push_pulled)(void *ctx, const uint64_t *keys,
			   const float *deltas, uint32_t n, boar_error *err);
	/* NULL, or: pull_ahead, and where its values go: vals[n], which the
	 * library leaves alone until it collects them with pull (the same
	 * keys, n and vals; a run that fails collects them too before it
	 * frees vals), so a transport that reads the answer while the
	 * engine sweeps may write it there as it comes, not into a buffer
	 * of its own to be copied at the collect (a clock's values are
	 * megabytes). The library calls it instead of pull_ahead where it
	 * is set. */
	int (*pull_ahead_into)(void *ctx, const uint64_t *keys, uint32_t n,
			       float *vals, boar_error *err);
	/* NULL, or: 1 where the pull asked ahead may be collected now,
	 * before this clock's pushes, without waiting: every server's
	 * answer came, and none counts this worker's pushes of the clock
	 * (none was held for them); else 0. The values collected then are
	 * those of the next clock without this clock's pushes, which the
	 * library adds itself as it stores them and loads the next clock's
	 * (one pass over the weights for the three), and pushes after the
	 * collect are not added to it. A transport that cannot tell says
	 * 0. */
	int (*pull_ahead_ready)(void *ctx);
	/* NULL, or: pull_ahead_into with the keys also as bits: bit i of
	 * bits[w] is set exactly where key bits_base + 64 w + i is one of
	 * keys[0..n) (bits_base a multiple of 64; the words reach
	 * keys[n - 1]'s), left alone as keys and vals are until the
	 * collect, so a transport that asks with bitmaps takes their words
	 * from there rather than setting a bit a key on the thread that
	 * sends the request (a clock's keys are megabytes: that pass held
	 * each request back by milliseconds). The library calls it instead
	 * of pull_ahead_into, where it is set and a bitmap of every key of
	 * the model is no larger than a clock's keys (not for a pull asked
	 * with an evaluation's keys); the transport still chooses, request
	 * by request, whether keys go as a bitmap. */
	int (*pull_ahead_bits)(void *ctx, const uint64_t *keys, uint32_t n,
			       const uint64_t *bits, uint64_t bits_base,
			       float *vals, boar_error *err);
	/* 1: this worker's finish gathers the whole model (sets *gathered
	 * with w not NULL). Where it has a test set, the library then
	 * evaluates the last epoch after finish, on the gathered model
	 * (what *out will be), not on the test set's keys pulled before
	 * it: the last epoch's progress call comes after finish, and
	 * final_evaluated says so. Not for matrix factorization, nor a
	 * model that stays in the servers (model_sharded). */
	int gathers;
	/* NULL, or: the library sets *final_evaluated to 1 where the last
	 * epoch's test metrics (its progress call) are those of the model
	 * it returns, evaluated after finish; else 0 (a caller that wants
	 * the returned model's metrics evaluates it). */
	int *final_evaluated;
} boar_ps_transport;

/* The phases of boar_ps_transport.phase_seconds. */
enum boar_ps_phase {
	BOAR_PS_KEYS,    /* finding a clock's keys */
	BOAR_PS_PULL,    /* waiting on pull */
	BOAR_PS_LOCAL,   /* values into and out of the engine, deltas */
	BOAR_PS_SWEEP,   /* the engine's sweeps */
	BOAR_PS_PUSH,    /* in push */
	BOAR_PS_CLOCK,   /* in clock */
	BOAR_PS_REFRESH, /* pulling the whole model before an evaluation */
	BOAR_PS_PHASES
};

/* Trains as worker t->rank over the transport: the options of boar_train
 * (o->progress is called after each of this worker's epochs, with test
 * metrics of a fresh pull of the test set's weights when o->test is set;
 * the last epoch's, with t->gathers, of the gathered model after finish).
 * @return 0 and *out, or a BOAR_E* code with *err. */
BOAR_API int boar_train_ps(const boar_dataset *train, const boar_options *o,
			   const boar_ps_transport *t, boar_model **out,
			   boar_error *err);

/* ------------------------------------------------------ model selection
 *
 * A grid search over eta, l1 and l2 (LIBLINEAR's -C): every combination of
 * the values given is trained with the other options of o and judged on
 * rows it did not train on, by the held-out RMSE for squared loss and MF,
 * else by the held-out loss (log loss for logistic). Several
 * configurations train at once on the one dataset, the threads split
 * between them. */
struct boar_search_result;
typedef struct boar_search_options {
	size_t size; /* sizeof, set by boar_search_options_default */
	/* The values to try (every combination); n 0: o's own value. */
	const double *eta;
	int n_eta;
	const double *l1;
	int n_l1;
	const double *l2;
	int n_l2;
	/* How a configuration is judged, the first that is set: on a test
	 * set; by K-fold cross-validation (folds >= 2, boar_dataset_split's
	 * folds of o->seed); on a holdout fraction of the rows (0 < holdout
	 * < 1). None: 5 folds. */
	const boar_dataset *test;
	int folds;
	double holdout;
	/* Configurations trained at once, each on threads / parallel of
	 * o->threads; 0: as many as there are threads (one thread each: each
	 * configuration's model is then the one-thread model, the same run to
	 * run). */
	int parallel;
	/* Called as each configuration's result is final (from the
	 * library's threads, one call at a time); non-zero stops the search
	 * (BOAR_ECANCELLED). May be NULL. */
	int (*on_result)(const struct boar_search_result *r, int index,
			 void *ctx);
	void *ctx;
} boar_search_options;

/* One configuration's result. The library writes result_size bytes of each
 * (pass sizeof(boar_search_result)); fields are only added at the end. */
typedef struct boar_search_result {
	double eta, l1, l2; /* the configuration (defaults resolved) */
	int rc;             /* 0, or the BOAR_E* its training failed with */
	double score;       /* what the choice minimizes: held-out RMSE
			       (regression, MF) or loss (also MF's for MAE,
			       the MAE); mean over folds */
	double score_sd;    /* standard deviation over the folds (else 0) */
	double loss, accuracy, auc, rmse; /* held-out means (boar_metrics) */
	int binary;         /* accuracy and auc are meaningful */
	double seconds;     /* training and evaluation, summed over folds */
	int epochs;         /* epochs run (early stopping: the last fold's) */
} boar_search_result;

#define boar_search_options_default(o) \
	boar_search_options_init((o), sizeof *(o))
BOAR_API void boar_search_options_init(boar_search_options *o, size_t size);

/* @return how many configurations s describes (the product of its list
 * lengths, an empty list counting 1), or BOAR_EINVAL for bad options. */
BOAR_API int boar_search_size(const boar_search_options *s);

/* Trains and judges every configuration into results[boar_search_size(s)],
 * eta varying slowest and l2 fastest, and sets *best to the index of the
 * lowest score (the first of equals). o->test is not used. o->progress, if
 * set, is called after every epoch of every configuration (one call at a
 * time, from the library's threads) and then of the final model; non-zero
 * stops the search (BOAR_ECANCELLED). With model != NULL, *model is the
 * chosen configuration trained on all of train at o->threads or, with a
 * test set, the model that was judged. @return 0, BOAR_EINVAL (reason in
 * *err), the first configuration's error when every one failed (e.g.
 * BOAR_EDIVERGED), BOAR_ECANCELLED or NOMEM; results are written either
 * way, *best and *model only on success. */
BOAR_API int boar_search(const boar_dataset *train, const boar_options *o,
			 const boar_search_options *s,
			 boar_search_result *results, size_t result_size,
			 int *best, boar_model **model, boar_error *err);

/* --------------------------------------------------------------- models */

BOAR_API void boar_model_free(boar_model *m);
BOAR_API int boar_model_task(const boar_model *m);
BOAR_API int boar_model_loss(const boar_model *m);
/* The feature hashing the model was trained with: load data for it with the
 * same boar_load_options.hash_bits. */
BOAR_API int boar_model_hash_bits(const boar_model *m);
/* MF: factors per user/item; linear: 0. */
BOAR_API uint32_t boar_model_rank(const boar_model *m);
/* MF: the loss it was trained for (enum boar_mf_loss); linear: -1. */
BOAR_API int boar_model_mf_loss(const boar_model *m);
/* Linear: the weight array into *w, (dim + 1) * max(K, 1) floats,
 * feature-major (w[j * K + c]; binary K = 1), the biases last, and their
 * count into *n. @return 0, or BOAR_EINVAL for an MF model. */
BOAR_API int boar_model_weights(const boar_model *m, const float **w,
				uint64_t *n, boar_error *err);
/* MF: the factor matrices (users x rank and items x rank, row-major), the
 * biases (NULL without) and the global mean. @return 0, or BOAR_EINVAL for
 * a linear model. */
BOAR_API int boar_model_factors(const boar_model *m, const float **P,
				const float **Q, const float **bu,
				const float **bi, float *mu,
				uint64_t *n_items, boar_error *err);
/* Multiclass models: the number of classes K, and (if labels != NULL) their
 * label values in class order. 0 for binary, regression and MF models. */
BOAR_API uint32_t boar_model_classes(const boar_model *m, const float **labels);
/* Linear: feature slots (ids 0..dim-1; weights per slot: one, or K for a
 * multiclass model, plus the bias); MF: users. */
BOAR_API uint64_t boar_model_dim(const boar_model *m);

/* How the model's training data was read, so that data for it is read
 * alike: *o gets the model's task and hashing and, for a model trained on
 * a file, the format that read it and (CSV) its columns and transforms
 * (strings pointing into the model); the rest is boar_load_options_default.
 * @return 1 when the model knows how its file was read, 0 when it does not
 * (trained on arrays, or saved by boar 0.1 before it kept this). */
BOAR_API int boar_model_load_options(const boar_model *m, boar_load_options *o);

/* Versioned binary file with checksum, written atomically (temp + rename). */
BOAR_API int boar_model_save(const boar_model *m, const char *path,
			     boar_error *err);
BOAR_API int boar_model_load(const char *path, boar_model **out,
			     boar_error *err);
/* Human-readable text: a header of "key value" lines, then one
 * "feature weight" line per non-zero weight (MF: "u ID f1 f2 ..." and
 * "i ID ..." lines). */
BOAR_API int boar_model_export_text(const boar_model *m, const char *path,
				    boar_error *err);

/* Raw score of one row given as 0-based ids into *score (the margin
 * w.x + b; for logistic loss pass it to boar_sigmoid for a probability;
 * for a multiclass model, the label of the best class). Ids are hashed as
 * the model was trained; ids it does not know are ignored. Does not
 * allocate; safe from many threads on one model.
 * @return 0, or BOAR_EINVAL for an MF model. */
BOAR_API int boar_model_predict_row(const boar_model *m, size_t nnz,
				    const uint32_t *idx, const float *val,
				    double *score, boar_error *err);
/* Multiclass: the K per-class scores of one row into scores[K]
 * (probabilities for softmax and one-vs-rest logistic, margins for hinge).
 * Binary models write one score. Does not allocate.
 * @return K, or BOAR_EINVAL for an MF model. */
BOAR_API int boar_model_predict_scores(const boar_model *m, size_t nnz,
				       const uint32_t *idx, const float *val,
				       double *scores, boar_error *err);
/* Ids for models trained on Vowpal Wabbit text or CSV data, whose features
 * are names: pass these as the ids of boar_model_predict_row (the model
 * keeps their low hash_bits bits).
 * VW: the hash VW gives feature `name` in namespace `ns` ("" for the
 * unnamed one): MurmurHash3 x86_32 of the name, seeded with the namespace's
 * hash; an all-digit name is its number plus that seed.
 * CSV: numeric column `column` (0-based) is boar_hash_csv(column, NULL)
 * with the value as the row's value; categorical value `value` of a column
 * is boar_hash_csv(column, value) with value 1. */
BOAR_API uint32_t boar_hash_vw(const char *ns, const char *name);
BOAR_API uint32_t boar_hash_csv(uint32_t column, const char *value);

/* The names behind a hashed model's slots (VW's --invert_hash): reads
 * the VW or CSV file at path as o says (use boar_model_load_options to
 * read it as a model's training data was) and calls fn(ctx, slot, name,
 * len) for every feature of every row, in file order, on one thread. A
 * name is "ns^token" ("token" in the unnamed namespace), "ns^t1^t2" for
 * an n-gram, names joined by '*' for an interaction, CSV "column=value"
 * or "column"; it is not NUL-terminated and lives only for the call.
 * fn returns 0 to go on, non-zero to stop (the call then returns
 * BOAR_ECANCELLED). @return 0, or a BOAR_E* code (BOAR_EINVAL for LIBSVM
 * or ratings data, whose features have ids, not names). */
typedef int (*boar_name_fn)(void *ctx, uint32_t slot, const char *name,
			    size_t len);
BOAR_API int boar_feature_names(const char *path, const boar_load_options *o,
				boar_name_fn fn, void *ctx, boar_error *err);

/* Predicted rating for a (user, item) pair of an MF model into *rating
 * (ids it does not know contribute nothing). @return 0, or BOAR_EINVAL
 * for a linear model. */
BOAR_API int boar_model_predict_pair(const boar_model *m, uint32_t user,
				     uint32_t item, double *rating,
				     boar_error *err);
BOAR_API double boar_sigmoid(double margin);

/* Scores for every row of d into out[boar_dataset_rows(d)]: probability
 * (logistic), margin (hinge), value (squared), rating (MF) or the predicted
 * label (multiclass). threads 0: all cores.
 * @return 0, or BOAR_EMISMATCH when d was not read as the model's data
 *         was (task, hash_bits; *err says which). */
BOAR_API int boar_predict(const boar_model *m, const boar_dataset *d,
			  double *out, int threads, boar_error *err);

/* Per-class scores of every row into out[rows * K] (row-major; K from
 * boar_model_classes, or 1 for a binary model): probabilities for softmax
 * and logistic, margins for hinge. @return 0, BOAR_EMISMATCH, or
 * BOAR_EINVAL for an MF model. */
BOAR_API int boar_predict_scores(const boar_model *m, const boar_dataset *d,
				 double *out, int threads, boar_error *err);

typedef struct boar_metrics {
	uint64_t rows;
	double loss;     /* mean loss of the model's kind */
	double accuracy; /* binary tasks */
	double auc;      /* binary tasks */
	double rmse;     /* regression and MF, of the predictions in the
			    label's scale (Poisson: exp(margin)) */
	int binary;      /* accuracy and auc are meaningful */
	/* Added in 0.2. */
	double mae;      /* regression and MF: mean absolute error */
	double below;    /* regression and MF: the fraction of labels below
			    the prediction (a quantile model's is near tau) */
} boar_metrics;

/* The model's metrics on d (threads 0: all cores). @return 0,
 * BOAR_EMISMATCH (as boar_predict) or BOAR_ENOMEM. */
BOAR_API int boar_evaluate(const boar_model *m, const boar_dataset *d,
			   boar_metrics *out, int threads, boar_error *err);

#ifdef __cplusplus
}
#endif
#endif /* BOAR_H */
