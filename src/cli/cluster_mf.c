/* cluster_mf.c - what a cluster worker starts from (cluster_mf.h): its
 * training data and test set, and for ratings the shape of the MF model
 * every worker must agree on.
 *
 * The shards' key layout is made from the model's users and items
 * (src/engine/train_cluster_mf.c), so every worker must build the same
 * shape. A worker that read the whole file knows it; one that read only
 * its part (--read-part) sees only its part's largest ids, so the whole
 * file's bounds are given (--users, --items), as --features gives a
 * linear model's.
 */
#include "cluster_mf.h"
#include "common.h"
#include "data/dataset.h"
#include "base/error.h"

static int mf_shape(boar_dataset *d, int read_part, uint64_t users,
		     uint64_t items, const char *path, boar_error *err)
{
	if (d->task != BOAR_TASK_MF)
		return 0;
	if (read_part && (!users || !items))
		return cli_usage("train",
				 "--read-part on ratings needs --users N and "
				 "--items M (the whole file's ids are below "
				 "them): every worker must build the same "
				 "model");
	if (users && d->dim > users)
		return cli_report(err, boar_fail(err, BOAR_EINVAL,
			"%s: user id %llu, but --users says the ids are "
			"below %llu", path, (unsigned long long)(d->dim - 1),
			(unsigned long long)users));
	if (items && d->n_items > items)
		return cli_report(err, boar_fail(err, BOAR_EINVAL,
			"%s: item id %llu, but --items says the ids are "
			"below %llu", path,
			(unsigned long long)(d->n_items - 1),
			(unsigned long long)items));
	if (users)
		d->dim = users;
	if (items)
		d->n_items = items;
	return 0;
}

int cluster_worker_input(const struct train_args *a,
			 const struct cluster_input *in, boar_dataset **train,
			 struct part_info *part)
{
	boar_error err = { 0 };
	int rc;
	if (a->init_model_path) /* was ignored: the shards start from zero */
		return cli_usage("train", "cluster training does not support a "
					  "warm start (--init-model); train on "
					  "one machine for it");
	if (in->read_part)
		rc = read_part(a->train_path, in->rank, in->n_workers,
			       in->features, &a->load, train, part, &err);
	else
		rc = boar_dataset_load(a->train_path, &a->load, train, &err);
	if (rc)
		return cli_report(&err, rc);
	if ((rc = mf_shape(*train, in->read_part, in->users, in->items,
			   a->train_path, &err))) {
		boar_dataset_free(*train);
		*train = NULL;
	}
	return rc;
}

int cluster_worker_test(struct train_args *a, const boar_dataset *train,
			boar_dataset **test)
{
	boar_error err = { 0 };
	if (!a->test_path)
		return 0;
	boar_load_options lo = a->load;
	lo.task = boar_dataset_task(train);
	int rc = boar_dataset_load(a->test_path, &lo, test, &err);
	if (rc)
		return cli_report(&err, rc);
	a->opt.test = *test;
	return 0;
}

int cluster_binary_metrics(const boar_dataset *train, int loss)
{
	return boar_dataset_task(train) != BOAR_TASK_MF &&
	       boar_loss_describe(loss)->kind != BOAR_LOSS_KIND_REGRESSION;
}
