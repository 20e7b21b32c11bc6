/* serve.c - `boar serve`: run one parameter-server shard.
 *
 * Listens on loopback unless told otherwise; any other address needs
 * --secret-file (peers must pass the challenge-response handshake).
 * SIGTERM and SIGINT arrive through a signalfd read by the shard's
 * io_uring loop, which then checkpoints and returns; the final statistics,
 * the largest staleness served among them, go to stderr (and stdout as
 * JSON with --json).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "args.h"
#include "cluster.h"
#include "commands.h"
#include "common.h"
#include "json.h"
#include "net/auth.h"
#include "net/loop.h"
#include "net/server.h"
#include "net/ssp.h"

enum {
	O_SHARD = 1, O_LISTEN, O_STALENESS, O_SECRET, O_CKPT, O_CKPT_EVERY,
	O_HEARTBEAT, O_DIM, O_THREADS, O_BACKUP, O_REPLICA_OF, O_JSON,
	O_QUIET, O_HELP,
};

static const struct cli_opt serve_opts[] = {
	{ O_SHARD, "shard", 0, "I/S", "serve shard I of S (required)" },
	{ O_LISTEN, "listen", 0, "HOST:PORT",
	  "address to listen on; not loopback: needs --secret-file; a "
	  "port in use is retried for three seconds (a restart after kill -9)" },
	{ O_STALENESS, "staleness", 0, "s|inf",
	  "SSP bound: a pull at clock c waits until every worker reached "
	  "c - s; 0 = bulk-synchronous, inf = asynchronous" },
	{ O_SECRET, "secret-file", 0, "FILE",
	  "shared secret (>= 16 bytes); peers must prove they know it" },
	{ O_CKPT, "checkpoint", 0, "DIR",
	  "checkpoint the shard into DIR and resume from it on start; "
	  "pushes since the checkpoint are logged there too, so a killed "
	  "shard restarted on DIR loses none" },
	{ O_CKPT_EVERY, "checkpoint-every", 0, "SEC",
	  "seconds between checkpoints (also written on SIGTERM)" },
	{ O_HEARTBEAT, "heartbeat-timeout", 0, "SEC",
	  "drop a silent or disconnected worker from the clock after SEC" },
	{ O_DIM, "dim", 0, "N", "model keys (default: from the first worker)" },
	{ O_THREADS, "threads", 0, "N",
	  "threads serving (one io_uring each; connections dealt out in "
	  "turn)" },
	{ O_BACKUP, "backup", 0, "HOST:PORT",
	  "chain replication: forward every worker's pushes and clocks to "
	  "the shard serving --replica-of this one there, and answer a "
	  "worker only once it holds them (start the backup first)" },
	{ O_REPLICA_OF, "replica-of", 0, "HOST:PORT",
	  "be the backup of the primary at HOST:PORT: mirror it, and take "
	  "over its workers when it dies (give them --ps-backup)" },
	{ O_JSON, "json", 0, NULL, "final statistics as JSON on stdout" },
	{ O_QUIET, "quiet", 'q', NULL, "no log lines on stderr" },
	{ O_HELP, "help", 'h', NULL, "this help" },
	{ 0 },
};

static void serve_defaults(struct serve_args *a)
{
	memset(a, 0, sizeof *a);
	a->staleness = 1;
	a->checkpoint_every = 30;
	a->heartbeat_timeout = 10;
}

static void default_of(int id, char *buf, size_t n)
{
	switch (id) {
	case O_LISTEN:
		snprintf(buf, n, "127.0.0.1:(7070 + I)");
		break;
	case O_STALENESS:
		snprintf(buf, n, "1");
		break;
	case O_CKPT_EVERY:
		snprintf(buf, n, "30");
		break;
	case O_HEARTBEAT:
		snprintf(buf, n, "10");
		break;
	case O_THREADS:
		snprintf(buf, n, "online CPUs, at most 8");
		break;
	}
}

void cmd_serve_help(FILE *out)
{
	fputs("usage: boar serve --shard I/S [--listen HOST:PORT] [options]\n"
	      "\n"
	      "Runs shard I of S of the parameter server: the weights of keys\n"
	      "[dim*I/S, dim*(I+1)/S), updated by workers started with\n"
	      "`boar train --ps HOST:PORT,... --worker R/W`. Stops on SIGTERM or\n"
	      "SIGINT (after a checkpoint) or when worker 0 asks it to.\n"
	      "\n",
	      out);
	cli_print_options(out, serve_opts, default_of);
}

int cluster_parse_staleness(const char *s, uint64_t *out)
{
	if (!strcmp(s, "inf") || !strcmp(s, "async")) {
		*out = SSP_INF;
		return 0;
	}
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || s[0] == '-' || v > 1000000000ull)
		return -1;
	*out = v;
	return 0;
}

static void log_line(void *ctx, const char *line)
{
	const struct serve_args *a = ctx;
	if (!a->quiet)
		fprintf(stderr, "boar serve %u/%u: %s\n", a->shard,
			a->n_shards, line);
}

/* The shard's counters when it stops: a line on stderr, and with --json an
 * object on stdout. */
static void say_stats(const struct serve_args *a, struct ps_server *s)
{
	struct wire_stats st;
	ps_server_stats(s, &st);
	fprintf(stderr,
		"boar serve %u/%u: max_staleness_served=%llu pushes=%llu "
		"pulls=%llu keys_pushed=%llu keys_pulled=%llu bytes_in=%llu "
		"bytes_out=%llu dropped_workers=%u\n",
		a->shard, a->n_shards, (unsigned long long)st.max_staleness,
		(unsigned long long)st.pushes, (unsigned long long)st.pulls,
		(unsigned long long)st.keys_pushed,
		(unsigned long long)st.keys_pulled,
		(unsigned long long)st.bytes_in,
		(unsigned long long)st.bytes_out, st.dropped_workers);
	if (a->json) {
		struct json_obj j;
		json_begin(&j, stdout);
		json_int(&j, "shard", a->shard);
		json_int(&j, "shards", a->n_shards);
		json_uint(&j, "max_staleness_served", st.max_staleness);
		json_uint(&j, "pushes", st.pushes);
		json_uint(&j, "pulls", st.pulls);
		json_uint(&j, "keys_pushed", st.keys_pushed);
		json_uint(&j, "keys_pulled", st.keys_pulled);
		json_uint(&j, "bytes_in", st.bytes_in);
		json_uint(&j, "bytes_out", st.bytes_out);
		json_uint(&j, "dropped_workers", st.dropped_workers);
		json_end(&j);
	}
}

/* Online CPUs, at most 8: lanes without connections cost nothing, and
 * connections are dealt out in turn, so W workers keep min(W, N) busy. */
static unsigned serve_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

int serve_run(const struct serve_args *a)
{
	char host[256], ebuf[64];
	unsigned port;
	boar_error err = { 0 };
	uint8_t key[NET_KEY_LEN];
	int lfd = -1, sfd = -1, rc, status = CLI_EXIT_RUNTIME;
	struct ps_server *s = NULL;

	if (net_split_hostport(a->listen, host, sizeof host, &port))
		return cli_usage("serve", "--listen '%s' is not HOST:PORT",
				 a->listen);
	if (!a->secret_file && !net_host_is_loopback(host))
		return cli_usage("serve",
				 "listening on %s (not loopback) needs "
				 "--secret-file",
				 host);
	if (a->secret_file && (rc = net_auth_load(a->secret_file, key, &err)))
		return cli_report(&err, rc);

	/* Signals become readable bytes for the shard's ring. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if ((rc = net_listen(host, port, &lfd, &err))) {
		status = cli_report(&err, rc);
		goto out;
	}
	struct ps_config c = {
		.shard = a->shard,
		.n_shards = a->n_shards,
		.listen_fd = lfd,
		.stop_fd = sfd,
		.dim = a->dim,
		.staleness = a->staleness,
		.heartbeat_timeout = a->heartbeat_timeout,
		.key = a->secret_file ? key : NULL,
		.checkpoint_dir = a->checkpoint_dir,
		.checkpoint_every = a->checkpoint_every,
		.threads = a->threads ? a->threads : serve_default_threads(),
		.backup = a->backup,
		.replica_of = a->replica_of,
		.log = log_line,
		.log_ctx = (void *)a,
	};
	if ((rc = ps_server_create(&c, &s, &err))) {
		status = cli_report(&err, rc);
		goto out;
	}
	if (a->staleness == SSP_INF)
		snprintf(ebuf, sizeof ebuf, "inf");
	else
		snprintf(ebuf, sizeof ebuf, "%llu",
			 (unsigned long long)a->staleness);
	/* With port 0 the kernel picked one: say which (tests rely on it). */
	if (net_bound_port(lfd))
		port = net_bound_port(lfd);
	if (!a->quiet)
		fprintf(stderr,
			"boar serve %u/%u: listening on %s:%u, staleness %s%s, "
			"%u thread%s%s%s\n",
			a->shard, a->n_shards, host, port, ebuf,
			a->secret_file ? ", authenticated" : "", c.threads,
			c.threads == 1 ? "" : "s",
			a->backup ? ", backup at " : a->replica_of ? ", backup of " : "",
			a->backup ? a->backup : a->replica_of ? a->replica_of : "");
	rc = ps_server_run(s, &err);
	say_stats(a, s);
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	status = CLI_EXIT_OK;
out:
	ps_server_free(s);
	if (lfd >= 0)
		close(lfd);
	if (sfd >= 0)
		close(sfd);
	return status;
}

static int parse_slash(const char *s, uint32_t *i, uint32_t *n)
{
	char *end;
	unsigned long a = strtoul(s, &end, 10);
	if (end == s || *end != '/')
		return -1;
	const char *t = end + 1;
	unsigned long b = strtoul(t, &end, 10);
	if (end == t || *end || b == 0 || b > 65536 || a >= b)
		return -1;
	*i = (uint32_t)a;
	*n = (uint32_t)b;
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a;
	struct cli_parser p;
	char listen_buf[64];
	int id, have_shard = 0;
	serve_defaults(&a);
	cli_init(&p, argc, argv);
	while ((id = cli_next(&p, serve_opts)) != CLI_END) {
		switch (id) {
		case CLI_ERROR:
			return cli_usage("serve", "%s", p.why);
		case CLI_POSITIONAL:
			return cli_usage("serve", "unexpected argument '%s'",
					 p.value);
		case O_SHARD:
			if (parse_slash(p.value, &a.shard, &a.n_shards))
				return cli_usage("serve",
						 "--shard wants I/S with I < S, "
						 "got '%s'",
						 p.value);
			have_shard = 1;
			break;
		case O_LISTEN:
			a.listen = p.value;
			break;
		case O_STALENESS:
			if (cluster_parse_staleness(p.value, &a.staleness))
				return cli_usage("serve",
						 "--staleness wants a count or "
						 "inf, got '%s'",
						 p.value);
			break;
		case O_SECRET:
			a.secret_file = p.value;
			break;
		case O_CKPT:
			a.checkpoint_dir = p.value;
			break;
		case O_CKPT_EVERY:
			if (cli_double(&p, 0, 1e9, &a.checkpoint_every))
				return cli_usage("serve", "%s", p.why);
			break;
		case O_HEARTBEAT:
			if (cli_double_gt(&p, 0, 1e9, &a.heartbeat_timeout))
				return cli_usage("serve", "%s", p.why);
			break;
		case O_DIM:
			if (cli_u64(&p, 1, 1ull << 40, &a.dim))
				return cli_usage("serve", "%s", p.why);
			break;
		case O_THREADS: {
			uint64_t t;
			if (cli_u64(&p, 1, PS_MAX_THREADS, &t))
				return cli_usage("serve", "%s", p.why);
			a.threads = (unsigned)t;
			break;
		}
		case O_BACKUP:
			a.backup = p.value;
			break;
		case O_REPLICA_OF:
			a.replica_of = p.value;
			break;
		case O_JSON:
			a.json = 1;
			break;
		case O_QUIET:
			a.quiet = 1;
			break;
		case O_HELP:
			cmd_serve_help(stdout);
			return CLI_EXIT_OK;
		}
	}
	if (!have_shard)
		return cli_usage("serve", "--shard I/S is required");
	if (a.backup && a.replica_of)
		return cli_usage("serve", "--backup and --replica-of: a backup "
					  "has no backup of its own");
	const char *peer = a.backup ? a.backup : a.replica_of;
	char ph[256];
	unsigned pp;
	if (peer && (net_split_hostport(peer, ph, sizeof ph, &pp) || !pp))
		return cli_usage("serve", "--%s '%s' is not HOST:PORT",
				 a.backup ? "backup" : "replica-of", peer);
	if (!a.listen) {
		snprintf(listen_buf, sizeof listen_buf, "127.0.0.1:%u",
			 7070 + a.shard);
		a.listen = listen_buf;
	}
	return serve_run(&a);
}
