/* model_sections.h - the optional sections of a model file, version 2
 * (library-internal).
 *
 * Version 1 files hold a header, the weights and a checksum. Version 2
 * adds, between the weights and the checksum, tagged sections:
 *
 *   char tag[4], u32 section version, u64 length, then length bytes
 *
 *   "INPT" v1  how the training data was read (input_spec.h), as text
 *   "STAT" v1  optimizer state for --save-resume (train_state.h):
 *              u32 epochs, u32 optimizer, f64 eta, f64 eta_decay,
 *              u64 n, f32 sums[n]
 *
 * The checksum covers them too. A model with no section is written as
 * version 1, so files older builds read stay readable by them; a reader
 * refuses a section tag or version it does not know rather than score
 * data read the wrong way.
 */
#ifndef BOAR_MODEL_SECTIONS_H
#define BOAR_MODEL_SECTIONS_H

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "boar.h"

struct boar_model;

/* Bytes m's sections take in a file; 0 when it has none (version 1). */
uint64_t boar_model_sections_size(const struct boar_model *m);

/* Writes m's sections to fp, folding them into *crc.
 * @return 0 or BOAR_ENOMEM. */
int boar_model_sections_write(FILE *fp, uLong *crc, const struct boar_model *m);

/* Reads exactly len bytes of sections from fp into m, folding them into
 * *crc. @return 0, or BOAR_ECORRUPT / BOAR_EFORMAT / BOAR_ENOMEM with err
 * naming path. */
int boar_model_sections_read(FILE *fp, uint64_t len, uLong *crc,
			     struct boar_model *m, const char *path,
			     boar_error *err);

#endif
