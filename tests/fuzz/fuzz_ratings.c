/* fuzz_ratings.c - the (user, item, rating) parser: space, comma, tab and
 * "::" separated lines, ids up to 2^32 - 1. */
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.task = BOAR_TASK_MF;
	fuzz_parse(data, size, BOAR_FORMAT_RATINGS, &o);
	return 0;
}
