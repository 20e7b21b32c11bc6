/* model_input.c - a model's note of how its data was read (data/
 * input_spec.h): kept from the training data, given back as load options
 * so that eval and predict read new data the same way. */
#include "base/error.h"
#include "data/dataset.h"
#include "data/input_spec.h"
#include "model.h"
#include "model_input.h"

int boar_model_note_input(boar_model *m, const boar_dataset *d,
			  boar_error *err)
{
	boar_input_spec_free(m->input);
	m->input = NULL;
	if (!d->input)
		return 0; /* built from arrays: nothing to note */
	if (!(m->input = boar_input_spec_copy(d->input)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	return 0;
}

int boar_model_load_options(const boar_model *m, boar_load_options *o)
{
	boar_load_options_default(o);
	o->task = m->task;
	o->hash_bits = m->task == BOAR_TASK_LINEAR ? m->hash_bits : 0;
	if (!m->input)
		return 0;
	boar_input_spec_fill(m->input, o);
	return 1;
}
