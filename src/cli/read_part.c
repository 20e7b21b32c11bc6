/* read_part.c - worker r of W reads only its part of a training file
 * (read_part.h says which lines are a part's). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/huge_pages.h"
#include "data/dataset.h"
#include "base/error.h"
#include "data/parse_chunks.h"
#include "data/parse_common.h"
#include "read_part.h"

/* n bytes at `at` (fewer at the end of the file) into dst: 0, or -1
 * with errno. The library's reader, so short reads mean one thing. */
static int read_at(int fd, char *dst, size_t n, uint64_t at, int threads,
		   size_t *got)
{
	ssize_t k = boar_pread_all(fd, dst, n, at, threads);
	if (k < 0) {
		errno = (int)-k;
		return -1;
	}
	*got = (size_t)k;
	return 0;
}

/* The first line start at or after cut: cut itself when the byte before
 * it is '\n' (or cut is 0), else just after the next '\n'; size when the
 * file ends first. */
static int line_start(int fd, uint64_t cut, uint64_t size, uint64_t *out)
{
	char buf[65536];
	if (cut == 0 || cut >= size) {
		*out = cut < size ? cut : size;
		return 0;
	}
	for (uint64_t at = cut - 1; at < size;) {
		size_t got;
		if (read_at(fd, buf, sizeof buf, at, 1, &got))
			return -1;
		if (!got)
			break;
		char *nl = memchr(buf, '\n', got);
		if (nl) {
			*out = at + (uint64_t)(nl - buf) + 1;
			return 0;
		}
		at += got;
	}
	*out = size;
	return 0;
}

/* Every worker must build the same model: the same number of keys. */
static int agree_dim(boar_dataset *d, uint64_t features, const char *path,
		     boar_error *err)
{
	if (d->hash_bits || !features)
		return 0;
	if (d->dim > features)
		return boar_fail(err, BOAR_EINVAL,
				 "%s: feature id %llu, but --features says the "
				 "ids are below %llu",
				 path, (unsigned long long)(d->dim - 1),
				 (unsigned long long)features);
	d->dim = features;
	return 0;
}

/* The part as one block of text, for what the windowed reader leaves
 * (a part that starts with blank lines or comments, or a first line
 * longer than its detection window). */
static int parse_block(int fd, const char *path, uint32_t rank,
		       uint32_t n_parts,
		       const boar_load_options *o, int threads,
		       boar_dataset **out, const struct part_info *info,
		       boar_error *err)
{
	size_t n = (size_t)(info->hi - info->lo), got;
	char *text = malloc(n ? n : 1);
	if (!text)
		return boar_fail(err, BOAR_ENOMEM,
				 "%s: out of memory for part %u of %u "
				 "(%zu bytes)",
				 path, rank, n_parts, n);
	boar_advise_huge(text, n);
	if (read_at(fd, text, n, info->lo, threads, &got) || got != n) {
		free(text);
		return boar_fail(err, BOAR_EIO, "%s: short read of part %u of "
						"%u (did the file change?)",
				 path, rank, n_parts);
	}
	/* an error names the file's own line, as the windows do */
	struct line_origin origin = { .fd = fd, .at = info->lo };
	int rc = dataset_parse_text_threads(text, n, path, &origin, o, threads,
					    out, err);
	free(text);
	return rc;
}

static int parse_range(int fd, const char *path, uint32_t rank,
		       uint32_t n_parts, uint64_t features,
		       const boar_load_options *o, boar_dataset **out,
		       const struct part_info *info, boar_error *err)
{
	/* In windows on all the parse threads, as boar_dataset_load reads a
	 * whole file: the part once went through the one-thread block
	 * parser after a copy of its text into fresh pages (the copy and
	 * the kernel's zeroing of them: a third of a worker's cycles). */
	int threads = parse_threads(o->threads);
	int rc = boar_parse_file_range(path, info->lo, info->hi, o, threads,
				       out, err);
	if (rc == 1)
		rc = parse_block(fd, path, rank, n_parts, o, threads, out, info,
				 err);
	if (!rc && (rc = agree_dim(*out, features, path, err))) {
		boar_dataset_free(*out);
		*out = NULL;
	}
	return rc;
}

int read_part(const char *path, uint32_t rank, uint32_t n_parts,
	      uint64_t features, const boar_load_options *o,
	      boar_dataset **out, struct part_info *info, boar_error *err)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return boar_fail(err, BOAR_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	unsigned char magic[2] = { 0, 0 };
	size_t got = 0;
	int rc = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		rc = boar_fail(err, BOAR_EIO, "%s: not a regular file: a worker "
					      "reads its part of a file by "
					      "offset",
			       path);
	else if (read_at(fd, (char *)magic, 2, 0, 1, &got) ||
		 (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b))
		rc = boar_fail(err, BOAR_EINVAL, "%s: gzip input cannot be "
						 "read in parts: unpack it "
						 "(or read it whole)",
			       path);
	uint64_t size = (uint64_t)st.st_size;
	if (!rc) {
		info->file_bytes = size;
		/* 128-bit free: size * rank / n_parts without overflow */
		uint64_t a = size / n_parts * rank +
			     size % n_parts * rank / n_parts;
		uint64_t b = size / n_parts * (rank + 1) +
			     size % n_parts * (rank + 1) / n_parts;
		if (line_start(fd, a, size, &info->lo) ||
		    line_start(fd, b, size, &info->hi))
			rc = boar_fail(err, BOAR_EIO, "%s: %s", path,
				       strerror(errno));
	}
	if (!rc)
		rc = parse_range(fd, path, rank, n_parts, features, o, out,
				 info, err);
	close(fd);
	return rc;
}
