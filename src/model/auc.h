/* auc.h - the area under the ROC curve of a binary test set's scores. */
#ifndef BOAR_MODEL_AUC_H
#define BOAR_MODEL_AUC_H

#include <stdint.h>
#include <string.h>

/* A score as a word that sorts as the score does (-0 as +0: they are
 * one score). Not for NaN, which has no place. */
static inline uint64_t auc_key(double score)
{
	uint64_t b;
	if (score == 0)
		score = 0; /* -0 too */
	memcpy(&b, &score, sizeof b);
	return b >> 63 ? ~b : b | 1ULL << 63;
}

/* The AUC of n scores (their auc_key in key[0..n)) against positive[0..n)
 * (0 or 1): the chance that a positive scores above a negative, a tie
 * counting half (the Mann-Whitney statistic, tied scores at their mean
 * rank). NAN when one class is absent. key[] is clobbered; tmp holds n
 * words. */
double auc_of_keys(uint64_t *key, const uint8_t *positive, uint64_t n,
		   uint64_t *tmp);

#endif
