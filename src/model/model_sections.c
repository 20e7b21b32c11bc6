/* model_sections.c - a model file's tagged sections (model_sections.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "data/input_spec.h"
#include "math/step.h"
#include "model.h"
#include "model_sections.h"
#include "train_state.h"

#define SECTION_HEAD 16 /* tag, version, length */
#define STATE_FIXED 32  /* epochs, optimizer, eta, eta_decay, n */

/* Sums one AdaGrad state of model m has: the engine's layout. */
static uint64_t state_sums(const struct boar_model *m)
{
	if (m->task == BOAR_TASK_LINEAR)
		return (m->dim + 1) * boar_model_width(m);
	return m->dim + m->n_items;
}

static void put(FILE *fp, uLong *crc, const void *p, uint64_t len)
{
	const unsigned char *b = p;
	while (len) {
		uInt step = len > (1u << 30) ? (1u << 30) : (uInt)len;
		*crc = crc32(*crc, b, step);
		fwrite(b, 1, step, fp);
		b += step;
		len -= step;
	}
}

static void put_head(FILE *fp, uLong *crc, const char tag[4], uint32_t version,
		     uint64_t len)
{
	put(fp, crc, tag, 4);
	put(fp, crc, &version, 4);
	put(fp, crc, &len, 8);
}

uint64_t boar_model_sections_size(const struct boar_model *m)
{
	uint64_t n = 0;
	char *buf;
	size_t len;
	if (m->input && !boar_input_spec_encode(m->input, &buf, &len)) {
		n += SECTION_HEAD + len;
		free(buf);
	}
	if (m->state)
		n += SECTION_HEAD + STATE_FIXED + m->state->n_accum * 4;
	return n;
}

int boar_model_sections_write(FILE *fp, uLong *crc, const struct boar_model *m)
{
	if (m->input) {
		char *buf;
		size_t len;
		if (boar_input_spec_encode(m->input, &buf, &len))
			return BOAR_ENOMEM;
		put_head(fp, crc, "INPT", 1, len);
		put(fp, crc, buf, len);
		free(buf);
	}
	if (m->state) {
		const struct boar_train_state *s = m->state;
		uint32_t u[2] = { s->epochs, (uint32_t)s->optimizer };
		double d[2] = { s->eta, s->eta_decay };
		put_head(fp, crc, "STAT", 1,
			 STATE_FIXED + s->n_accum * 4);
		put(fp, crc, u, sizeof u);
		put(fp, crc, d, sizeof d);
		put(fp, crc, &s->n_accum, 8);
		put(fp, crc, s->accum, s->n_accum * 4);
	}
	return 0;
}

static int get(FILE *fp, uLong *crc, void *p, uint64_t len)
{
	unsigned char *b = p;
	while (len) {
		size_t step = len > (1u << 30) ? (1u << 30) : (size_t)len;
		if (fread(b, 1, step, fp) != step)
			return -1;
		*crc = crc32(*crc, b, (uInt)step);
		b += step;
		len -= step;
	}
	return 0;
}

static int bad(boar_error *err, int code, const char *path, const char *why)
{
	return boar_fail(err, code, "%s: %s model file: %s", path,
			 code == BOAR_EFORMAT ? "unreadable" : "corrupt", why);
}

static int read_input(FILE *fp, uint64_t len, uLong *crc, struct boar_model *m,
		      const char *path, boar_error *err)
{
	char why[200] = "";
	if (m->input || len > (1u << 20))
		return bad(err, BOAR_ECORRUPT, path, "bad input-options section");
	char *buf = malloc(len ? len : 1);
	if (!buf)
		return boar_fail(err, BOAR_ENOMEM, "%s: out of memory", path);
	int rc = get(fp, crc, buf, len) ? BOAR_ECORRUPT : 0;
	if (rc)
		snprintf(why, sizeof why, "short read");
	else
		rc = boar_input_spec_decode(buf, len, &m->input, why, sizeof why);
	free(buf);
	if (rc == BOAR_ENOMEM)
		return boar_fail(err, rc, "%s: out of memory", path);
	return rc ? bad(err, rc, path, why) : 0;
}

static int read_state(FILE *fp, uint64_t len, uLong *crc, struct boar_model *m,
		      const char *path, boar_error *err)
{
	uint32_t u[2];
	double d[2];
	uint64_t n;
	if (m->state || len < STATE_FIXED || get(fp, crc, u, 8) ||
	    get(fp, crc, d, 16) || get(fp, crc, &n, 8))
		return bad(err, BOAR_ECORRUPT, path, "bad optimizer-state section");
	if (!boar_optimizer_name((int)u[1]) || u[1] == BOAR_OPT_AUTO ||
	    !(d[0] > 0 && isfinite(d[0])) || !(d[1] > 0 && d[1] <= 1) ||
	    n != (len - STATE_FIXED) / 4 || (len - STATE_FIXED) % 4 ||
	    (n && n != state_sums(m)) ||
	    boar_opt_accumulates((int)u[1]) != (n != 0))
		return bad(err, BOAR_ECORRUPT, path,
			   "optimizer state out of range or not of the "
			   "model's shape");
	struct boar_train_state *s = calloc(1, sizeof *s);
	if (!s || (n && !(s->accum = malloc(n * 4)))) {
		boar_train_state_free(s);
		return boar_fail(err, BOAR_ENOMEM, "%s: out of memory", path);
	}
	m->state = s; /* freed with m */
	s->epochs = u[0];
	s->optimizer = (int)u[1];
	s->eta = d[0];
	s->eta_decay = d[1];
	s->n_accum = n;
	if (get(fp, crc, s->accum, n * 4))
		return bad(err, BOAR_ECORRUPT, path, "short read");
	for (uint64_t k = 0; k < n; k++)
		if (!(s->accum[k] >= 0 && isfinite(s->accum[k])))
			return bad(err, BOAR_ECORRUPT, path,
				   "optimizer state holds a negative or "
				   "non-finite sum");
	return 0;
}

int boar_model_sections_read(FILE *fp, uint64_t len, uLong *crc,
			     struct boar_model *m, const char *path,
			     boar_error *err)
{
	while (len) {
		char tag[4];
		uint32_t version;
		uint64_t n;
		if (len < SECTION_HEAD || get(fp, crc, tag, 4) ||
		    get(fp, crc, &version, 4) || get(fp, crc, &n, 8) ||
		    n > len - SECTION_HEAD)
			return bad(err, BOAR_ECORRUPT, path,
				   "section runs past the end of the file");
		len -= SECTION_HEAD + n;
		int known = !memcmp(tag, "INPT", 4) || !memcmp(tag, "STAT", 4);
		if (!known || version != 1) {
			char why[96];
			snprintf(why, sizeof why,
				 "section '%.4s' version %u (this build reads "
				 "INPT and STAT version 1)",
				 known ? tag : "????", version);
			return bad(err, BOAR_EFORMAT, path, why);
		}
		int rc = !memcmp(tag, "INPT", 4)
				 ? read_input(fp, n, crc, m, path, err)
				 : read_state(fp, n, crc, m, path, err);
		if (rc)
			return rc;
	}
	return 0;
}
