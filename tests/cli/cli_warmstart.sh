#!/bin/sh
# Warm start: --init-model MODEL continues training a saved model. Two
# epochs then three more from the saved model reach a test loss no worse
# than the two-epoch model's; the model's loss and hashing are kept
# without being repeated; data with features the model never saw is fine;
# a model of the wrong task, a contradicting --loss or --hash-bits, and a
# class the model does not know are refused with a clear message.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read eval --json)"

A=datasets/a9a
AT=datasets/a9a.t
loss_of() { # MODEL: test log loss on a9a.t
	"$BOAR" eval --json -m "$1" "$AT" >"$T/ev" || fail "eval $1 exited $?"
	json_field "$T/ev" test_loss
}

# SGD with a small step: after 2 epochs the model is still short of the
# optimum, so 3 more must get closer.
"$BOAR" train --quiet --threads 1 --optimizer sgd --eta 0.02 --epochs 2 \
	-m "$T/m2" "$A" || fail "train exited $?"
"$BOAR" train --threads 1 --optimizer sgd --eta 0.02 --epochs 3 \
	--init-model "$T/m2" -m "$T/m5" "$A" 2>"$T/err" ||
	{ cat "$T/err"; fail "warm start exited $?"; }
grep -q "from $T/m2" "$T/err" ||
	{ cat "$T/err"; fail "the summary does not name the initial model"; }
l2=$(loss_of "$T/m2")
l5=$(loss_of "$T/m5")
echo "a9a.t log loss (sgd): 2 epochs $l2, then 3 more from the saved model $l5"
at_most "test loss after warm start" "$l5" "$l2"
cmp -s "$T/m2" "$T/m5" && fail "warm start did not change the model"

# AdaGrad (the default) is at a9a's optimum after 2 epochs, and its step
# sizes start afresh on a warm start (the model file keeps the weights, not
# the accumulated gradients): the loss may wobble, by a little.
"$BOAR" train --quiet --threads 1 --epochs 2 -m "$T/a2" "$A" || fail "train exited $?"
"$BOAR" train --quiet --threads 1 --epochs 3 --init-model "$T/a2" -m "$T/a5" "$A" ||
	fail "adagrad warm start exited $?"
la2=$(loss_of "$T/a2")
la5=$(loss_of "$T/a5")
echo "a9a.t log loss (adagrad): 2 epochs $la2, then 3 more $la5"
at_most "adagrad: test loss after warm start" "$la5" \
	"$(awk -v a="$la2" 'BEGIN { print a + 0.002 }')"

# The initial model's loss is kept without --loss; a different one is refused.
"$BOAR" train --quiet --threads 1 --epochs 1 --loss hinge -m "$T/h1" "$A" ||
	fail "hinge train exited $?"
"$BOAR" train --quiet --threads 1 --epochs 1 --init-model "$T/h1" -m "$T/h2" "$A" ||
	fail "hinge warm start exited $?"
"$BOAR" export -m "$T/h2" | grep -qx 'loss hinge' ||
	fail "warm start from a hinge model did not keep hinge loss"
expect_refused "--loss against the initial model" "$BOAR" train --loss logistic \
	--init-model "$T/h1" "$A"
expect_message "--loss against the initial model" "hinge loss"
[ "$rc" = 2 ] || fail "--loss against the initial model: expected exit 2, got $rc"

# Hashing comes from the model; a different --hash-bits is refused.
"$BOAR" train --quiet --epochs 1 --hash-bits 12 -m "$T/hb" "$A" || fail "hashed train exited $?"
"$BOAR" train --quiet --epochs 1 --init-model "$T/hb" -m "$T/hb2" "$A" ||
	fail "warm start of a hashed model exited $?"
"$BOAR" export -m "$T/hb2" | grep -qx 'hash_bits 12' || fail "warm start lost the hashing"
expect_refused "--hash-bits against the initial model" "$BOAR" train --hash-bits 10 \
	--init-model "$T/hb" "$A"
expect_message "--hash-bits against the initial model" "hash-bits 12"

# New data with features the model never saw (yesterday's model, today's data).
awk '{ line = $1; for (i = 2; i <= NF; i++) { split($i, f, ":"); if (f[1] <= 60) line = line " " $i } print line }' \
	"$A" >"$T/narrow"
"$BOAR" train --quiet --threads 1 --epochs 2 -m "$T/n2" "$T/narrow" || fail "narrow train exited $?"
"$BOAR" train --quiet --threads 1 --epochs 2 --init-model "$T/n2" -m "$T/n4" "$A" ||
	fail "warm start on wider data exited $?"
ln=$(loss_of "$T/n2")
lw=$(loss_of "$T/n4")
at_most "test loss after widening the features" "$lw" "$ln"

# The wrong task: a matrix-factorization model for a LIBSVM file and back.
awk 'BEGIN { srand(2); for (i = 0; i < 2000; i++)
	printf "%d %d %d\n", 1 + int(rand() * 40), 1 + int(rand() * 30), 1 + int(rand() * 5) }' >"$T/r.txt"
"$BOAR" train --quiet --task mf --rank 4 --epochs 1 -m "$T/mf" "$T/r.txt" || fail "mf train exited $?"
expect_refused "an MF model for LIBSVM data" "$BOAR" train --init-model "$T/mf" "$A"
expect_message "an MF model for LIBSVM data" "matrix-factorization model.*linear data"
expect_refused "a linear model for ratings" "$BOAR" train --init-model "$T/m2" "$T/r.txt"
expect_message "a linear model for ratings" "linear model.*ratings"
"$BOAR" train --quiet --epochs 1 --init-model "$T/mf" -m "$T/mf2" "$T/r.txt" ||
	fail "mf warm start exited $?"

# Multiclass: the classes are the model's; a new label is refused.
awk 'BEGIN { srand(4); for (i = 0; i < 900; i++) { c = 1 + i % 3; print c, c ":1", 4 + int(rand() * 5) ":1" } }' >"$T/c3"
"$BOAR" train --quiet --epochs 2 -m "$T/c3.m" "$T/c3" || fail "3-class train exited $?"
"$BOAR" train --quiet --epochs 1 --init-model "$T/c3.m" -m "$T/c3.m2" "$T/c3" ||
	fail "3-class warm start exited $?"
{ cat "$T/c3"; echo "4 4:1"; } >"$T/c4"
expect_refused "a class the initial model lacks" "$BOAR" train --init-model "$T/c3.m" "$T/c4"
expect_message "a class the initial model lacks" "label 4"

expect_refused "a missing initial model" "$BOAR" train --init-model "$T/none" "$A"
expect_message "a missing initial model" "none"
exit 0
