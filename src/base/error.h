/* error.h - filling a caller's boar_error (library-internal). */
#ifndef BOAR_ERROR_H
#define BOAR_ERROR_H

#include <stdint.h>

#include "boar.h"

/* Sets err (if not NULL) to code and a printf-formatted message; returns code
 * so callers can write `return boar_fail(err, BOAR_EPARSE, ...)`. */
int boar_fail(boar_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Same, for a problem at a line of a file: "PATH:LINE: message". */
int boar_fail_line(boar_error *err, int code, const char *path, uint64_t line,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Clears err (if not NULL) to BOAR_OK and an empty message. */
void boar_error_clear(boar_error *err);

#endif
