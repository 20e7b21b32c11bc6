#!/bin/sh
# --mf-loss mae (LIBMF's -f 1) from the command line: on ratings where one
# in seven is an outlier pushed up by 15, a model trained for MAE has a
# test MAE well below a squared-loss model's (whose mean the outliers
# drag); eval names the absolute loss (its value is the MAE); the model
# file keeps the loss (export says so, a warm start continues it and
# refuses --mf-loss squared with exit 2); --search judges by the MAE and
# --cv reports it; the file's flag bit for it is refused on a linear
# model (exit 1); --mf-loss on linear data and an unknown value are
# refused with exit 2. (The GPU's agreement with the CPU is
# test_gpu_mf_loss'.)
. tests/cli/lib/common.sh

# gen SEED N: 120 users x 90 items, 3 + P[u].Q[i] + U(-0.3, 0.3), P and Q
# of rank 3 in U(-1, 1) (fixed), one rating in seven + 15.
gen() {
	awk -v seed="$1" -v n="$2" '
	function unif() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }
	BEGIN {
	s = 3
	for (k = 0; k < 120 * 3; k++) P[k] = 2 * unif() - 1
	for (k = 0; k < 90 * 3; k++) Q[k] = 2 * unif() - 1
	s = seed
	for (k = 0; k < n; k++) {
		u = int(unif() * 120); i = int(unif() * 90)
		r = 3 + 0.6 * unif() - 0.3
		for (f = 0; f < 3; f++) r += P[u * 3 + f] * Q[i * 3 + f]
		if (int(unif() * 7) == 0) r += 15
		print u, i, r
	}}'
}
gen 11 15000 >"$T/tr.txt"
gen 12 4000 >"$T/te.txt"

OPTS="--rank 3 --epochs 20 --early-stop 0 --threads 1 --seed 9 --quiet"
# mae MODEL: the test MAE from boar eval's summary.
mae() {
	"$BOAR" eval -m "$1" "$T/te.txt" >"$T/eval" 2>&1 || { cat "$T/eval"; fail "eval $1"; }
	sed -n 's/.* MAE \([0-9.]*\) .*/\1/p' "$T/eval"
}
"$BOAR" train $OPTS -m "$T/sq.model" "$T/tr.txt" || fail "squared training"
"$BOAR" train $OPTS --mf-loss mae -m "$T/ab.model" "$T/tr.txt" ||
	fail "--mf-loss mae training"
sq=$(mae "$T/sq.model")
ab=$(mae "$T/ab.model")
cat "$T/eval"
echo "test MAE: squared loss $sq, --mf-loss mae $ab"
at_most "the MAE model's test MAE" "$ab" 2.6
at_least "squared's test MAE over the MAE model's" \
	"$(awk -v a="$ab" -v s="$sq" 'BEGIN { print s / a }')" 1.25
grep -Eq "absolute loss \(MAE\) $ab" "$T/eval" ||
	fail "eval does not report the absolute loss as the MAE"
"$BOAR" export -m "$T/ab.model" | grep -qx "mf_loss absolute" ||
	fail "the export does not say mf_loss absolute"
"$BOAR" export -m "$T/sq.model" | grep -q "mf_loss" &&
	fail "a squared-loss export names an mf_loss"

# A warm start continues the model's loss; the other one is refused.
"$BOAR" train $OPTS --epochs 2 --init-model "$T/ab.model" -m "$T/ab2.model" \
	"$T/tr.txt" || fail "warm start from the MAE model"
"$BOAR" export -m "$T/ab2.model" | grep -qx "mf_loss absolute" ||
	fail "the warm start lost the absolute loss"
expect_refused "--mf-loss squared on an MAE model" "$BOAR" train \
	--mf-loss squared --init-model "$T/ab.model" "$T/tr.txt"
[ "$rc" = 2 ] || fail "--mf-loss squared on an MAE model: exit $rc"
expect_message "--mf-loss squared on an MAE model" "trained for mae"

# --search judges MF for MAE by the MAE (its loss), and --cv reports it
"$BOAR" train $OPTS --epochs 3 --mf-loss mae --search 'eta=0.02,0.08' \
	--holdout 0.2 --json "$T/tr.txt" >"$T/search.json" || fail "--search exited $?"
[ "$(json_field "$T/search.json" metric)" = mae ] ||
	{ cat "$T/search.json"; fail "--search does not judge by the MAE"; }
"$BOAR" train $OPTS --epochs 3 --mf-loss mae --cv 2 "$T/tr.txt" >"$T/cv" ||
	fail "--cv exited $?"
grep -q "mae [0-9.]* +- " "$T/cv" || { cat "$T/cv"; fail "--cv reports no MAE"; }

printf '1 1:1\n-1 2:1\n' >"$T/lin.svm"
# The loss is bit 1 of the header's flags: set on a squared-loss model it
# makes an MAE model; on a linear model, or beside an unknown bit, the
# file is refused as corrupt.
if have_python; then
	"$BOAR" train --quiet -m "$T/lin.model" "$T/lin.svm" || fail "linear training"
	python3 tests/cli/lib/forge_model.py "$T/sq.model" "$T/sq2.model" flags=2
	"$BOAR" export -m "$T/sq2.model" | grep -qx "mf_loss absolute" ||
		fail "flags bit 1 does not read as the absolute loss"
	python3 tests/cli/lib/forge_model.py "$T/lin.model" "$T/lin2.model" flags=2
	expect_refused "the MF loss bit on a linear model" "$BOAR" eval -m "$T/lin2.model" "$T/lin.svm"
	[ "$rc" = 1 ] || fail "the MF loss bit on a linear model: exit $rc, expected 1"
	expect_message "the MF loss bit on a linear model" "lin2.model: corrupt model file: field flags"
	python3 tests/cli/lib/forge_model.py "$T/sq.model" "$T/sq4.model" flags=6
	expect_refused "flags bit 2" "$BOAR" eval -m "$T/sq4.model" "$T/te.txt"
	expect_message "flags bit 2" "unknown bits"
fi
expect_refused "--mf-loss on linear data" "$BOAR" train --mf-loss mae "$T/lin.svm"
[ "$rc" = 2 ] || fail "--mf-loss on linear data: exit $rc, expected 2"
expect_message "--mf-loss on linear data" "--mf-loss is for matrix factorization"
expect_refused "--mf-loss rmse" "$BOAR" train --mf-loss rmse "$T/tr.txt"
[ "$rc" = 2 ] || fail "--mf-loss rmse: exit $rc, expected 2"
expect_message "--mf-loss rmse" "one of squared\|mae"
"$BOAR" train --help | grep -q -- "--mf-loss squared|mae" ||
	fail "--help lacks --mf-loss"
exit 0
