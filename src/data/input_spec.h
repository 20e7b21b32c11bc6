/* input_spec.h - how a model's training data was read (library-internal).
 *
 * A model that only holds weights cannot tell eval or predict how to read
 * its test data: a CSV model read without its label column, ignored
 * columns and log transform scores garbage with exit status 0. So every
 * dataset loaded from a file notes how it was read (the format detection
 * chose, the CSV columns and transforms), boar_train() hands the note on to
 * the model, the model file keeps it (a section of model_sections.c), and
 * boar_model_load_options() gives it back as a boar_load_options.
 *
 * The note is kept as "key value" text lines: readable in a hex dump, and
 * a later option is one more key, not a new file layout.
 */
#ifndef BOAR_INPUT_SPEC_H
#define BOAR_INPUT_SPEC_H

#include <stddef.h>

#include "boar.h"

struct boar_input_spec {
	int format;  /* BOAR_FORMAT_* that read the data (never AUTO) */
	/* CSV; NULL: not given */
	char *csv_label, *csv_ignore, *csv_categorical, *csv_numeric;
	/* CSV: every categorical and numeric column as the training file
	 * settled them (its auto columns included), so that a test file
	 * whose values look otherwise is still read alike; NULL: none */
	char *csv_cat_settled, *csv_num_settled;
	/* VW: namespaces dropped / kept (first letters); NULL: not given */
	char *vw_ignore, *vw_keep;
	/* VW: generated features (boar_load_options); NULL: none */
	char *vw_interactions, *vw_ngrams, *vw_skips;
	int csv_separator, csv_header, csv_log;
	int csv_label_at; /* 1 + the label's column in the file; 0 unknown */
};

/* A note of how data of `format` was read with o (strings copied).
 * NULL when out of memory. */
struct boar_input_spec *boar_input_spec_new(int format,
					    const boar_load_options *o);
struct boar_input_spec *boar_input_spec_copy(const struct boar_input_spec *s);
void boar_input_spec_free(struct boar_input_spec *s);

/* The note as text ("key value" lines) in a malloc'd *buf of *len bytes.
 * @return 0 or BOAR_ENOMEM. */
int boar_input_spec_encode(const struct boar_input_spec *s, char **buf,
			   size_t *len);
/* Reads encode's text back. @return 0, BOAR_ENOMEM, or BOAR_ECORRUPT with
 * the reason in why. */
int boar_input_spec_decode(const char *buf, size_t len,
			   struct boar_input_spec **out, char *why,
			   size_t why_len);

/* The note's fields into o (strings point into s), the settled column
 * kinds as o's categorical and numeric lists; o's other fields are left
 * alone. */
void boar_input_spec_fill(const struct boar_input_spec *s,
			  boar_load_options *o);

/* boar_dataset_load's last step: notes in *d how it was read. On failure
 * (out of memory) *d is freed and set to NULL.
 * @return 0 or BOAR_ENOMEM. */
int boar_dataset_note_input(boar_dataset **d, int format,
			    const boar_load_options *o, boar_error *err);

#endif
