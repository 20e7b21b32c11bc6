/* ps_model.h - a model kept in the shards of a parameter server, and
 * predictions through them (`boar predict/eval --ps`).
 *
 * A cluster's model too large for one process (2^32 hashed weights: 16
 * GiB) is never gathered (boar_ps_transport.model_sharded): its weights
 * stay in the shards, and worker 0's -m FILE is a small file that says
 * what the model is without them: "BOARPSM1", then the model's head (an
 * ordinary model file of no features: loss, classes, biases, how its data
 * was read), its hashing and dim, and the cluster's shape (shards,
 * workers). `boar predict --ps HOST:PORT,... -m FILE DATA` loads DATA as
 * the model's data, pulls from the shards exactly the weights its rows
 * use (data/feature_map.h: renumbered compactly, in the model's order)
 * and scores them with the ordinary code: the scores are those of the
 * whole model. Such a file without --ps is refused by name, never scored
 * with the bias alone.
 *
 * Layout (little-endian): "BOARPSM1", u32 version, u32 hash_bits, u32
 * slot_ids, u32 n_workers, u32 n_shards, u32 copies, u64 dim (features),
 * u64 length of the head that follows, the head (boar_model_save's
 * bytes). Version 1: copies 0, the shards hold the weights' keys alone;
 * version 2 (AdaGrad's sums shared beside the weights): copies 2, they
 * hold twice as many (boar_ps_transport.local_sums), which a reader of
 * version 1 would connect with the wrong count for.
 */
#ifndef BOAR_CLI_PS_MODEL_H
#define BOAR_CLI_PS_MODEL_H

#include <stdint.h>

#include "boar.h"
#include "data/dataset.h"
#include "data/feature_map.h"

struct ps_model_info {
	int hash_bits, slot_ids;
	uint32_t n_workers, n_shards;
	uint64_t dim;
	/* keys the shards hold (write: the worker's report; 0 or the
	 * weights' count: the weights alone); read: the weights' or twice */
	uint64_t keys;
};

/* Whether path starts as a model kept in the shards. */
int ps_model_is(const char *path);

/* head: boar_train_ps's *out with model_sharded (its hashing is written,
 * not info's); info->dim: the data's features. */
int ps_model_write(const char *path, const boar_model *head,
		   const struct ps_model_info *info, boar_error *err);
/* *head (its hashing restored: ready to load data for) and *info. */
int ps_model_read(const char *path, boar_model **head,
		  struct ps_model_info *info, boar_error *err);

/* predict's and eval's options for it (their O_PS and O_SECRET). */
#define PS_MODEL_OPTS                                                        \
	{ O_PS, "ps", 0, "HOST:PORT,...",                                    \
	  "MODEL is kept in these shards (boar train -m of a model too "     \
	  "large to gather): pull the weights FILE's rows use from them" },  \
	{ O_SECRET, "secret-file", 0, "FILE",                                \
	  "--ps: the shards' shared secret" }

/* Where the shards are: --ps and --secret-file. */
struct ps_where {
	const char *ps;
	const char *secret_file;
	double reconnect_timeout; /* 0: 10 s */
};

/* d's rows as the shards' model sees them: m holds every weight they use
 * (pulled), view is d renumbered into fm. */
struct ps_rows {
	boar_model *m;
	struct feature_map fm;
	struct boar_dataset view;
};
int ps_rows_pull(const struct ps_where *where, const char *model_path,
		 const boar_model *head, const struct ps_model_info *info,
		 const boar_dataset *d, struct ps_rows *r, boar_error *err);
void ps_rows_free(struct ps_rows *r);

/* predict/eval: loads model_path, a model file or (with where->ps) a
 * model kept in the shards (*sharded set). @return 0, an exit status
 * (a usage error: --ps with a model file, or a sharded model without
 * --ps), after saying why. */
int ps_model_open(const char *cmd, const char *model_path,
		  const struct ps_where *where, boar_model **m,
		  struct ps_model_info *info, int *sharded);

#endif
