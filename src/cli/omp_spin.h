/* omp_spin.h - a cluster worker's OpenMP spin count (omp_spin.c). */
#ifndef BOAR_CLI_OMP_SPIN_H
#define BOAR_CLI_OMP_SPIN_H

/* For a cluster worker (`boar train` with --ps, --worker or --cluster)
 * whose environment sets neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT: sets
 * a short spin count and execs the program again, so that libgomp reads
 * it; otherwise returns. Call first thing in main. */
void cli_omp_spin_default(int argc, char **argv);
/* GOMP_SPINCOUNT as libgomp read it (the user's, or the cluster worker's
 * default), or NULL. */
const char *cli_omp_spin(void);

#endif
