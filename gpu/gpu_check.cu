/* gpu_check.cu - what the GPU engine accepts, checked before anything is
 * allocated: the devices asked for, and the data, options and model
 * (task, shapes, rank, classes). Each refusal is one message naming the
 * field.
 */
#include <stdint.h>

#include "gpu_ctx.h"
#include "math/loss.h"

int gpu_devices_check(int first, int n, boar_error *err)
{
	int present = 0;
	cudaError_t e = cudaGetDeviceCount(&present);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		return boar_fail(err, BOAR_ENODEVICE,
				 "no usable GPU: no CUDA device or driver found "
				 "(cudaGetDeviceCount: %s)",
				 cudaGetErrorString(e));
	}
	if (first >= 0 && first + n <= present)
		return 0;
	if (n == 1)
		return boar_fail(err, BOAR_ENODEVICE,
				 "GPU: device %d requested, %d present", first,
				 present);
	return boar_fail(err, BOAR_ENODEVICE,
			 "GPU: n_gpus %d from gpu_id %d asks for devices %d..%d; "
			 "%d present",
			 n, first, first, first + n - 1, present);
}

/* A linear model's classes: none for a binary or regression loss, else
 * 2..BOAR_MAX_CLASSES of them, whose weights the device addresses with
 * 32-bit keys (boar_gpu_set_weights), for softmax or a one-vs-rest
 * classification loss. */
static int check_classes(const struct boar_model *m, boar_error *err)
{
	int kind = boar_loss_kind(m->loss);
	if (!m->n_classes) {
		if (kind == BOAR_LOSS_KIND_MULTINOMIAL)
			return boar_fail(err, BOAR_EINVAL,
					 "GPU: a softmax model without classes");
		return 0;
	}
	if (m->n_classes < 2 || m->n_classes > BOAR_MAX_CLASSES || !m->classes)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: %u classes (2..%d with their labels)",
				 m->n_classes, BOAR_MAX_CLASSES);
	if (kind == BOAR_LOSS_KIND_REGRESSION)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: %u classes under a regression loss",
				 m->n_classes);
	if ((m->dim + 1) * m->n_classes > UINT32_MAX)
		return boar_fail(err, BOAR_EINVAL,
				 "GPU: %llu features x %u classes is above "
				 "2^32 weights",
				 (unsigned long long)m->dim, m->n_classes);
	return 0;
}

int gpu_check_shapes(const struct boar_dataset *d, const boar_options *o,
		     const struct boar_model *m, boar_error *err)
{
	int rc;
	if (!d || !o || !m)
		return boar_fail(err, BOAR_EINVAL, "GPU: missing dataset, options or model");
	if (d->task != m->task)
		return boar_fail(err, BOAR_EMISMATCH,
				 "GPU: dataset task %d but model task %d",
				 d->task, m->task);
	if (d->task == BOAR_TASK_LINEAR) {
		if (d->dim > m->dim)
			return boar_fail(err, BOAR_EMISMATCH,
					 "GPU: data has %llu features, model %llu",
					 (unsigned long long)d->dim,
					 (unsigned long long)m->dim);
		if (m->dim > (1ULL << 32))
			return boar_fail(err, BOAR_EINVAL,
					 "GPU: dimension %llu above 2^32",
					 (unsigned long long)m->dim);
		if (m->loss < 0 || m->loss >= BOAR_LOSS_COUNT)
			return boar_fail(err, BOAR_EINVAL, "GPU: unknown loss %d",
					 m->loss);
		if ((rc = check_classes(m, err)))
			return rc;
		if (!m->w)
			return boar_fail(err, BOAR_EINVAL, "GPU: model has no weights");
	} else if (d->task == BOAR_TASK_MF) {
		if (d->dim > m->dim || d->n_items > m->n_items)
			return boar_fail(err, BOAR_EMISMATCH,
					 "GPU: ratings need %llu users x %llu items, model has %llu x %llu",
					 (unsigned long long)d->dim,
					 (unsigned long long)d->n_items,
					 (unsigned long long)m->dim,
					 (unsigned long long)m->n_items);
		if (m->rank < 1 || m->rank > GPU_MF_MAX_RANK)
			return boar_fail(err, BOAR_EINVAL,
					 "GPU: rank %u outside 1..%d", m->rank,
					 GPU_MF_MAX_RANK);
		if (m->has_bias && (!m->bu || !m->bi))
			return boar_fail(err, BOAR_EINVAL, "GPU: model lacks biases");
	} else {
		return boar_fail(err, BOAR_EINVAL, "GPU: unknown task %d", d->task);
	}
	return 0;
}
