/* launcher.h - this process's rank under a cluster launcher
 * (library-internal).
 *
 * mpirun (Open MPI), MPICH/Hydra and PMIx launchers, and Slurm's srun all
 * tell each process its rank and the job size through environment
 * variables; boar reads them rather than linking MPI, so the same binary
 * runs under any of them (and by hand). The library reads no environment
 * itself: the caller passes its lookup (the CLI passes getenv).
 */
#ifndef BOAR_NET_LAUNCHER_H
#define BOAR_NET_LAUNCHER_H

#include <stdint.h>

/* The value of a launcher variable, or NULL (getenv, or a test's table). */
typedef char *(*net_lookup_fn)(const char *name);

/* Looks up OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, PMIX_RANK/SIZE and
 * SLURM_PROCID/NTASKS, in that order; the first complete, valid pair wins.
 * @return 0 with *rank < *size and *source naming the variable, or -1 if
 *         no launcher variables are set. */
int net_launcher_rank(net_lookup_fn lookup, uint32_t *rank, uint32_t *size,
		      const char **source);

#endif
