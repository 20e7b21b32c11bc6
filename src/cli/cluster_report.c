/* cluster_report.c - what a cluster worker says: each epoch's line (and
 * JSON object) from the progress callback, and at the end its counters,
 * phases and shards' stats on stderr and rank 0's JSON summary (with the
 * gathered model's test metrics) on stdout (cluster.c runs the worker).
 */
#include <math.h>
#include <stdio.h>

#include "cluster_report.h"
#include "common.h"
#include "json.h"
#include "omp_spin.h"

int cluster_on_epoch(const boar_epoch_stats *s, void *ctx)
{
	struct wrun *r = ctx;
	r->last_epoch = s->epoch;
	r->last = *s;
	if (r->a->json && r->rank == 0) {
		struct json_obj j;
		json_begin(&j, stdout);
		json_int(&j, "epoch", s->epoch);
		json_int(&j, "worker", r->rank);
		json_num(&j, "seconds", s->seconds);
		json_num(&j, "updates_per_sec", s->updates_per_sec);
		json_num(&j, "train_loss", s->train_loss);
		if (s->has_test) {
			json_num(&j, "test_loss", s->test_loss);
			json_num(&j, "test_accuracy", s->test_accuracy);
			json_num(&j, "test_auc", s->test_auc);
			json_num(&j, "test_rmse", s->test_rmse);
		}
		json_end(&j);
	}
	if (r->rank == 0)
		progress_epoch(&r->pr, s, r->a->opt.epochs, r->binary);
	return 0;
}

static void say_sharded(const struct train_args *a, const boar_dataset *train,
			uint32_t n_shards)
{
	fprintf(stderr,
		"the model (%llu features) is too large to gather: it stays "
		"in the %u shards, which keep running; predict with boar "
		"predict --ps ADDRESSES%s%s\n",
		(unsigned long long)boar_dataset_features(train), n_shards,
		a->model_out ? " -m " : "", a->model_out ? a->model_out : "");
}

/* A worker's seconds per phase, and what each shard reported (stderr). */
static void say_phases_and_shards(const struct wrun *c,
				  const struct ps_worker_report *rep)
{
	const double *ph = rep->phase;
	fprintf(stderr,
		"worker %u/%u: seconds in keys %.3f, pull %.3f, local %.3f, "
		"sweep %.3f, push %.3f, clock %.3f, refresh %.3f\n",
		c->rank, c->n_workers, ph[BOAR_PS_KEYS], ph[BOAR_PS_PULL],
		ph[BOAR_PS_LOCAL], ph[BOAR_PS_SWEEP], ph[BOAR_PS_PUSH],
		ph[BOAR_PS_CLOCK], ph[BOAR_PS_REFRESH]);
	for (uint32_t i = 0; i < rep->n_shards; i++)
		fprintf(stderr,
			"shard %u: max_staleness_served=%llu pushes=%llu "
			"pulls=%llu dropped_workers=%u\n",
			i, (unsigned long long)rep->shard[i].max_staleness,
			(unsigned long long)rep->shard[i].pushes,
			(unsigned long long)rep->shard[i].pulls,
			rep->shard[i].dropped_workers);
}

/* The client's counters in a worker's --json object. */
static void json_net(struct json_obj *j, const struct ps_client_counters *n,
		     double bytes_per_update)
{
	json_uint(j, "bytes_sent", n->bytes_sent);
	json_uint(j, "keys_pushed", n->keys_pushed);
	json_uint(j, "push_bytes", n->push_bytes);
	json_uint(j, "keys_offered", n->keys_offered);
	json_uint(j, "keys_keyless", n->keys_keyless);
	json_uint(j, "keys_added", n->keys_added);
	json_uint(j, "keys_pulled", n->keys_pulled);
	json_uint(j, "keys_pulled_bits", n->keys_pulled_bits);
	json_uint(j, "keys_pulled_f16", n->keys_pulled_f16);
	json_uint(j, "keys_bits_given", n->keys_bits_given);
	json_uint(j, "keys_pushed_bits", n->keys_pushed_bits);
	json_num(j, "push_bytes_per_update", bytes_per_update);
	json_uint(j, "failovers", n->failovers);
	json_num(j, "failover_s", n->failover_s);
}

/* The gathered model's test metrics into m: the last epoch's, where
 * boar_ps_train evaluated that model for it (not a quantile model's, whose
 * summary shows the share of labels below, which an epoch does not
 * carry), else evaluated now on all the cores (the other workers are
 * done: the gather waited for them). @return 1, or 0 where the
 * evaluation failed. */
static int final_metrics(const struct wrun *c,
			 const struct ps_worker_report *rep,
			 const boar_dataset *test, const boar_model *model,
			 boar_metrics *m)
{
	const boar_epoch_stats *s = &c->last;
	if (!rep->final_evaluated || !s->has_test ||
	    boar_model_loss(model) == BOAR_LOSS_QUANTILE)
		return !boar_evaluate(model, test, m, 0, NULL);
	*m = (boar_metrics){
		.rows = boar_dataset_rows(test),
		.loss = s->test_loss,
		.accuracy = s->test_accuracy,
		.auc = s->test_auc,
		.rmse = s->test_rmse,
		.binary = c->binary && !boar_model_classes(model, NULL),
		.mae = s->test_mae,
		.below = NAN,
	};
	return 1;
}

/* What a worker did, when it is done: lines on stderr (unless --quiet),
 * and rank 0's object on stdout with --json. */
void cluster_say_worker(const struct wrun *c, const struct train_args *a,
			uint32_t n_shards, const struct ps_worker_report *rep,
			const struct part_info *part,
			const boar_dataset *train, const boar_dataset *test,
			const boar_model *model)
{
	uint64_t max_st = 0;
	for (uint32_t i = 0; i < rep->n_shards; i++)
		if (rep->shard[i].max_staleness > max_st)
			max_st = rep->shard[i].max_staleness;
	boar_metrics m = { 0 };
	/* kept in the shards: the last epoch's metrics (the head has none) */
	int have_m = c->rank == 0 && test && !rep->model_sharded &&
		     final_metrics(c, rep, test, model, &m);
	int have_last = c->rank == 0 && rep->model_sharded && c->last.has_test;
	/* Bytes per update: push traffic over the key updates the worker
	 * computed (the filter makes the two key counts differ). */
	double bpk = rep->net.keys_offered
			     ? (double)rep->net.push_bytes / rep->net.keys_offered
			     : 0;
	uint64_t parsed = boar_dataset_rows(train);
	if (!a->quiet) {
		if (c->read_part)
			fprintf(stderr,
				"worker %u/%u: parsed %llu rows, bytes "
				"%llu-%llu of %llu\n",
				c->rank, c->n_workers,
				(unsigned long long)parsed,
				(unsigned long long)part->lo,
				(unsigned long long)part->hi,
				(unsigned long long)part->file_bytes);
		fprintf(stderr,
			"worker %u/%u: %llu clocks, %llu rows in %.2f s; sent "
			"%llu bytes (%llu of %llu keys pushed, %.2f bytes per "
			"update), "
			"received %llu bytes, %llu reconnects (%llu pushes "
			"resent, %llu failovers, longest %.3f s), largest "
			"staleness seen %llu\n",
			c->rank, c->n_workers, (unsigned long long)rep->clocks,
			(unsigned long long)rep->rows, rep->seconds,
			(unsigned long long)rep->net.bytes_sent,
			(unsigned long long)rep->net.keys_pushed,
			(unsigned long long)rep->net.keys_offered, bpk,
			(unsigned long long)rep->net.bytes_recv,
			(unsigned long long)rep->net.reconnects,
			(unsigned long long)rep->net.resent,
			(unsigned long long)rep->net.failovers,
			rep->net.failover_s,
			(unsigned long long)rep->net.max_staleness);
		say_phases_and_shards(c, rep);
		if (have_m)
			progress_summary(stderr, a->test_path, model, &m);
		if (c->rank == 0 && rep->model_sharded)
			say_sharded(a, train, n_shards);
		if (c->rank == 0 && a->model_out)
			fprintf(stderr, "model saved to %s\n", a->model_out);
	}
	if (a->json && c->rank == 0) {
		struct json_obj j;
		json_begin(&j, stdout);
		json_int(&j, "worker", c->rank);
		json_int(&j, "workers", c->n_workers);
		json_int(&j, "shards", n_shards);
		json_uint(&j, "clocks", rep->clocks);
		json_uint(&j, "pulls_ahead", rep->pulls_ahead);
		json_uint(&j, "pulls_early", rep->pulls_early);
		json_uint(&j, "rows_parsed", parsed);
		json_num(&j, "seconds", rep->seconds);
		json_num(&j, "load_s", c->load_s);
		json_num(&j, "gather_s", rep->gather_s);
		json_num(&j, "setup_s", c->setup_s);
		json_num(&j, "process_s", cli_now() - cli_started);
		if (cli_omp_spin())
			json_str(&j, "gomp_spincount", cli_omp_spin());
		else
			json_null(&j, "gomp_spincount");
		json_net(&j, &rep->net, bpk);
		json_uint(&j, "max_staleness_served", max_st);
		static const char *const phase_name[BOAR_PS_PHASES] = {
			"keys_s", "pull_s", "local_s", "sweep_s", "push_s",
			"clock_s", "refresh_s"
		};
		for (int p = 0; p < BOAR_PS_PHASES; p++)
			json_num(&j, phase_name[p], rep->phase[p]);
		json_int(&j, "model_sharded", rep->model_sharded);
		if (have_m) {
			json_num(&j, "test_loss", m.loss);
			json_num(&j, "test_accuracy", m.accuracy);
			json_num(&j, "test_auc", m.auc);
			json_num(&j, "test_rmse", m.rmse);
		} else if (have_last) {
			json_num(&j, "test_loss", c->last.test_loss);
			json_num(&j, "test_accuracy", c->last.test_accuracy);
			json_num(&j, "test_auc", c->last.test_auc);
		}
		json_end(&j);
	}
}

