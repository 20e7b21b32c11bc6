/* huge_pages.h - asking the kernel for 2 MiB pages. */
#ifndef BOAR_BASE_HUGE_PAGES_H
#define BOAR_BASE_HUGE_PAGES_H

#include <stddef.h>

/* Asks for 2 MiB pages on the whole 2 MiB pages of p[0..n) (p may be
 * NULL): memory written once through (a block of text, a dataset's
 * arrays, a clock's keys) then takes one page fault where it would take
 * 512, and a large array read at random (a model's weights, the epoch's
 * bitmaps) far fewer page walks than in 4 KiB pages, whose reach (a few
 * MiB of TLB) it outgrows. Advice only: nothing changes where the kernel
 * refuses it, or where the memory was touched already. */
void boar_advise_huge(void *p, size_t n);

#endif
