/* omp_spin.h - a cluster worker's OpenMP spin count (omp_spin.c). */
#ifndef BOAR_CLI_OMP_SPIN_H
#define BOAR_CLI_OMP_SPIN_H

/* For a cluster worker, before it reads its data: where the environment
 * sets neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT, sets a short spin
 * count and execs the program again (cli_argv), so that libgomp reads
 * it; otherwise returns. */
void cli_omp_spin_default(void);
/* GOMP_SPINCOUNT as libgomp read it (the user's, or the cluster worker's
 * default), or NULL. */
const char *cli_omp_spin(void);

#endif
