/* model_io.c - model files: the binary format and the text export.
 *
 * Binary format, version 1 (little-endian, as every platform boar targets):
 *   header  64 bytes: "BOARMODL", u32 version, u32 header size, u32 task,
 *           u32 loss (a BOAR_LOSS_MAP code), u32 hash_bits, u32 rank,
 *           u32 has_bias, u32 n_classes, u64 dim, u64 n_items,
 *           f32 mu (MF: the global mean; linear: the loss's parameter,
 *           0 for a loss without one), u32 flags (bit 0: slot ids;
 *           bit 1: MF fitted the absolute loss, BOAR_MF_LOSS_ABSOLUTE)
 *   payload linear: w[dim + 1] (bias last); multiclass (n_classes = K > 0):
 *           w[(dim + 1) * K] feature-major, then the K class labels
 *           MF: P[dim * rank], Q[n_items * rank], then bu[dim], bi[n_items]
 *           when has_bias
 *   version 2 only: tagged sections (model_sections.h: how the data was
 *           read, optimizer state); a model without any is written as 1
 *   trailer u32 crc32 (zlib) of header, payload and sections, "BEND"
 * A reader checks magic, version, that the size is exactly what the header
 * implies, and the checksum, before believing anything.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/mem_limit.h"
#include "model.h"
#include "model_check.h"
#include "model_sections.h"

#define MODEL_MAGIC "BOARMODL"
#define MODEL_TRAILER "BEND"
#define MODEL_VERSION 2 /* 2: tagged sections (model_sections.h) */
#define MODEL_FLAG_SLOT_IDS 1u
#define MODEL_FLAG_MF_ABSOLUTE 2u

struct model_header {
	char magic[8];
	uint32_t version, header_size, task, loss, hash_bits, rank, has_bias,
		n_classes;
	uint64_t dim, n_items;
	float mu;
	uint32_t flags;
};
_Static_assert(sizeof(struct model_header) == 64, "header is 64 bytes");

struct section {
	float *data;
	uint64_t count;
};

/* The float arrays of a model, in file order. */
static int sections(const struct boar_model *m, struct section s[4])
{
	if (m->task == BOAR_TASK_LINEAR) {
		s[0] = (struct section){m->w, (m->dim + 1) * boar_model_width(m)};
		if (!m->n_classes)
			return 1;
		s[1] = (struct section){m->classes, m->n_classes};
		return 2;
	}
	s[0] = (struct section){m->P, m->dim * m->rank};
	s[1] = (struct section){m->Q, m->n_items * m->rank};
	if (!m->has_bias)
		return 2;
	s[2] = (struct section){m->bu, m->dim};
	s[3] = (struct section){m->bi, m->n_items};
	return 4;
}

int boar_model_save(const boar_model *m, const char *path, boar_error *err)
{
	struct model_header h;
	struct section s[4];
	boar_atomic_file f;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, MODEL_MAGIC, 8);
	uint64_t ext = boar_model_sections_size(m);
	h.version = ext ? 2 : 1;
	h.header_size = sizeof h;
	h.task = (uint32_t)m->task;
	h.loss = (uint32_t)m->loss;
	h.hash_bits = (uint32_t)m->hash_bits;
	h.rank = m->rank;
	h.has_bias = (uint32_t)m->has_bias;
	h.n_classes = m->n_classes;
	h.flags = (m->slot_ids ? MODEL_FLAG_SLOT_IDS : 0) |
		  (m->task == BOAR_TASK_MF && m->mf_loss == BOAR_MF_LOSS_ABSOLUTE
			   ? MODEL_FLAG_MF_ABSOLUTE : 0);
	h.dim = m->dim;
	h.n_items = m->n_items;
	h.mu = m->task == BOAR_TASK_MF ? m->mu : m->loss_param;

	int rc = boar_atomic_open(&f, path, err);
	if (rc)
		return rc;
	uLong crc = crc32(0L, (const Bytef *)&h, sizeof h);
	fwrite(&h, sizeof h, 1, f.fp);
	int n = sections(m, s);
	for (int k = 0; k < n; k++) {
		/* zlib's crc32 takes a uInt length: feed it in pieces. */
		const unsigned char *p = (const unsigned char *)s[k].data;
		uint64_t left = s[k].count * sizeof(float);
		while (left) {
			uInt step = left > (1u << 30) ? (1u << 30) : (uInt)left;
			crc = crc32(crc, p, step);
			fwrite(p, 1, step, f.fp);
			p += step;
			left -= step;
		}
	}
	if (ext && (rc = boar_model_sections_write(f.fp, &crc, m))) {
		boar_atomic_abort(&f);
		return boar_fail(err, rc, "%s: out of memory", path);
	}
	uint32_t c = (uint32_t)crc;
	fwrite(&c, sizeof c, 1, f.fp);
	fwrite(MODEL_TRAILER, 4, 1, f.fp);
	return boar_atomic_commit(&f, err);
}

static int corrupt(boar_error *err, const char *path, const char *why)
{
	return boar_fail(err, BOAR_ECORRUPT, "%s: corrupt model file: %s", path,
			 why);
}

static int read_all(FILE *fp, void *buf, uint64_t len)
{
	unsigned char *p = buf;
	while (len) {
		size_t step = len > (1u << 30) ? (1u << 30) : (size_t)len;
		if (fread(p, 1, step, fp) != step)
			return -1;
		p += step;
		len -= step;
	}
	return 0;
}

/* Checks the header h of the model file `path` (size bytes) field by
 * field: *floats = the weights it implies, *ext = the bytes of its
 * sections. @return 0 or a BOAR_E* code. */
static int check_header(const struct model_header *h, uint64_t size,
			const char *path, uint64_t *floats, uint64_t *ext,
			boar_error *err)
{
	if (h->version < 1 || h->version > MODEL_VERSION ||
	    h->header_size != sizeof *h)
		return boar_fail(err, BOAR_EFORMAT,
				 "%s: model format version %u; this build reads 1 to %d",
				 path, h->version, MODEL_VERSION);
	if (h->flags & ~(MODEL_FLAG_SLOT_IDS | MODEL_FLAG_MF_ABSOLUTE))
		return corrupt(err, path, "field flags has unknown bits");
	if ((h->flags & MODEL_FLAG_MF_ABSOLUTE) && h->task != BOAR_TASK_MF)
		return corrupt(err, path, "field flags has the MF loss bit "
			       "in a linear model");
	struct boar_model shape = {
		.task = (int)h->task, .loss = (int)h->loss, .hash_bits = (int)h->hash_bits,
		.slot_ids = (h->flags & MODEL_FLAG_SLOT_IDS) != 0, .dim = h->dim,
		.n_items = h->n_items, .rank = h->rank,
		.mu = h->task == BOAR_TASK_MF ? h->mu : 0.0f,
		.loss_param = h->task == BOAR_TASK_MF ? 0.0f : h->mu,
		.has_bias = (int)h->has_bias, .n_classes = h->n_classes};
	/* (A uint32 above INT_MAX becomes a negative int: still refused.) */
	int rc = boar_model_check_shape(&shape, path, err);
	if (rc)
		return rc;
	*floats = h->task == BOAR_TASK_LINEAR
			  ? (h->dim + 1) * (h->n_classes ? h->n_classes : 1) +
				    h->n_classes
			  : (h->dim + h->n_items) * h->rank +
				    (h->has_bias ? h->dim + h->n_items : 0);
	uint64_t base = sizeof *h + *floats * 4 + 8;
	*ext = 0;
	if (h->version >= 2 && size > base)
		*ext = size - base;
	if (size != base + *ext)
		return boar_fail(err, BOAR_ECORRUPT, "%s: corrupt model file: "
				 "size %llu bytes, but the header fields (dim, "
				 "n_items, rank, n_classes) imply %" PRIu64
				 "%s (truncated?)", path, (unsigned long long)size,
				 base, h->version >= 2 ? " or more" : "");
	/* a model larger than the machine can hold is refused with its size
	 * rather than dying in the allocator (the file is as large: its
	 * size was checked above) */
	return boar_memory_check(*floats * 4, 0, path, "the model", err);
}

/* The weights of m, then ext bytes of sections, then the trailer, from fp
 * (just past the header h), the checksum compared. */
static int read_body(FILE *fp, const struct model_header *h, uint64_t ext,
		     struct boar_model *m, const char *path, boar_error *err)
{
	struct section s[4];
	int n = sections(m, s), rc;
	uLong crc = crc32(0L, (const Bytef *)h, sizeof *h);
	for (int k = 0; k < n; k++) {
		uint64_t len = s[k].count * sizeof(float);
		if (read_all(fp, s[k].data, len))
			return corrupt(err, path, "short read");
		const unsigned char *p = (const unsigned char *)s[k].data;
		while (len) {
			uInt step = len > (1u << 30) ? (1u << 30) : (uInt)len;
			crc = crc32(crc, p, step);
			p += step;
			len -= step;
		}
	}
	if (ext && (rc = boar_model_sections_read(fp, ext, &crc, m, path, err)))
		return rc;
	uint32_t c;
	char trailer[4];
	if (fread(&c, 4, 1, fp) != 1 || fread(trailer, 4, 1, fp) != 1 ||
	    memcmp(trailer, MODEL_TRAILER, 4))
		return corrupt(err, path, "missing trailer");
	if (c != (uint32_t)crc)
		return corrupt(err, path, "checksum mismatch");
	return 0;
}

int boar_model_load(const char *path, boar_model **out, boar_error *err)
{
	struct model_header h;
	struct stat st;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return boar_fail(err, BOAR_EIO, "%s: cannot open: %s", path,
				 strerror(errno));
	if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(fp);
		return boar_fail(err, BOAR_EIO, "%s: not a regular file", path);
	}
	if (fread(&h, sizeof h, 1, fp) != 1 || memcmp(h.magic, MODEL_MAGIC, 8)) {
		fclose(fp);
		return boar_fail(err, BOAR_EFORMAT,
				 "%s: not a boar model file (bad magic)", path);
	}
	struct boar_model *m = NULL;
	uint64_t floats = 0, ext = 0;
	int rc = check_header(&h, (uint64_t)st.st_size, path, &floats, &ext, err);
	if (rc)
		goto out;
	m = h.n_classes ? boar_model_alloc_multiclass((int)h.loss, h.dim,
						      h.n_classes, NULL)
			: boar_model_alloc((int)h.task, (int)h.loss, h.dim,
					   h.n_items,
					   h.task == BOAR_TASK_MF ? h.rank : 0,
					   (int)h.has_bias);
	if (!m) {
		rc = boar_fail(err, BOAR_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	m->hash_bits = (int)h.hash_bits;
	m->slot_ids = (h.flags & MODEL_FLAG_SLOT_IDS) != 0;
	m->mf_loss = h.flags & MODEL_FLAG_MF_ABSOLUTE ? BOAR_MF_LOSS_ABSOLUTE
						      : BOAR_MF_LOSS_SQUARED;
	if (h.task == BOAR_TASK_MF)
		m->mu = h.mu;
	else
		m->loss_param = h.mu;
	if ((rc = read_body(fp, &h, ext, m, path, err)) ||
	    (rc = boar_model_check_values(m, path, err)))
		goto out;
	fclose(fp);
	*out = m;
	return 0;
out:
	fclose(fp);
	boar_model_free(m);
	return rc;
}

static const char *loss_name(int loss)
{
	const boar_loss_desc *l = boar_loss_describe(loss);
	return l ? l->name : "?";
}

static void export_factor_rows(FILE *fp, char tag, const float *F,
			       const float *bias, uint64_t rows, uint32_t rank)
{
	for (uint64_t r = 0; r < rows; r++) {
		fprintf(fp, "%c %" PRIu64 " %.9g", tag, r, bias ? bias[r] : 0.0);
		for (uint32_t f = 0; f < rank; f++)
			fprintf(fp, " %.9g", F[r * rank + f]);
		fputc('\n', fp);
	}
}

/* Multiclass: the class labels, the K biases, then one line per feature
 * with any non-zero weight: "feature w_1 ... w_K". */
static void export_multiclass(FILE *fp, const struct boar_model *m)
{
	uint32_t K = m->n_classes;
	fprintf(fp, "task linear\nloss %s\ndim %" PRIu64 "\nhash_bits %d\n",
		loss_name(m->loss), m->dim, m->hash_bits);
	fprintf(fp, "classes");
	for (uint32_t c = 0; c < K; c++)
		fprintf(fp, " %.9g", m->classes[c]);
	fprintf(fp, "\nbias");
	for (uint32_t c = 0; c < K; c++)
		fprintf(fp, " %.9g", m->w[m->dim * K + c]);
	fprintf(fp, "\n# %s weight-per-class (non-zero rows only)\n",
		m->hash_bits ? "slot" : "feature");
	for (uint64_t j = 0; j < m->dim; j++) {
		const float *wj = &m->w[j * K];
		uint32_t c = 0;
		while (c < K && wj[c] == 0.0f)
			c++;
		if (c == K)
			continue;
		fprintf(fp, "%" PRIu64, j + (m->hash_bits ? 0 : 1));
		for (c = 0; c < K; c++)
			fprintf(fp, " %.9g", wj[c]);
		fputc('\n', fp);
	}
}

int boar_model_export_text(const boar_model *m, const char *path,
			   boar_error *err)
{
	boar_atomic_file f;
	int rc = boar_atomic_open(&f, path, err);
	if (rc)
		return rc;
	FILE *fp = f.fp;
	fprintf(fp, "boar-model-text 1\n");
	if (m->task == BOAR_TASK_LINEAR && m->n_classes) {
		export_multiclass(fp, m);
	} else if (m->task == BOAR_TASK_LINEAR) {
		fprintf(fp, "task linear\nloss %s\ndim %" PRIu64
			    "\nhash_bits %d\nbias %.9g\n",
			loss_name(m->loss), m->dim, m->hash_bits, m->w[m->dim]);
		const boar_loss_desc *l = boar_loss_describe(m->loss);
		if (l && l->param[0])
			fprintf(fp, "%s %.9g\n", l->param, m->loss_param);
		/* Unhashed ids are written 1-based, as in the LIBSVM input;
		 * hashed ones as their slot. */
		fprintf(fp, "# %s weight (non-zero weights only)\n",
			m->hash_bits ? "slot" : "feature");
		for (uint64_t j = 0; j < m->dim; j++)
			if (m->w[j] != 0.0f)
				fprintf(fp, "%" PRIu64 " %.9g\n",
					j + (m->hash_bits ? 0 : 1), m->w[j]);
	} else {
		fprintf(fp, "task mf\nusers %" PRIu64 "\nitems %" PRIu64
			    "\nrank %u\nmu %.9g\n",
			m->dim, m->n_items, m->rank, m->mu);
		if (m->mf_loss == BOAR_MF_LOSS_ABSOLUTE)
			fprintf(fp, "mf_loss absolute\n");
		fprintf(fp, "# u USER bias factors... / i ITEM bias factors...\n");
		export_factor_rows(fp, 'u', m->P, m->has_bias ? m->bu : 0,
				   m->dim, m->rank);
		export_factor_rows(fp, 'i', m->Q, m->has_bias ? m->bi : 0,
				   m->n_items, m->rank);
	}
	return boar_atomic_commit(&f, err);
}
