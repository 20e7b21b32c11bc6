/* ratings_bin.c - "user item rating" text lines to the binary records a
 * cuMF_SGD-style peer reads: per rating an int32 user, an int32 item and a
 * float32 rating, little-endian, no header.
 *
 *   ratings_bin IN.txt OUT.bin
 *
 * A bench helper (bench/gpu/cumf_compare.sh), not part of boar: the file is
 * mapped and parsed by hand because strtol/strtof over 50M lines takes
 * longer than the runs it feeds. A malformed line stops it with its number.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *read_uint(const char *p, const char *end, int32_t *out)
{
	int64_t v = 0;
	const char *s = p;
	while (p < end && *p >= '0' && *p <= '9' && v <= INT32_MAX)
		v = v * 10 + (*p++ - '0');
	if (p == s || v > INT32_MAX)
		return NULL;
	*out = (int32_t)v;
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: ratings_bin IN.txt OUT.bin\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	const char *p = st.st_size ? mmap(NULL, st.st_size, PROT_READ,
					  MAP_PRIVATE, fd, 0)
				   : "";
	if (p == MAP_FAILED) {
		perror(argv[1]);
		return 1;
	}
	const char *end = p + st.st_size;
	FILE *out = fopen(argv[2], "wb");
	if (!out) {
		perror(argv[2]);
		return 1;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 24);
	uint64_t line = 0;
	char num[64];
	while (p < end) {
		line++;
		int32_t rec[3];
		const char *q = read_uint(skip_blanks(p, end), end, &rec[0]);
		q = q ? read_uint(skip_blanks(q, end), end, &rec[1]) : NULL;
		if (q)
			q = skip_blanks(q, end);
		size_t n = 0;
		while (q && q < end && *q != '\n' && *q != ' ' && n < sizeof num - 1)
			num[n++] = *q++;
		num[n] = '\0';
		char *e;
		float r = n ? strtof(num, &e) : 0.0f;
		if (!q || !n || *e) {
			fprintf(stderr, "%s:%llu: not a \"user item rating\" line\n",
				argv[1], (unsigned long long)line);
			return 1;
		}
		memcpy(&rec[2], &r, sizeof r);
		fwrite(rec, sizeof rec, 1, out);
		while (q < end && *q != '\n')
			q++;
		p = q + 1;
	}
	if (fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	return 0;
}
