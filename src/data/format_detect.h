/* format_detect.h - which text format a file holds, and each format's
 * traits (from boar.h's BOAR_FORMAT_MAP). */
#ifndef BOAR_FORMAT_DETECT_H
#define BOAR_FORMAT_DETECT_H

#include <stddef.h>

/* How much of a file detection looks at (the loader peeks this much). */
#define DETECT_WINDOW ((size_t)1 << 20)

/* Looks at the first data lines of buf: BOAR_FORMAT_LIBSVM when a token
 * after the first has a ':' (and is not a '::' separator), else
 * BOAR_FORMAT_RATINGS when a line has 3+ numeric fields; LIBSVM when
 * undecided (so that its parser names the problem). */
int boar_detect_format(const char *buf, size_t len);

/* The same, knowing the task: the linear task reads no ratings, so a file
 * that looks like ratings goes to the LIBSVM parser, which names what is
 * wrong with it. */
int boar_detect_format_for(int task, const char *buf, size_t len);

/* The task a format's rows train (BOAR_TASK_LINEAR or _MF), and whether
 * its features are names hashed into slots; AUTO reads as linear,
 * unhashed. */
int boar_format_task(int format);
int boar_format_hashed(int format);

#endif
