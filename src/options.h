/* options.h - library-internal helpers for boar_options. */
#ifndef BOAR_OPTIONS_H
#define BOAR_OPTIONS_H

#include "boar.h"

/* Replaces BOAR_AUTO fields and the AUTO task with concrete values for d.
 * Call only after boar_options_check(o, d) returned NULL. */
void boar_options_resolve(boar_options *o, const boar_dataset *d);

#endif
