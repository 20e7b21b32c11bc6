/* cv.h - `boar train --cv K`: K-fold cross-validation (LIBLINEAR's and
 * LIBMF's -v). The rows are dealt into K folds by a hash of (seed, row),
 * the same at any thread count; each fold is held out once while a model
 * with the given options trains on the other K-1, and its test metrics are
 * reported, then their mean and standard deviation. No model is saved. */
#ifndef BOAR_CLI_CV_H
#define BOAR_CLI_CV_H

#include "boar.h"

/* Runs the K folds on d with options o (o->test must be NULL); prints a
 * line per fold and the summary on stdout (one JSON object per fold and
 * one for the mean with json). @return the process exit status. */
int cv_run(const boar_dataset *d, const boar_options *o, int k, int json,
	   const char *path);

#endif
