/* read_part.h - worker r of W reads only its part of a training file.
 *
 * The file is cut into W byte ranges of equal size; part r is the lines
 * that start inside range r (a line that crosses a cut belongs to the
 * part where it starts), so the parts cover every line exactly once and
 * the W workers parse them in parallel, each holding 1/W of the text and
 * of the rows. Plain text only: a gzip stream cannot be entered in the
 * middle.
 */
#ifndef BOAR_CLI_READ_PART_H
#define BOAR_CLI_READ_PART_H

#include <stdint.h>

#include "boar.h"

struct part_info {
	uint64_t lo, hi;     /* the part's bytes [lo, hi) of the file */
	uint64_t file_bytes; /* the whole file */
};

/* Parses part rank of n_parts of path with o. When features > 0 the
 * dataset's dimension is raised to it (ids >= features are refused), so
 * that every worker agrees on the model's size; hashed input already
 * has 2^hash_bits. @return 0 and *out, or a BOAR_E* code with *err naming
 * the file (a bad line by the file's own number: the message a parse of
 * the whole file gives for it). */
int read_part(const char *path, uint32_t rank, uint32_t n_parts,
	      uint64_t features, const boar_load_options *o,
	      boar_dataset **out, struct part_info *info, boar_error *err);

#endif
