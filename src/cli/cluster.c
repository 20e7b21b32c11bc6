/* cluster.c - `boar train` as a cluster worker (or, under a launcher, as
 * whatever role the rank says).
 *
 * The cluster options are taken out of argv here; everything else goes to
 * the ordinary train option parser (train_args.h), so a worker accepts
 * exactly the options a single-node run does. See cluster.h for the roles
 * and the address rule of --cluster.
 */
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "cluster.h"
#include "cluster_mf.h"
#include "cluster_parse.h"
#include "cluster_report.h"
#include "commands.h"
#include "common.h"
#include "flag_words.h"
#include "json.h"
#include "net/auth.h"
#include "net/launcher.h"
#include "net/loop.h"
#include "net/ssp.h"
#include "net/worker.h"
#include "omp_spin.h"
#include "progress.h"
#include "ps_model.h"
#include "same_file.h"
#include "train_args.h"

struct cluster_args {
	const char *ps;          /* --ps list */
	const char *ps_backup;   /* --ps-backup list */
	const char **backups;    /* its entries (n_shards), or NULL */
	char *backup_buf;
	uint32_t rank, n_workers; /* --worker R/W */
	int have_worker;
	int cluster;             /* --cluster */
	uint32_t servers;        /* --servers S */
	uint32_t replicas;       /* --replicas R: 2 = a backup per shard */
	const char *host;        /* --cluster-host */
	unsigned base_port;
	uint64_t staleness;
	int staleness_given;
	uint64_t sync_every;
	const char *secret_file;
	double heartbeat_timeout;
	const char *checkpoint_dir;
	double checkpoint_every;
	int f16;
	int pull_f16;            /* --pull-f16 */
	double threshold;
	unsigned throttle_ms;
	int shutdown_servers;
	double reconnect_timeout;
	int read_part;           /* --read-part */
	int shared_sums;         /* --adagrad-sums shared */
	uint64_t features, users, items; /* --features, --users, --items */
};

struct copt {
	const char *name;
	int has_arg;
	const char *arg, *help, *def;
};

static const struct copt copts[] = {
	{ "ps", 1, "HOST:PORT,...", "shards of the parameter server, in shard "
				   "order: train as a worker", NULL },
	{ "ps-backup", 1, "HOST:PORT,...", "each shard's backup (boar serve "
					   "--replica-of), in shard order, "
					   "empty for none: the worker goes on "
					   "with it when the shard dies",
	  NULL },
	{ "worker", 1, "R/W", "this worker's rank and the number of workers",
	  "0/1" },
	{ "cluster", 0, NULL, "take the role from the launcher's rank "
			      "(mpirun, srun): ranks < --servers serve",
	  NULL },
	{ "servers", 1, "S", "--cluster: how many ranks serve shards", "1" },
	{ "replicas", 1, "R", "--cluster: 2 gives every shard a backup (ranks "
			      "S..2S-1, ports base-port + S + i) that takes "
			      "over when it dies",
	  "1" },
	{ "cluster-host", 1, "HOST", "--cluster: the host every shard listens "
				     "on (rank r: port base-port + r)",
	  "127.0.0.1" },
	{ "base-port", 1, "PORT", "--cluster: port of shard 0", "7070" },
	{ "staleness", 1, "s|inf", "--cluster: the shards' SSP bound (with "
				   "--ps it is the shards' option)",
	  "1" },
	{ "sync-every", 1, "N", "examples per clock: pull, sweep N rows, push, "
				"tick (not MF: it ticks per DSGD stratum)",
	  "1000" },
	{ "secret-file", 1, "FILE", "shared secret for the shard handshake",
	  NULL },
	{ "heartbeat-timeout", 1, "SEC", "--cluster: shards drop a silent "
					 "worker after SEC",
	  "10" },
	{ "checkpoint", 1, "DIR", "--cluster: shards checkpoint into DIR",
	  NULL },
	{ "checkpoint-every", 1, "SEC", "--cluster: seconds between "
					"checkpoints",
	  "30" },
	{ "f16", 0, NULL, "values travel as float16 both ways: pushes, and "
			  "the values pulled a clock ahead (a frame with one "
			  "over 65504 as float32)",
	  NULL },
	{ "pull-f16", 0, NULL, "only the values pulled a clock ahead as "
			       "float16 (--f16's answers; pushes stay "
			       "float32)",
	  NULL },
	{ "push-threshold", 1, "T", "send only deltas above T; the rest "
				    "accumulate until they are",
	  "0" },
	{ "throttle-ms", 1, "MS", "sleep MS after every clock (to simulate a "
				  "straggler)",
	  "0" },
	{ "shutdown-servers", 0, NULL, "--ps: worker 0 stops the shards at "
				       "the end (--cluster always does)",
	  NULL },
	{ "reconnect-timeout", 1, "SEC", "keep reconnecting to a lost shard "
					 "this long",
	  "30" },
	{ "read-part", 0, NULL, "read and parse only this worker's 1/W of "
				"the training file (a line-aligned byte "
				"range); each row is still swept once per "
				"epoch by one worker",
	  NULL },
	{ "adagrad-sums", 1, "local|shared", "AdaGrad's sums of squared "
					     "gradients: each worker's own "
					     "(steps about sqrt(W) times "
					     "longer), or in the shards beside "
					     "the weights (steps as on one "
					     "node, twice the traffic: for "
					     "many workers at a small "
					     "--sync-every)",
	  "local" },
	{ "features", 1, "N", "--read-part on unhashed ids: the ids of the "
			      "whole file are below N (every worker must "
			      "build the same model)",
	  NULL },
	{ "users", 1, "N", "--read-part on ratings: user ids are below N", NULL },
	{ "items", 1, "M", "--read-part on ratings: item ids are below M", NULL },
	{ NULL },
};

/* Finds argv[i] in copts: "--name" or "--name=value". */
static const struct copt *match(const char *a, const char **inline_val)
{
	if (strncmp(a, "--", 2))
		return NULL;
	a += 2;
	for (const struct copt *o = copts; o->name; o++) {
		size_t n = strlen(o->name);
		if (!strncmp(a, o->name, n) && (a[n] == '\0' || a[n] == '=')) {
			*inline_val = a[n] == '=' ? a + n + 1 : NULL;
			return o;
		}
	}
	return NULL;
}

/* The first cluster option of argv (before "--") that is a role (--ps,
 * --worker, --cluster) where role is 1, any other where it is 0; NULL:
 * none. */
static const char *first_copt(int argc, char **argv, int role)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		const struct copt *o;
		if (!strcmp(argv[i], "--"))
			break;
		if (!(o = match(argv[i], &v)))
			continue;
		int is_role = !strcmp(o->name, "ps") ||
			      !strcmp(o->name, "worker") ||
			      !strcmp(o->name, "cluster");
		if (is_role == role)
			return o->name;
	}
	return NULL;
}

/* Whether argv asks `boar train` for a cluster role (--ps, --worker,
 * --cluster). */
static int cluster_train_wanted(int argc, char **argv)
{
	return first_copt(argc, argv, 1) != NULL;
}

int cluster_route(int argc, char **argv)
{
	if (cluster_train_wanted(argc, argv))
		return cluster_train(argc, argv);
	const char *lone = first_copt(argc, argv, 0);
	if (lone)
		return cli_usage("train",
				 "--%s is a cluster option: it goes with --ps "
				 "HOST:PORT,... --worker R/W, or --cluster",
				 lone);
	return -1;
}

void cluster_train_help(FILE *out)
{
	fputs("\ncluster options (boar train --ps ... --worker R/W, or --cluster\n"
	      "under mpirun/srun):\n",
	      out);
	for (const struct copt *o = copts; o->name; o++) {
		char left[64], text[400];
		snprintf(left, sizeof left, "--%s%s%s", o->name,
			 o->has_arg ? " " : "", o->has_arg ? o->arg : "");
		snprintf(text, sizeof text, "%s%s%s%s", o->help,
			 o->def ? " (default: " : "", o->def ? o->def : "",
			 o->def ? ")" : "");
		fprintf(out, "  %-28s", left);
		/* words wrapped at 79 columns, continued under the text */
		int col = 30;
		for (char *save = NULL, *w = strtok_r(text, " ", &save); w;
		     w = strtok_r(NULL, " ", &save)) {
			int n = (int)strlen(w);
			if (col + 1 + n > 79) {
				fprintf(out, "\n%31s", "");
				col = 31;
			} else {
				fputc(' ', out);
				col++;
			}
			fputs(w, out);
			col += n;
		}
		fputc('\n', out);
	}
	fputs("\n  --cluster: ranks come from OMPI_COMM_WORLD_RANK/SIZE, "
	      "PMI_RANK/SIZE,\n  PMIX_RANK/SIZE or SLURM_PROCID/NTASKS. Rank "
	      "r < S serves shard r on\n  --cluster-host at port base-port + "
	      "r; rank r >= S is worker r - S of P - S.\n  Worker 0 gathers "
	      "the model (-m FILE) and stops the shards.\n",
	      out);
}

/* One cluster option `name` with its value v (NULL for a flag) into *c.
 * @return 0 or an exit status. */
static int apply_copt(const char *name, const char *v, struct cluster_args *c)
{
	unsigned long long u;
	double d;
	if (!strcmp(name, "ps")) {
		c->ps = v;
	} else if (!strcmp(name, "ps-backup")) {
		c->ps_backup = v;
	} else if (!strcmp(name, "worker")) {
		char *end;
		unsigned long r = strtoul(v, &end, 10), w;
		if (end == v || *end != '/' ||
		    parse_u(end + 1, 65536, &u) || !(w = u) || r >= w)
			return cli_usage("train",
					 "--worker wants R/W with R < "
					 "W, got '%s'",
					 v);
		c->rank = (uint32_t)r;
		c->n_workers = (uint32_t)w;
		c->have_worker = 1;
	} else if (!strcmp(name, "cluster")) {
		c->cluster = 1;
	} else if (!strcmp(name, "servers")) {
		if (parse_u(v, 4096, &u) || !u)
			return cli_usage("train", "--servers wants a "
						  "count >= 1");
		c->servers = (uint32_t)u;
	} else if (!strcmp(name, "replicas")) {
		if (parse_u(v, 2, &u) || !u)
			return cli_usage("train", "--replicas wants 1 or 2 "
						  "(a shard and its backup)");
		c->replicas = (uint32_t)u;
	} else if (!strcmp(name, "cluster-host")) {
		c->host = v;
	} else if (!strcmp(name, "base-port")) {
		if (parse_u(v, 65535, &u) || !u)
			return cli_usage("train", "bad --base-port");
		c->base_port = (unsigned)u;
	} else if (!strcmp(name, "staleness")) {
		if (cluster_parse_staleness(v, &c->staleness))
			return cli_usage("train", "--staleness wants a "
						  "count or inf");
		c->staleness_given = 1;
	} else if (!strcmp(name, "sync-every")) {
		if (parse_u(v, 1ull << 40, &u) || !u)
			return cli_usage("train", "--sync-every wants "
						  "N >= 1");
		c->sync_every = u;
	} else if (!strcmp(name, "secret-file")) {
		c->secret_file = v;
	} else if (!strcmp(name, "heartbeat-timeout")) {
		if (parse_d(v, &d) || d <= 0)
			return cli_usage("train", "bad "
						  "--heartbeat-timeout");
		c->heartbeat_timeout = d;
	} else if (!strcmp(name, "checkpoint")) {
		c->checkpoint_dir = v;
	} else if (!strcmp(name, "checkpoint-every")) {
		if (parse_d(v, &d))
			return cli_usage("train", "bad "
						  "--checkpoint-every");
		c->checkpoint_every = d;
	} else if (!strcmp(name, "f16")) {
		c->f16 = 1;
	} else if (!strcmp(name, "pull-f16")) {
		c->pull_f16 = 1;
	} else if (!strcmp(name, "push-threshold")) {
		if (parse_d(v, &d))
			return cli_usage("train", "bad "
						  "--push-threshold");
		c->threshold = d;
	} else if (!strcmp(name, "throttle-ms")) {
		if (parse_u(v, 600000, &u))
			return cli_usage("train", "bad --throttle-ms");
		c->throttle_ms = (unsigned)u;
	} else if (!strcmp(name, "shutdown-servers")) {
		c->shutdown_servers = 1;
	} else if (!strcmp(name, "read-part")) {
		c->read_part = 1;
	} else if (!strcmp(name, "adagrad-sums")) {
		if (strcmp(v, "shared") && strcmp(v, "local"))
			return cli_usage("train", "--adagrad-sums wants "
						  "shared or local");
		c->shared_sums = !strcmp(v, "shared");
	} else if (!strcmp(name, "features") || !strcmp(name, "users") ||
		   !strcmp(name, "items")) { /* ids below N */
		if (parse_u(v, 1ull << 32, &u) || !u)
			return cli_usage("train", "--%s wants N >= 1", name);
		*(name[0] == 'f' ? &c->features
				 : name[0] == 'u' ? &c->users : &c->items) = u;
	} else if (!strcmp(name, "reconnect-timeout")) {
		if (parse_d(v, &d) || d <= 0)
			return cli_usage("train", "bad "
						  "--reconnect-timeout");
		c->reconnect_timeout = d;
	}
	return 0;
}

/* Takes the cluster options out of argv into *c; the rest stays in
 * rest[0..*n_rest). @return 0 or an exit status. */
static int split_args(int argc, char **argv, struct cluster_args *c,
		      char **rest, int *n_rest)
{
	int n = 0;
	rest[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		const struct copt *o = match(argv[i], &v);
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				rest[n++] = argv[i++];
			break;
		}
		if (!o) {
			rest[n++] = argv[i];
			continue;
		}
		if (o->has_arg && !v) {
			if (i + 1 >= argc)
				return cli_usage("train", "--%s needs %s",
						 o->name, o->arg);
			v = argv[++i];
		} else if (!o->has_arg && v) {
			return cli_usage("train", "--%s takes no value",
					 o->name);
		}
		int rc = apply_copt(o->name, v, c);
		if (rc)
			return rc;
	}
	rest[n] = NULL;
	*n_rest = n;
	return 0;
}

/* Whether "host:port" names this host's loopback (127.0.0.0/8, ::1,
 * localhost). */
static int loopback(const char *addr)
{
	return !strncmp(addr, "127.", 4) || !strncmp(addr, "[::1]:", 6) ||
	       !strncmp(addr, "localhost:", 10);
}

/* Threads for parsing this worker's part: all the cores, unless every
 * shard is on loopback, so that all the workers (each connects to every
 * shard) share this host: then its share of the cores (at least its
 * --threads). 4 workers of 16 threads each parsing on one 16-core host
 * took 0.25-0.34 s for their quarters where 2 took 0.17-0.21 s for
 * halves; with the share, 0.14-0.22 s (bench/RESULTS-net.md). */
static int part_threads(const struct cluster_args *c, const char *const *addrs,
			uint32_t n_shards, int threads)
{
	for (uint32_t i = 0; i < n_shards; i++)
		if (!loopback(addrs[i]))
			return 0;
	int share = omp_get_num_procs() / (int)c->n_workers;
	return share > threads ? (share > 0 ? share : 1) : threads;
}

static int run_worker(const struct cluster_args *c, struct train_args *a,
		      const char *const *addrs, uint32_t n_shards, int cluster)
{
	boar_error err = { 0 };
	boar_dataset *train = NULL, *test = NULL;
	boar_model *model = NULL;
	uint8_t key[NET_KEY_LEN];
	int rc, status = CLI_EXIT_RUNTIME;

	if ((rc = cli_refuse_model_over_inputs(a, &err)))
		return cli_report(&err, rc);
	cli_omp_spin_default();
	if (c->secret_file && (rc = net_auth_load(c->secret_file, key, &err)))
		return cli_report(&err, rc);
	struct part_info part = { 0 };
	/* A worker parses on all cores (--read-part too), whatever its
	 * --threads: its shards (and any other worker of the host) wait for
	 * the data too, so the cores they train on later are free now (2x2
	 * shards + 2x6 workers on one host: parsing was most of the time);
	 * workers sharing a host share its cores for their parts, and the
	 * test set (rank 0's alone, after the others are done) takes all */
	a->load.threads = part_threads(c, addrs, n_shards, a->opt.threads);
	struct cluster_input in = { c->read_part, c->rank, c->n_workers,
				    c->features, c->users, c->items };
	double t_load = cli_now();
	if ((rc = cluster_worker_input(a, &in, &train, &part)))
		return rc;
	a->load.threads = 0;
	if ((rc = cluster_worker_test(a, train, &test))) {
		status = rc;
		goto out;
	}
	boar_error bad;
	char words[sizeof bad.message];
	if (boar_options_check(&a->opt, train, &bad)) {
		status = cli_usage("train", "%s", cli_flag_words(bad.message, words, sizeof words));
		goto out;
	}
	struct wrun r = { .a = a, .rank = c->rank, .n_workers = c->n_workers,
			  .read_part = c->read_part,
			  .load_s = cli_now() - t_load };
	r.binary = cluster_binary_metrics(train, a->opt.loss);
	progress_init(&r.pr, a->quiet || c->rank != 0);
	a->opt.progress = cluster_on_epoch;
	a->opt.progress_ctx = &r;

	struct ps_worker_config wc = {
		.net = {
			.addrs = addrs,
			.backups = c->backups,
			.n_shards = n_shards,
			.rank = c->rank,
			.n_workers = c->n_workers,
			.key = c->secret_file ? key : NULL,
			.reconnect_timeout = c->reconnect_timeout,
			.f16 = c->f16,
			.pull_f16 = c->pull_f16 || c->f16,
			.threshold = (float)c->threshold,
		},
		.sync_every = c->sync_every,
		.throttle_ms = c->throttle_ms,
		.gather = c->rank == 0,
		.shutdown = c->rank == 0 && (cluster || c->shutdown_servers),
		.eval_every_epoch = c->rank == 0 && test != NULL,
		.local_rows = c->read_part,
		.shared_sums = c->shared_sums,
	};
	struct ps_worker_report rep;
	double t_train = cli_now();
	rc = boar_ps_train(train, &a->opt, &wc, &model, &rep, &err);
	r.setup_s = cli_now() - t_train - rep.seconds - rep.gather_s;
	progress_done(&r.pr);
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	struct ps_model_info info = { /* hashing: the head's */
		.n_workers = c->n_workers,
		.n_shards = n_shards,
		.dim = boar_dataset_features(train),
		.keys = rep.keys,
	};
	if (c->rank == 0 && a->model_out &&
	    (rc = rep.model_sharded
			  ? ps_model_write(a->model_out, model, &info, &err)
			  : boar_model_save(model, a->model_out, &err))) {
		status = cli_report(&err, rc);
		goto out;
	}
	cluster_say_worker(&r, a, n_shards, &rep, &part, train, test, model);
	status = CLI_EXIT_OK;
out:
	boar_model_free(model);
	boar_dataset_free(test);
	boar_dataset_free(train);
	return status;
}

/* "HOST:PORT" into b[300], a v6 host in brackets. */
static void host_port(char *b, const char *host, unsigned port)
{
	int v6 = strchr(host, ':') != NULL;
	snprintf(b, 300, "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "",
		 port);
}

/* --cluster: this process's role, from the launcher's rank. A server
 * runs its shard here (*served = 1; the exit status is returned); a
 * worker gets its rank and the shards' addresses. @return 0 or an exit
 * status. */
static int cluster_roles(struct cluster_args *c, int quiet,
			 const char ***addrs, char **addr_buf,
			 uint32_t *n_shards, int *served)
{
	uint32_t rank, size, S = c->servers, serving = S * c->replicas;
	if (c->ps || c->have_worker || c->ps_backup)
		return cli_usage("train", "--cluster takes the roles "
					    "from the launcher: drop "
					    "--ps, --ps-backup and --worker");
	if (net_launcher_rank(getenv, &rank, &size, NULL))
		return cli_usage(
			"train",
			"--cluster: no rank found in "
			"OMPI_COMM_WORLD_RANK, PMI_RANK or "
			"SLURM_PROCID (start it with mpirun or srun)");
	if (size <= serving)
		return cli_usage("train",
				   "--cluster with %u processes, --servers %u "
				   "and --replicas %u leaves no worker",
				   size, S, c->replicas);
	if (c->base_port + serving > 65536)
		return cli_usage("train", "ports beyond 65535");
	if (rank < serving) {
		/* ranks S..2S-1 are the backups of shards 0..S-1 */
		char listen[300], peer[300];
		int is_backup = rank >= S;
		host_port(listen, c->host, c->base_port + rank);
		host_port(peer, c->host,
			  c->base_port + (is_backup ? rank - S : rank + S));
		struct serve_args s = {
			.shard = rank % S,
			.n_shards = S,
			.listen = listen,
			.staleness = c->staleness,
			.secret_file = c->secret_file,
			/* one directory would hold both copies' files */
			.checkpoint_dir = is_backup ? NULL : c->checkpoint_dir,
			.checkpoint_every = c->checkpoint_every,
			.heartbeat_timeout = c->heartbeat_timeout,
			.backup = c->replicas > 1 && !is_backup ? peer : NULL,
			.replica_of = is_backup ? peer : NULL,
			.json = 0,
			.quiet = quiet,
		};
		*served = 1;
		return serve_run(&s);
	}
	c->rank = rank - serving;
	c->n_workers = size - serving;
	*n_shards = S;
	*addrs = calloc(S, sizeof **addrs);
	*addr_buf = malloc((size_t)S * 300);
	if (c->replicas > 1) {
		c->backups = calloc(S, sizeof *c->backups);
		c->backup_buf = malloc((size_t)S * 300);
	}
	if (!*addrs || !*addr_buf ||
	    (c->replicas > 1 && (!c->backups || !c->backup_buf)))
		return CLI_EXIT_RUNTIME;
	for (uint32_t i = 0; i < S; i++) {
		char *b = *addr_buf + (size_t)i * 300;
		host_port(b, c->host, c->base_port + i);
		(*addrs)[i] = b;
		if (c->replicas > 1) {
			b = c->backup_buf + (size_t)i * 300;
			host_port(b, c->host, c->base_port + S + i);
			c->backups[i] = b;
		}
	}
	return 0;
}

/* --ps A,B,...: the shards' addresses. @return 0 or an exit status. */
static int ps_addresses(const struct cluster_args *c, int quiet,
			const char ***addrs, char **addr_buf,
			uint32_t *n_shards)
{
	if (!c->ps)
		return cli_usage("train", "--worker needs --ps "
					    "HOST:PORT,... (or use "
					    "--cluster)");
	if (c->staleness_given && !quiet)
		fprintf(stderr, "boar: note: with --ps the shards "
				"enforce their own --staleness (boar "
				"serve --staleness); ignored here\n");
	*addr_buf = strdup(c->ps);
	*n_shards = 1;
	for (const char *p = c->ps; *p; p++)
		*n_shards += *p == ',';
	*addrs = calloc(*n_shards, sizeof **addrs);
	if (!*addr_buf || !*addrs)
		return CLI_EXIT_RUNTIME;
	uint32_t i = 0;
	for (char *save = NULL, *t = strtok_r(*addr_buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save))
		(*addrs)[i++] = t;
	if (i != *n_shards)
		return cli_usage("train", "--ps: empty address in "
					    "'%s'",
				   c->ps);
	return 0;
}

/* --ps-backup A,,C: one backup address per shard, empty for none.
 * @return 0 or an exit status. */
static int ps_backups(struct cluster_args *c, uint32_t n_shards)
{
	if (!c->ps_backup)
		return 0;
	c->backup_buf = strdup(c->ps_backup);
	c->backups = calloc(n_shards, sizeof *c->backups);
	if (!c->backup_buf || !c->backups)
		return CLI_EXIT_RUNTIME;
	uint32_t n = 0;
	for (char *t, *rest = c->backup_buf; (t = strsep(&rest, ",")); n++)
		if (n < n_shards)
			c->backups[n] = t;
	if (n != n_shards)
		return cli_usage("train", "--ps-backup names %u addresses for "
					  "%u shards (leave one empty for a "
					  "shard without a backup)",
				 n, n_shards);
	return 0;
}

int cluster_train(int argc, char **argv)
{
	struct cluster_args c = {
		.host = "127.0.0.1",
		.base_port = 7070,
		.servers = 1,
		.replicas = 1,
		.staleness = 1,
		.sync_every = 1000,
		.heartbeat_timeout = 10,
		.checkpoint_every = 30,
		.reconnect_timeout = 30,
		.n_workers = 1,
	};
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	char why[512];
	char *addr_buf = NULL;
	const char **addrs = NULL;
	int n_rest = 0, status;
	struct train_args a;

	if (!rest)
		return CLI_EXIT_RUNTIME;
	if ((status = split_args(argc, argv, &c, rest, &n_rest)))
		goto out;
	switch (train_args_parse(&a, n_rest, rest, why, sizeof why)) {
	case TRAIN_ARGS_HELP:
		train_args_help(stdout);
		cluster_train_help(stdout);
		status = CLI_EXIT_OK;
		goto out;
	case TRAIN_ARGS_ERROR:
		status = cli_usage("train", "%s", why);
		goto out;
	}

	uint32_t n_shards = 0;
	int served = 0;
	status = c.cluster ? cluster_roles(&c, a.quiet, &addrs, &addr_buf,
					   &n_shards, &served)
			   : ps_addresses(&c, a.quiet, &addrs, &addr_buf,
					  &n_shards);
	if (status || served ||
	    (!c.cluster && (status = ps_backups(&c, n_shards))))
		goto out;
	status = run_worker(&c, &a, addrs, n_shards, c.cluster);
out:
	free(c.backups);
	free(c.backup_buf);
	free(addrs);
	free(addr_buf);
	free(rest);
	return status;
}
