/* weights.c - instance weights of a dataset: from the caller's array or
 * from a file of one number per line (LIBLINEAR's -W format). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "base/error.h"
#include "parse_chunks.h"

#define WEIGHT_SLOT 5 /* dataset.h reserves owned[5] for the weights */

static int check_weight(float w)
{
	return isfinite(w) && w >= 0;
}

static void adopt(struct boar_dataset *d, float *w)
{
	free(d->owned[WEIGHT_SLOT]);
	d->owned[WEIGHT_SLOT] = w;
	d->weight = w;
}

int boar_dataset_set_weights(boar_dataset *d, const float *w, uint64_t n,
			     boar_error *err)
{
	if (n != d->n_rows)
		return boar_fail(err, BOAR_EINVAL,
				 "%llu weights for %llu rows",
				 (unsigned long long)n,
				 (unsigned long long)d->n_rows);
	for (uint64_t r = 0; r < n; r++)
		if (!check_weight(w[r]))
			return boar_fail(err, BOAR_EINVAL,
					 "weight of row %llu is %g; weights "
					 "must be finite and >= 0",
					 (unsigned long long)r + 1, w[r]);
	float *copy = malloc((n ? n : 1) * sizeof *copy);
	if (!copy)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	memcpy(copy, w, n * sizeof *copy);
	adopt(d, copy);
	return 0;
}

int boar_dataset_load_weights(boar_dataset *d, const char *path,
			      boar_error *err)
{
	struct src_id id;
	int regular, bad = text_file_stat(path, &id, &regular, err);
	if (bad) /* a device (/dev/zero) would be read for ever */
		return bad;
	FILE *fp = fopen(path, "r");
	if (!fp)
		return boar_fail(err, BOAR_EIO, "%s: cannot open: %s", path,
				 strerror(errno));
	float *w = malloc((d->n_rows ? d->n_rows : 1) * sizeof *w);
	if (!w) {
		fclose(fp);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	char line[256];
	uint64_t n = 0, lineno = 0;
	int rc = 0;
	while (fgets(line, sizeof line, fp)) {
		lineno++;
		char *end;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue; /* blank lines, e.g. a trailing one */
		errno = 0;
		double v = strtod(line, &end);
		end += strspn(end, " \t\r\n");
		if (end == line || *end || errno || !check_weight((float)v)) {
			rc = boar_fail_line(err, BOAR_EPARSE, path, lineno,
					    "weight must be a finite number "
					    ">= 0");
			break;
		}
		if (n == d->n_rows) {
			rc = boar_fail_line(err, BOAR_EPARSE, path, lineno,
					    "more weights than the %llu rows",
					    (unsigned long long)d->n_rows);
			break;
		}
		w[n++] = (float)v;
	}
	if (!rc && ferror(fp))
		rc = boar_fail(err, BOAR_EIO, "%s: read error", path);
	if (!rc && n != d->n_rows)
		rc = boar_fail(err, BOAR_EPARSE,
			       "%s: %llu weights for %llu rows", path,
			       (unsigned long long)n,
			       (unsigned long long)d->n_rows);
	fclose(fp);
	if (rc) {
		free(w);
		return rc;
	}
	adopt(d, w);
	return 0;
}
