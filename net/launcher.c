/* launcher.c - rank and size from the launcher's environment variables.
 *
 * Values are parsed strictly (digits only, rank < size <= 2^20): a garbled
 * variable is skipped rather than guessed at. See launcher.h.
 */
#include <stddef.h>
#include <stdlib.h>

#include "net/launcher.h"

static int parse(const char *s, unsigned long *out)
{
	if (!s || *s < '0' || *s > '9')
		return -1;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v > (1ul << 20))
		return -1;
	*out = v;
	return 0;
}

int net_launcher_rank(net_lookup_fn lookup, uint32_t *rank, uint32_t *size,
		      const char **source)
{
	static const char *const pairs[][2] = {
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMI_RANK", "PMI_SIZE" },
		{ "PMIX_RANK", "PMIX_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		unsigned long r, s;
		if (!parse(lookup(pairs[i][0]), &r) &&
		    !parse(lookup(pairs[i][1]), &s) && r < s) {
			*rank = (uint32_t)r;
			*size = (uint32_t)s;
			if (source)
				*source = pairs[i][0];
			return 0;
		}
	}
	return -1;
}
