/* huge_pages.c - see huge_pages.h. */
#include <stdint.h>
#include <sys/mman.h>

#include "huge_pages.h"

void boar_advise_huge(void *p, size_t n)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
	if (p && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}
