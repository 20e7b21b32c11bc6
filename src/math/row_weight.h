/* row_weight.h - how much one row's loss counts: its instance weight times
 * its label's class weight (LIBLINEAR's -W and -wi). The CPU engine
 * (engine.c) and the GPU engine (gpu_data.cu) fold both into one scale per
 * row with this function, so a weighted run means the same on either; the
 * sweeps multiply the row's loss and derivative by it.
 */
#ifndef BOAR_MATH_ROW_WEIGHT_H
#define BOAR_MATH_ROW_WEIGHT_H

#include <stdint.h>

#include "boar.h"

/* The class weight of a label (1 when none is given for it). */
static inline float boar_class_weight(const boar_options *o, float label)
{
	for (int k = 0; k < o->n_class_weights; k++)
		if (o->class_weight_labels[k] == label)
			return o->class_weight_values[k];
	return 1.0f;
}

/* Row r's scale: inst (the dataset's instance weights, or NULL for all 1)
 * times the class weight of its label. */
static inline float boar_row_weight(const boar_options *o, const float *inst,
				    const float *label, uint64_t r)
{
	return (inst ? inst[r] : 1.0f) * boar_class_weight(o, label[r]);
}

/* Whether a run weights rows at all (else no scale is kept). */
static inline int boar_rows_weighted(const boar_options *o, const float *inst)
{
	return inst || o->n_class_weights;
}

#endif
