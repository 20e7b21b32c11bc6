/* fuzz_vw.c - the Vowpal Wabbit text parser, into VW's default 2^18 slots
 * and into 4 (so that most features collide and are summed). */
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	boar_load_options o;
	boar_load_options_default(&o);
	fuzz_parse(data, size, BOAR_FORMAT_VW, &o);
	o.hash_bits = 2;
	fuzz_parse(data, size, BOAR_FORMAT_VW, &o);
	return 0;
}
