/* model_input.h - a model's note of how its data was read. */
#ifndef BOAR_MODEL_INPUT_H
#define BOAR_MODEL_INPUT_H

#include "boar.h"

/* boar_train's last step: the model m trained on d keeps d's note (a
 * copy). @return 0 or BOAR_ENOMEM. */
int boar_model_note_input(boar_model *m, const boar_dataset *d,
			  boar_error *err);

#endif
