/* mem_limit.c - the memory limit. See mem_limit.h. */
#include <stdio.h>
#include <unistd.h>

#include "error.h"
#include "mem_limit.h"

uint64_t boar_memory_limit(uint64_t requested)
{
	if (requested)
		return requested;
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return UINT64_MAX;
	return boar_mul_sat((uint64_t)pages, (uint64_t)size) / 4 * 3;
}

void boar_format_bytes(uint64_t bytes, char *buf, size_t n)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB",
				      "EiB" };
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, n, "%.1f %s", v, unit[u]);
}

int boar_memory_check(uint64_t need, uint64_t requested, const char *path,
		      const char *what, boar_error *err)
{
	uint64_t limit = boar_memory_limit(requested);
	if (need <= limit)
		return 0;
	char a[32], b[32];
	boar_format_bytes(need, a, sizeof a);
	boar_format_bytes(limit, b, sizeof b);
	const char *how = requested ? "max_memory"
				    : "3/4 of physical memory; raise it with max_memory";
	if (path)
		return boar_fail_line(err, BOAR_ENOMEM, path, 0,
				      "%s needs %s, over the memory limit of %s (%s)",
				      what, a, b, how);
	return boar_fail(err, BOAR_ENOMEM,
			 "%s needs %s, over the memory limit of %s (%s)", what,
			 a, b, how);
}
