/* engine_caps.c - one table of what a run needs and who can do it.
 *
 * Each engine (and cluster training, a place that runs one) states its
 * capabilities as BOAR_CAP bits; the driver works out what the run needs
 * and refuses the first missing capability here, named from the one list
 * in engine_ops.h. Before this table the GPU refusals were written out in
 * three places, each with its own wording.
 */
#include "data/dataset.h"
#include "engine_ops.h"
#include "base/error.h"
#include "math/row_weight.h"
#include "model/model.h"

static const char *const cap_names[] = {
#define BOAR_CAP_NAME(name, what) what,
	BOAR_CAPS_MAP(BOAR_CAP_NAME)
#undef BOAR_CAP_NAME
};

unsigned boar_caps_needed(const struct boar_dataset *d, const boar_options *o,
			  const struct boar_model *m, int holdout)
{
	unsigned need = 0;
	if (d->task == BOAR_TASK_MF)
		need |= BOAR_CAP(MF);
	if (m && m->n_classes)
		need |= BOAR_CAP(MULTICLASS);
	if (holdout)
		need |= BOAR_CAP(SUBSET);
	if (o->deterministic)
		need |= BOAR_CAP(DETERMINISTIC);
	if (boar_rows_weighted(o, d->weight))
		need |= BOAR_CAP(WEIGHTS);
	if (o->init_model)
		need |= BOAR_CAP(WARM_START);
	if (o->early_stop)
		need |= BOAR_CAP(EARLY_STOP);
	if (d->task == BOAR_TASK_MF && o->mf_nonneg)
		need |= BOAR_CAP(MF_NONNEG);
	if (d->task == BOAR_TASK_MF &&
	    (o->l2_user != o->l2 || o->l2_item != o->l2))
		need |= BOAR_CAP(MF_L2_SPLIT);
	/* the model's loss (a warm start keeps it); an engine built before
	 * it would fit squared loss instead */
	if (d->task == BOAR_TASK_MF &&
	    (m ? m->mf_loss : o->mf_loss) == BOAR_MF_LOSS_ABSOLUTE)
		need |= BOAR_CAP(MF_ABSOLUTE);
	if (d->task == BOAR_TASK_LINEAR && o->bias_scale != 1.0)
		need |= BOAR_CAP(BIAS_SCALE);
	if (o->optimizer == BOAR_OPT_NORMALIZED)
		need |= BOAR_CAP(NORMALIZED);
	return need;
}

int boar_caps_check(unsigned need, unsigned have, const char *who,
		    const char *advice, boar_error *err)
{
	unsigned missing = need & ~have;
	for (int b = 0; b < BOAR_CAP_COUNT; b++)
		if (missing & (1u << b))
			return boar_fail(err, BOAR_EINVAL,
					 "%s does not support %s%s%s", who,
					 cap_names[b], advice ? "; " : "",
					 advice ? advice : "");
	return 0;
}
