/* options.h - library-internal helpers for boar_options. */
#ifndef BOAR_OPTIONS_H
#define BOAR_OPTIONS_H

#include "boar.h"

/* The defaults of every field of a whole boar_options (options.c). */
void boar_options_fill(boar_options *o);

/* NULL if a whole, current-size *o is usable with d (may be NULL), else a
 * static reason (boar_options_check after the size, options_abi.c). */
const char *boar_options_validate(const boar_options *o,
				  const boar_dataset *d);

/* The caller's options (any size the library knows, see boar.h) as a
 * whole current struct in *out, fields the caller's size lacks at their
 * defaults, checked against train. 0 or BOAR_EINVAL with the reason. */
int boar_options_import(const boar_options *in, const boar_dataset *train,
			boar_options *out, boar_error *err);

/* The same for the loader's and the generator's options: fill the defaults
 * of a whole struct (dataset.c, gen.c), and widen a caller's struct of a
 * known size into *out over them (o NULL: the defaults). 0, or -1 for a
 * size this library does not know. */
void boar_load_options_fill(boar_load_options *o);
void boar_gen_options_fill(boar_gen_options *o);
int boar_load_options_widen(const boar_load_options *o,
			    boar_load_options *out);
int boar_gen_options_widen(const boar_gen_options *o, boar_gen_options *out);
/* boar_search_options likewise (defaults: all zero). */
int boar_search_options_widen(const boar_search_options *o,
			      boar_search_options *out);

/* Replaces BOAR_AUTO fields and the AUTO task with concrete values for d.
 * Call only after boar_options_check(o, d, err) returned 0. */
void boar_options_resolve(boar_options *o, const boar_dataset *d);
/* The same for MF ratings known by their spread (standard deviation about
 * their mean) and count only: a cluster worker holding part of them
 * resolves as one process holding all would (train_cluster_mf.c). */
void boar_options_resolve_mf(boar_options *o, double spread, uint64_t rows);

#endif
