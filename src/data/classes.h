/* classes.h - finding the classes of a multiclass label column. */
#ifndef BOAR_CLASSES_H
#define BOAR_CLASSES_H

#include <stdint.h>

#include "boar.h"

struct boar_dataset;

/* Labels are 32-bit floats, exact for integers up to 2^24 = 16777216 in
 * magnitude; above it neighbouring integers share a float (16777217 reads
 * as 16777216), so two classes would silently become one. */
#define BOAR_CLASS_LABEL_MAX 16777215.0f

/* The distinct labels of a linear dataset, ascending, into out[max]; their
 * count in *k. Returns 0, or -1 when there are more than max distinct
 * labels, one is not an integer, or one is beyond BOAR_CLASS_LABEL_MAX
 * in magnitude (then the labels are not classes). */
int boar_collect_classes(const struct boar_dataset *d, float *out,
			 uint32_t max, uint32_t *k);

/* BOAR_EINVAL, naming the dataset's file and the row, when an integer
 * label is too large to be a class label exactly (see above); else 0. */
int boar_check_class_range(const struct boar_dataset *d, boar_error *err);

#endif
