/* feature_hash.c - the public face of the name hashing that the VW and CSV
 * parsers apply, so an embedding application can score rows of named
 * features with boar_model_predict_row. Must agree with parse_vw.c and
 * parse_csv.c (test_feature_hash checks it through the parsers). */
#include <string.h>

#include "boar.h"
#include "murmur3.h"

uint32_t boar_hash_vw(const char *ns, const char *name)
{
	uint32_t seed = ns && ns[0] ? boar_vw_hash_name(ns, strlen(ns), 0) : 0;
	return boar_vw_hash_name(name, strlen(name), seed);
}

uint32_t boar_hash_csv(uint32_t column, const char *value)
{
	uint8_t le4[4] = {(uint8_t)column, (uint8_t)(column >> 8),
			  (uint8_t)(column >> 16), (uint8_t)(column >> 24)};
	uint32_t seed = boar_murmur3_32(le4, 4, 0);
	return value ? boar_murmur3_32(value, strlen(value), seed) : seed;
}
