/* classes.h - finding the classes of a multiclass label column. */
#ifndef BOAR_CLASSES_H
#define BOAR_CLASSES_H

#include <stdint.h>

struct boar_dataset;

/* The distinct labels of a linear dataset, ascending, into out[max]; their
 * count in *k. Returns 0, or -1 when there are more than max distinct
 * labels or one is not an integer (then the labels are not classes). */
int boar_collect_classes(const struct boar_dataset *d, float *out,
			 uint32_t max, uint32_t *k);

#endif
