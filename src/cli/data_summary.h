/* data_summary.h - what `boar train` says about the data it read: the
 * one-line description (rows, the features actually seen rather than the
 * hash space, non-zeros) and warnings about labels that cannot train a
 * useful classifier. */
#ifndef BOAR_CLI_DATA_SUMMARY_H
#define BOAR_CLI_DATA_SUMMARY_H

#include "boar.h"

/* "train FILE: 1999 rows, 2788 features seen (of 262144 slots), ..." on
 * stderr. */
void data_describe(const char *what, const char *path, const boar_dataset *d,
		   double secs);

/* Distinct feature ids the rows of a linear dataset use. */
uint64_t data_features_seen(const boar_dataset *d);

/* A warning on stderr when every training label is the same: the model
 * can then only ever predict that class. @return 1 when it warned. */
int data_warn_one_class(const char *path, const boar_dataset *d, int loss);

#endif
