/* atomic_file.c - temp + fsync + rename writes (see atomic_file.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"

int boar_atomic_open(boar_atomic_file *f, const char *path, boar_error *err)
{
	f->fp = NULL;
	f->path = path;
	if (snprintf(f->tmp, sizeof f->tmp, "%s.tmp.XXXXXX", path) >=
	    (int)sizeof f->tmp)
		return boar_fail(err, BOAR_EINVAL, "%s: path too long", path);
	int fd = mkstemp(f->tmp);
	if (fd < 0)
		return boar_fail(err, BOAR_EIO, "%s: cannot create: %s", path,
				 strerror(errno));
	f->fp = fdopen(fd, "wb");
	if (!f->fp) {
		close(fd);
		unlink(f->tmp);
		return boar_fail(err, BOAR_EIO, "%s: %s", path, strerror(errno));
	}
	/* mkstemp makes 0600; a model or data file is ordinary output. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return 0;
}

int boar_atomic_commit(boar_atomic_file *f, boar_error *err)
{
	int bad = ferror(f->fp) || fflush(f->fp) != 0 ||
		  fsync(fileno(f->fp)) != 0;
	int saved = errno;
	if (fclose(f->fp) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	f->fp = NULL;
	if (!bad && rename(f->tmp, f->path) == 0)
		return 0;
	if (!bad)
		saved = errno;
	unlink(f->tmp);
	return boar_fail(err, BOAR_EIO, "%s: write failed: %s", f->path,
			 strerror(saved));
}

void boar_atomic_abort(boar_atomic_file *f)
{
	if (f->fp)
		fclose(f->fp);
	f->fp = NULL;
	unlink(f->tmp);
}
