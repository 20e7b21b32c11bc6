/* model_check.c - what a loaded model must satisfy before anything uses it.
 *
 * A model file's checksum only proves the bytes are the ones written, not
 * that the writer was boar: a file edited and re-checksummed, or written by
 * another program, can claim any shape and hold any floats. A NaN weight
 * makes every score NaN (and used to hang the AUC), a duplicate class label
 * makes predictions ambiguous, softmax on a binary model has no sweep. So
 * every loader runs the shape checks before allocating and the value checks
 * after reading, and each failure names the file and the field.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "base/error.h"
#include "math/loss.h"
#include "model.h"
#include "model_check.h"

static int bad_field(boar_error *err, const char *path, const char *field,
		     const char *why)
{
	return boar_fail(err, BOAR_ECORRUPT, "%s: corrupt model file: field "
			 "%s %s", path, field, why);
}

static int check_linear_shape(const struct boar_model *m, const char *path,
			      boar_error *err)
{
	if (m->rank)
		return bad_field(err, path, "rank", "is not 0 in a linear model");
	if (m->n_items)
		return bad_field(err, path, "n_items",
				 "is not 0 in a linear model");
	if (m->has_bias)
		return bad_field(err, path, "has_bias",
				 "is set in a linear model (its bias is a "
				 "weight)");
	if (m->n_classes == 1 || m->n_classes > BOAR_MAX_CLASSES)
		return bad_field(err, path, "n_classes",
				 "is not 0 (binary/regression) or 2..1024");
	int kind = boar_loss_kind(m->loss);
	if (m->n_classes && kind == BOAR_LOSS_KIND_REGRESSION)
		return bad_field(err, path, "loss",
				 "is a regression loss on a multiclass model");
	if (!m->n_classes && kind == BOAR_LOSS_KIND_MULTINOMIAL)
		return bad_field(err, path, "loss",
				 "is softmax on a binary/regression model "
				 "(n_classes 0)");
	/* A linear model keeps its loss's parameter in the header's mu. */
	if (boar_loss_describe(m->loss)->param[0]
		    ? !boar_loss_param_ok(m->loss, m->loss_param)
		    : m->loss_param != 0.0f)
		return bad_field(err, path, "mu (the loss's parameter)",
				 "is not in range for a loss with a parameter "
				 "(> 0; quantile's tau < 1), or "
				 "0 for one without");
	if (m->dim > UINT32_MAX + 1ULL)
		return bad_field(err, path, "dim", "is over 2^32");
	if (m->hash_bits && m->dim != 1ULL << m->hash_bits)
		return bad_field(err, path, "dim",
				 "is not 2^hash_bits in a hashed model");
	return 0;
}

static int check_mf_shape(const struct boar_model *m, const char *path,
			  boar_error *err)
{
	if (m->loss != BOAR_LOSS_SQUARED)
		return bad_field(err, path, "loss",
				 "is not squared in a factorization model");
	if (m->rank == 0 || m->rank > BOAR_MODEL_MAX_RANK)
		return bad_field(err, path, "rank", "is not in 1..65536");
	if (m->n_classes)
		return bad_field(err, path, "n_classes",
				 "is not 0 in a factorization model");
	if (m->hash_bits || m->slot_ids)
		return bad_field(err, path, "hash_bits",
				 "is set in a factorization model");
	if (m->dim > UINT32_MAX + 1ULL)
		return bad_field(err, path, "dim (users)", "is over 2^32");
	if (m->n_items > UINT32_MAX + 1ULL)
		return bad_field(err, path, "n_items", "is over 2^32");
	return 0;
}

int boar_model_check_shape(const struct boar_model *m, const char *path,
			   boar_error *err)
{
	if (m->task != BOAR_TASK_LINEAR && m->task != BOAR_TASK_MF)
		return bad_field(err, path, "task", "is not linear (1) or mf (2)");
	if (!boar_loss_describe(m->loss))
		return bad_field(err, path, "loss", "is not a known loss code");
	if (m->hash_bits < 0 || m->hash_bits > 32)
		return bad_field(err, path, "hash_bits", "is over 32");
	if (m->has_bias < 0 || m->has_bias > 1)
		return bad_field(err, path, "has_bias", "is not 0 or 1");
	if (!isfinite(m->mu))
		return bad_field(err, path, "mu", "is not finite");
	return m->task == BOAR_TASK_LINEAR ? check_linear_shape(m, path, err)
					   : check_mf_shape(m, path, err);
}

/* Index of the first non-finite float, or n. */
static uint64_t first_non_finite(const float *a, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (!isfinite(a[i]))
			return i;
	return n;
}

static int check_finite(const float *a, uint64_t n, const char *path,
			const char *field, boar_error *err)
{
	uint64_t i = first_non_finite(a, n);
	if (i == n)
		return 0;
	return boar_fail(err, BOAR_ECORRUPT, "%s: corrupt model file: field "
			 "%s[%" PRIu64 "] is %g (weights must be finite)",
			 path, field, i, (double)a[i]);
}

static int check_classes(const struct boar_model *m, const char *path,
			 boar_error *err)
{
	int rc = check_finite(m->classes, m->n_classes, path, "classes", err);
	if (rc)
		return rc;
	for (uint32_t c = 1; c < m->n_classes; c++)
		if (!(m->classes[c] > m->classes[c - 1]))
			return boar_fail(err, BOAR_ECORRUPT,
					 "%s: corrupt model file: field "
					 "classes[%u] = %g %s classes[%u]",
					 path, c, (double)m->classes[c],
					 m->classes[c] == m->classes[c - 1]
						 ? "duplicates"
						 : "is below",
					 c - 1);
	return 0;
}

int boar_model_check_values(const struct boar_model *m, const char *path,
			    boar_error *err)
{
	if (m->task == BOAR_TASK_LINEAR) {
		int rc = check_finite(m->w, (m->dim + 1) * boar_model_width(m),
				      path, "weights", err);
		return rc ? rc : check_classes(m, path, err);
	}
	int rc = check_finite(m->P, m->dim * m->rank, path, "P (user factors)",
			      err);
	if (!rc)
		rc = check_finite(m->Q, m->n_items * m->rank, path,
				  "Q (item factors)", err);
	if (!rc && m->has_bias)
		rc = check_finite(m->bu, m->dim, path, "bu (user biases)", err);
	if (!rc && m->has_bias)
		rc = check_finite(m->bi, m->n_items, path, "bi (item biases)",
				  err);
	return rc;
}
