/* launcher.h - this process's rank under a cluster launcher
 * (library-internal).
 *
 * mpirun (Open MPI), MPICH/Hydra and PMIx launchers, and Slurm's srun all
 * tell each process its rank and the job size through environment
 * variables; boar reads them rather than linking MPI, so the same binary
 * runs under any of them (and by hand).
 */
#ifndef BOAR_NET_LAUNCHER_H
#define BOAR_NET_LAUNCHER_H

#include <stdint.h>

/* Looks at OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, PMIX_RANK/SIZE and
 * SLURM_PROCID/NTASKS, in that order; the first complete, valid pair wins.
 * @return 0 with *rank < *size and *source naming the variable, or -1 if
 *         no launcher variables are set. */
int net_launcher_rank(uint32_t *rank, uint32_t *size, const char **source);

#endif
