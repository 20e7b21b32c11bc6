/* replay.c - runs a fuzz harness over its corpus without libFuzzer.
 *
 * Linked with one tests/fuzz/fuzz_NAME.c by the ordinary compiler, this is
 * the test $BUILD/tests/fuzz_NAME that `make check` runs: every file of
 * tests/fuzz/corpus/NAME/ (or of the files and directories given as
 * arguments) is fed to LLVMFuzzerTestOneInput() as it is, then cut short
 * at up to CUTS places and with up to FLIPS single bytes inverted, so that
 * each seed keeps exercising the truncated and damaged paths. A harness
 * that finds a broken promise aborts, naming the file and the variant; a
 * memory error shows under a sanitizer build (make check-asan).
 *
 * Exit 0 when every input ran, 1 on too few seeds, 77 when the corpus is
 * missing (not run from the repository root).
 *
 * With --each first, every file (and its variants) runs in a child
 * process of its own and one line says whether it kept every promise, so
 * that a directory of known failures (tests/fuzz/open/NAME) can be sorted
 * into what is fixed and what is not: exit 1 when any file broke one.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"

#ifndef FUZZ_NAME
#error "build with -DFUZZ_NAME=\"name\""
#endif

#define CUTS 48
#define FLIPS 96
#define MAX_SEED_BYTES (1 << 20)
#define MIN_SEEDS 4

static unsigned long runs;
static int each, broken; /* --each: one child per file; files that broke */

static void run_one(const char *what, const uint8_t *data, size_t len)
{
	/* libFuzzer hands the harness a copy it may not write to and that
	 * ends exactly at len (ASan sees one byte past it): do the same. */
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy) {
		fprintf(stderr, "replay: out of memory\n");
		exit(2);
	}
	memcpy(copy, data, len);
	fuzz_current_input = what;
	LLVMFuzzerTestOneInput(copy, len);
	fuzz_current_input = NULL;
	free(copy);
	runs++;
}

static void replay_variants(const char *path);

/* The seed, its truncations and its flipped copies; under --each in a
 * child, whose fate is one line. */
static void replay_file(const char *path)
{
	if (!each) {
		replay_variants(path);
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		replay_variants(path);
		exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		broken++;
		printf("BROKEN %s\n", path);
	} else {
		printf("ok %s\n", path);
	}
}

static void replay_variants(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		exit(1);
	}
	uint8_t *buf = malloc(MAX_SEED_BYTES);
	size_t len = buf ? fread(buf, 1, MAX_SEED_BYTES, f) : 0;
	fclose(f);
	if (!buf) {
		fprintf(stderr, "replay: out of memory\n");
		exit(2);
	}
	char what[600];
	snprintf(what, sizeof what, "%s", path);
	run_one(what, buf, len);
	size_t step = len / CUTS + 1;
	for (size_t cut = 0; cut < len; cut += step) {
		snprintf(what, sizeof what, "%s cut to %zu bytes", path, cut);
		run_one(what, buf, cut);
	}
	step = len / FLIPS + 1;
	for (size_t i = 0; i < len; i += step) {
		buf[i] ^= 0xff;
		snprintf(what, sizeof what, "%s with byte %zu inverted", path,
			 i);
		run_one(what, buf, len);
		buf[i] ^= 0xff;
	}
	free(buf);
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every plain file of dir, in name order (so a run is repeatable). */
static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof *names);
		}
		if (!names || !(names[n++] = strdup(de->d_name))) {
			fprintf(stderr, "replay: out of memory\n");
			exit(2);
		}
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_names);
	int files = 0;
	for (size_t k = 0; k < n; k++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, names[k]);
		if (!is_dir(path)) {
			replay_file(path);
			files++;
		}
		free(names[k]);
	}
	free(names);
	return files;
}

int main(int argc, char **argv)
{
	int files = 0;
	if (argc > 1 && !strcmp(argv[1], "--each")) {
		each = 1;
		argv++;
		argc--;
	}
	if (argc < 2) {
		const char *dir = "tests/fuzz/corpus/" FUZZ_NAME;
		files = replay_dir(dir);
		if (files < 0) {
			printf("skip: %s not found (run from the repository "
			       "root)\n", dir);
			return 77;
		}
		if (files < MIN_SEEDS) {
			fprintf(stderr, "%s: %d seeds, expected at least %d\n",
				dir, files, MIN_SEEDS);
			return 1;
		}
	}
	for (int a = 1; a < argc; a++) {
		if (is_dir(argv[a])) {
			files += replay_dir(argv[a]);
		} else {
			replay_file(argv[a]);
			files++;
		}
	}
	if (each) {
		printf("fuzz_%s: %d inputs, %d broke a promise\n", FUZZ_NAME,
		       files, broken);
		return broken ? 1 : 0;
	}
	printf("fuzz_%s: %d inputs, %lu runs, every promise kept\n", FUZZ_NAME,
	       files, runs);
	return 0;
}
