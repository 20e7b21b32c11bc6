/* test_net_launcher.c - rank discovery reads the launcher's variables
 * through the caller's lookup, never the environment itself: Open MPI's
 * pair wins over PMI, PMIx and Slurm; a garbled or incomplete pair is
 * skipped, not guessed at; nothing set is -1.
 */
#include <string.h>

#include "net/launcher.h"
#include "testutil.h"

static const char *const *table; /* NAME, VALUE, ..., NULL */

static char *lookup(const char *name)
{
	for (int i = 0; table[i]; i += 2)
		if (!strcmp(table[i], name))
			return (char *)table[i + 1];
	return NULL;
}

static int rank_of(const char *const *t, uint32_t *rank, uint32_t *size,
		   const char **src)
{
	table = t;
	return net_launcher_rank(lookup, rank, size, src);
}

int main(void)
{
	uint32_t r = 99, s = 99;
	const char *src = NULL;
	static const char *const none[] = { "HOME", "/root", NULL };
	CHECK_EQ_INT(rank_of(none, &r, &s, &src), -1);

	static const char *const ompi[] = {
		"SLURM_PROCID", "5", "SLURM_NTASKS", "8",
		"OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4", NULL,
	};
	CHECK_EQ_INT(rank_of(ompi, &r, &s, &src), 0);
	CHECK_EQ_INT(r, 2);
	CHECK_EQ_INT(s, 4);
	CHECK(src && !strcmp(src, "OMPI_COMM_WORLD_RANK"), "source %s", src);

	/* Open MPI's pair garbled (and PMI's incomplete): Slurm's is used. */
	static const char *const garbled[] = {
		"OMPI_COMM_WORLD_RANK", "2x", "OMPI_COMM_WORLD_SIZE", "4",
		"PMI_RANK", "1", "SLURM_PROCID", "5", "SLURM_NTASKS", "8", NULL,
	};
	CHECK_EQ_INT(rank_of(garbled, &r, &s, &src), 0);
	CHECK_EQ_INT(r, 5);
	CHECK_EQ_INT(s, 8);

	/* rank must be below size; no sign, no overflow */
	static const char *const bad[] = {
		"PMI_RANK", "4", "PMI_SIZE", "4", "PMIX_RANK", "-1",
		"PMIX_SIZE", "2", "SLURM_PROCID", "0",
		"SLURM_NTASKS", "99999999999999999999", NULL,
	};
	CHECK_EQ_INT(rank_of(bad, &r, &s, &src), -1);
	return TEST_RESULT();
}
