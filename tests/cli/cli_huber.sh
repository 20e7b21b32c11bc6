#!/bin/sh
# --loss huber from the command line and in the cluster: on regression data
# with outliers (one row in ten pushed up by 30) a Huber model lands near
# the true weights where a squared-loss model does not, single-node and
# with two workers on one shard; the delta reaches the model file; a delta
# for another loss, or one that is not > 0, is refused with exit 2.
. net/tests/lib.sh
. tests/cli/lib/regression.sh

# y = 0.3 + sum_j w_j x_j, w_j = j/10 - 0.5 (j = 1..10), x_j in [-1, 1).
TRUE_W="j / 10 - 0.5"
lcg_data 7 3000 10 'y = 0.3 + m; if (r % 10 == 3) y += 30; print y line' \
	>"$T/out.svm"

# distance MODEL: Euclidean distance of its weights and bias from the truth.
distance() {
	weights_distance "$1" 0.3 10
}

OPTS="--threads 1 --epochs 20 --optimizer sgd --eta 0.02 --seed 3 --quiet"
"$BOAR" train $OPTS --loss squared -m "$T/sq.model" "$T/out.svm" ||
	fail "squared training"
"$BOAR" train $OPTS --loss huber -m "$T/hu.model" "$T/out.svm" ||
	fail "huber training"
sq=$(distance "$T/sq.model")
hu=$(distance "$T/hu.model")
echo "distance to the truth: squared $sq, huber $hu"
at_most "huber's distance" "$hu" 0.3
at_least "squared's distance" "$sq" 1
"$BOAR" export -m "$T/hu.model" | grep -qx "loss huber" ||
	fail "the export does not say loss huber"
"$BOAR" export -m "$T/hu.model" | grep -qx "delta 1" ||
	fail "the export does not show the default delta 1"
"$BOAR" train $OPTS --loss huber --huber-delta 0.5 -m "$T/h5.model" \
	"$T/out.svm" || fail "huber with --huber-delta 0.5"
"$BOAR" export -m "$T/h5.model" | grep -qx "delta 0.5" ||
	fail "the export does not show delta 0.5"
"$BOAR" eval -m "$T/hu.model" "$T/out.svm" 2>&1 | grep -q "huber loss" ||
	fail "boar eval does not name the huber loss"

expect_refused "a delta for squared loss" \
	"$BOAR" train --loss squared --huber-delta 2 "$T/out.svm"
[ "$rc" = 2 ] || fail "a delta for squared loss: exit $rc, expected 2"
expect_message "a delta for squared loss" "huber-delta is for --loss huber"
expect_refused "delta 0" "$BOAR" train --loss huber --huber-delta 0 "$T/out.svm"
[ "$rc" = 2 ] || fail "delta 0: exit $rc, expected 2"
"$BOAR" train --help | grep -q -- "--huber-delta" ||
	fail "--help does not list --huber-delta"
"$BOAR" train --help | grep -Eq "^  huber +robust regression" ||
	fail "--help does not list the huber loss"

# The cluster: one shard, two workers, the same data split between them.
cluster_fits huber "$T/out.svm" 0.5 $OPTS
exit 0
