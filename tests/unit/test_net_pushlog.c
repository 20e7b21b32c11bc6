/* test_net_pushlog.c - the shard's push log: records come back in order,
 * a torn last record (a process killed inside its write) is cut off and
 * appending goes on after the good ones, garbage is cut, and a record the
 * shard refuses makes the replay fail naming the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/pushlog.h"
#include "testutil.h"

struct seen {
	int n;
	uint64_t a[8];
	uint32_t len[8];
	int refuse_at; /* refuse the record with this index; -1 none */
};

static int collect(void *ctx, int kind, uint16_t flags, uint32_t rank,
		   uint64_t a, const uint8_t *payload, uint32_t len)
{
	struct seen *s = ctx;
	(void)flags;
	(void)payload;
	if (s->n == s->refuse_at || rank != 3 ||
	    (kind != PUSHLOG_PUSH && kind != PUSHLOG_CLOCK))
		return -1;
	if (s->n < 8) {
		s->a[s->n] = a;
		s->len[s->n] = len;
	}
	s->n++;
	return 0;
}

static off_t size_of(const char *p)
{
	struct stat st;
	return stat(p, &st) ? -1 : st.st_size;
}

int main(void)
{
	char dir[] = "/tmp/boar-pushlog-XXXXXX";
	if (!mkdtemp(dir))
		return 99;
	struct pushlog pl;
	boar_error err;
	uint64_t n;
	struct seen s = { .refuse_at = -1 };
	uint8_t payload[100];
	memset(payload, 7, sizeof payload);

	CHECK(pushlog_open(&pl, dir, 0, 2, collect, &s, &n, &err) == 0 &&
	      n == 0, "a new log: %s", err.message);
	CHECK(pushlog_append(&pl, PUSHLOG_PUSH, 0, 3, 1, payload, 100) == 0,
	      "append");
	CHECK(pushlog_append(&pl, PUSHLOG_CLOCK, 0, 3, 5, NULL, 0) == 0,
	      "append clock");
	CHECK(pushlog_append(&pl, PUSHLOG_PUSH, 0, 3, 2, payload, 50) == 0,
	      "append");
	pushlog_close(&pl);
	off_t whole = size_of(pl.path), two = whole - (24 + 50 + 4);

	/* killed inside the third write: 10 bytes of it are missing */
	CHECK(truncate(pl.path, whole - 10) == 0, "truncate");
	CHECK(pushlog_open(&pl, dir, 0, 2, collect, &s, &n, &err) == 0,
	      "torn tail: %s", err.message);
	CHECK(n == 2 && s.a[0] == 1 && s.len[0] == 100 && s.a[1] == 5 &&
	      s.len[1] == 0, "replayed %llu records", (unsigned long long)n);
	CHECK(pl.cut == 24 + 50 + 4 - 10, "cut %llu bytes",
	      (unsigned long long)pl.cut);
	CHECK(size_of(pl.path) == two, "the torn record was not cut: %lld "
	      "bytes, want %lld", (long long)size_of(pl.path), (long long)two);
	CHECK(pushlog_append(&pl, PUSHLOG_PUSH, 0, 3, 3, payload, 10) == 0,
	      "append after the cut");
	pushlog_close(&pl);
	memset(&s, 0, sizeof s);
	s.refuse_at = -1;
	CHECK(pushlog_open(&pl, dir, 0, 2, collect, &s, &n, &err) == 0 &&
	      n == 3 && s.a[2] == 3, "after the cut: %llu records",
	      (unsigned long long)n);

	/* a record the shard refuses (say, another shard's rank) */
	pushlog_close(&pl);
	memset(&s, 0, sizeof s);
	s.refuse_at = 1;
	CHECK(pushlog_open(&pl, dir, 0, 2, collect, &s, &n, &err) ==
		      BOAR_ECORRUPT && strstr(err.message, pl.path),
	      "a refused record: %s", err.message);

	/* garbage is cut to nothing */
	FILE *f = fopen(pl.path, "wb");
	fputs("not a push log at all", f);
	fclose(f);
	memset(&s, 0, sizeof s);
	s.refuse_at = -1;
	CHECK(pushlog_open(&pl, dir, 0, 2, collect, &s, &n, &err) == 0 &&
	      n == 0 && size_of(pl.path) == 0, "garbage: %llu records",
	      (unsigned long long)n);
	pushlog_reset(&pl);
	pushlog_close(&pl);
	unlink(pl.path);
	rmdir(dir);
	return TEST_RESULT();
}
