/* atomic_file.h - write a file so that readers see the old one or the whole
 * new one, never a part: a temp file beside the target, fsync, rename. */
#ifndef BOAR_ATOMIC_FILE_H
#define BOAR_ATOMIC_FILE_H

#include <stdio.h>

#include "boar.h"

typedef struct boar_atomic_file {
	FILE *fp;          /* write here */
	char tmp[4096];    /* the temp file's path */
	const char *path;  /* the final path */
} boar_atomic_file;

/* Creates the temp file in path's directory. */
int boar_atomic_open(boar_atomic_file *f, const char *path, boar_error *err);
/* Flushes, fsyncs and renames onto the target; on any failure the temp file
 * is removed and the target left as it was. */
int boar_atomic_commit(boar_atomic_file *f, boar_error *err);
/* Gives up: closes and removes the temp file. */
void boar_atomic_abort(boar_atomic_file *f);

#endif
