/* metrics.h - library-internal scoring helpers. */
#ifndef BOAR_METRICS_H
#define BOAR_METRICS_H

#include <stdint.h>

#include "boar.h"

struct boar_model;
struct boar_dataset;

/* boar_evaluate() over rows[0..n) of d only (rows NULL: the first n). */
int boar_evaluate_rows(const struct boar_model *m,
		       const struct boar_dataset *d, const uint32_t *rows,
		       uint64_t n, boar_metrics *out, int threads,
		       boar_error *err);

#endif
