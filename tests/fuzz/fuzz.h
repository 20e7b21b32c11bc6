/* fuzz.h - what the fuzz harnesses share.
 *
 * Every tests/fuzz/fuzz_NAME.c defines LLVMFuzzerTestOneInput() for one
 * input boar reads: a text parser (LIBSVM, ratings, VW, CSV), gzip input,
 * the dataset cache, the model file, the checkpoint file, the wire decoder.
 * Each is built two ways (see the fuzz block of the Makefile):
 *  - with clang's libFuzzer, ASan and UBSan (`make fuzz SECONDS=N`), which
 *    mutates the seeds of tests/fuzz/corpus/NAME/ for N seconds;
 *  - with the ordinary compiler and replay.c's main() (`make check`), which
 *    feeds every seed, and truncations and byte flips of it, to the harness,
 *    so that every change is run against every known nasty input.
 *
 * A harness does more than "not crash": after a load that succeeded it
 * checks what the loader promised (fuzz_check_dataset: offsets ascending,
 * ids below the dimension, every number finite...), and after one that
 * failed, that the error is one clear line naming the file
 * (fuzz_check_error). A broken promise is fuzz_fail(): a message and
 * abort(), which libFuzzer saves as a crash and the replay reports.
 */
#ifndef BOAR_FUZZ_H
#define BOAR_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "boar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reports a broken promise (printf-style; the input being run is named
 * when the replay knows it) and aborts. */
void fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* What the replay is running now (a corpus file and its variant), for
 * fuzz_fail's message; NULL under libFuzzer, which names the input itself. */
extern const char *fuzz_current_input;

/* Writes data into the harness's scratch directory (created on first use
 * under $TMPDIR, /dev/shm when there is one, and removed at exit) as NAME,
 * replacing what was there, and returns its path (valid until the next
 * call). Aborts when the file cannot be written: that is the machine, not
 * the input. */
const char *fuzz_write_file(const char *name, const void *data, size_t len);

/* The input of a fuzzer that steers with its first byte: *mode = data[0],
 * and a writable copy of the rest (*len bytes; free it), or NULL for an
 * empty input (or no memory: nothing to test). */
uint8_t *fuzz_take_mode(const uint8_t *data, size_t size, unsigned *mode,
			size_t *len);

/* v as 4 little-endian bytes at p (fixing a length or a checksum). */
void fuzz_put_le32(uint8_t *p, uint32_t v);

/* The scratch directory itself, and the path of file NAME in it (removed
 * at exit; valid until the next call of either function). */
const char *fuzz_scratch_dir(void);
const char *fuzz_path(const char *name);

/* After a failed load: rc is a BOAR_E* code, err carries it, and the
 * message is one non-empty line that names path (out-of-memory messages
 * excepted). */
void fuzz_check_error(int rc, const boar_error *err, const char *path);

/* After a successful parse or cache load: the dataset is what dataset.h
 * says (CSR offsets from 0 ascending to nnz, every id below the dimension,
 * 2^hash_bits slots when hashed, labels, values and weights finite, MF ids
 * below users and items), and every row reads back through the public
 * boar_dataset_row(). */
void fuzz_check_dataset(const boar_dataset *d);

/* The two datasets are the same (task, counts, dimensions, hashing, every
 * array); else fuzz_fail, saying `how` the second was made. */
void fuzz_check_same(const boar_dataset *a, const boar_dataset *b,
		     const char *how);

/* Runs one text parser (format: BOAR_FORMAT_LIBSVM, _RATINGS, _VW or
 * _CSV) twice, on one thread, with the load options o (hash_bits, CSV
 * columns...): on data in memory as one block, in a buffer that ends
 * exactly at size so that ASan sees any read past the text; and on the
 * data as a file read in blocks of a few lines (boar_parse_file_blocks),
 * which crosses a block boundary at nearly every line. Each dataset is
 * checked (fuzz_check_dataset) or each error (fuzz_check_error), and the
 * two must agree: the same dataset, or the same error at the same line
 * (CSV in blocks may also refuse a value of a column its first block
 * found numeric: parse_csv.c says why). */
void fuzz_parse(const uint8_t *data, size_t size, int format,
		const boar_load_options *o);

/* Binary harnesses (cache, model, checkpoint) take their first input byte
 * as a mode: FUZZ_FIX_SUMS has the harness recompute the file's checksums
 * before loading it, so that the fuzzer reaches what a loader must check
 * beyond them (a file can lie with a valid checksum); without it the bytes
 * are loaded as they are. The other bits are the harness's own. */
#define FUZZ_FIX_SUMS 1u

#endif
