/* cluster.h - the command-line glue of the parameter-server cluster.
 *
 *   boar serve --shard I/S [--listen HOST:PORT] ...        one shard
 *   boar train --ps HOST:PORT,... --worker R/W [...] FILE  one worker
 *   mpirun -np P boar train --cluster --servers S [...] FILE
 *
 * In --cluster mode the rank and size come from the launcher's variables
 * (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS); ranks
 * 0..S-1 serve shard r on --cluster-host at port --base-port + r, the
 * others are workers 0..P-S-1. Worker 0 gathers the model (-m FILE) and
 * stops the shards.
 */
#ifndef BOAR_CLI_CLUSTER_H
#define BOAR_CLI_CLUSTER_H

#include <stdint.h>
#include <stdio.h>

struct serve_args {
	uint32_t shard, n_shards;
	const char *listen;        /* HOST:PORT */
	uint64_t staleness;        /* SSP_INF: async */
	const char *secret_file;
	const char *checkpoint_dir;
	double checkpoint_every;
	double heartbeat_timeout;
	uint64_t dim;
	unsigned threads;          /* 0: online CPUs, at most 8 */
	const char *backup;        /* --backup HOST:PORT, or NULL */
	const char *replica_of;    /* --replica-of HOST:PORT, or NULL */
	int json;
	int quiet;
};

/* Runs one shard until SIGTERM/SIGINT or a worker's SHUTDOWN.
 * @return the process exit status. */
int serve_run(const struct serve_args *a);

/* Parses "inf"/"async" or a count. @return 0, or -1. */
int cluster_parse_staleness(const char *s, uint64_t *out);

/* `boar train` as a cluster role (cluster_train), or refused where a
 * cluster option (--f16, --staleness ...) comes without one: the exit
 * status; -1: neither, a single-node run. */
int cluster_route(int argc, char **argv);
int cluster_train(int argc, char **argv);
void cluster_train_help(FILE *out);

#endif
