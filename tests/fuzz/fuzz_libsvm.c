/* fuzz_libsvm.c - the LIBSVM / SVMlight parser, with ids as given and
 * hashed into 8 slots (so that rows fold, sort and merge). */
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	boar_load_options o;
	boar_load_options_default(&o);
	fuzz_parse(data, size, BOAR_FORMAT_LIBSVM, &o);
	o.hash_bits = 3;
	fuzz_parse(data, size, BOAR_FORMAT_LIBSVM, &o);
	return 0;
}
