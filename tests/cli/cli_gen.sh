#!/bin/sh
# `boar gen` writes data that boar can learn: a linear set with power-law
# feature ids and a little label noise is fitted to high held-out accuracy,
# and low-rank ratings to an RMSE near the noise level. The same seed gives
# the same file; a different seed a different one.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read the JSON output)"

"$BOAR" gen --quiet --task linear --rows 60000 --features 1000 --nnz 20 \
	--skew 1 --noise 0.02 --seed 5 -o "$T/lin.svm" || fail "gen linear exited $?"
rows=$(wc -l <"$T/lin.svm")
[ "$rows" = 60000 ] || fail "gen --rows 60000 wrote $rows lines"
"$BOAR" gen --quiet --task linear --rows 60000 --features 1000 --nnz 20 \
	--skew 1 --noise 0.02 --seed 5 -o "$T/lin2.svm" || fail "gen exited $?"
cmp -s "$T/lin.svm" "$T/lin2.svm" || fail "gen with the same seed differs"
"$BOAR" gen --quiet --task linear --rows 1000 --seed 6 -o "$T/lin3.svm" ||
	fail "gen exited $?"
head -n 1000 "$T/lin.svm" | cmp -s - "$T/lin3.svm" && fail "seeds 5 and 6 gave the same data"

# Train on the first 50000 rows, test on the last 10000 (same hidden model).
head -n 50000 "$T/lin.svm" >"$T/lin.train"
tail -n 10000 "$T/lin.svm" >"$T/lin.test"
"$BOAR" train --epochs 10 --json --test "$T/lin.test" "$T/lin.train" \
	>"$T/j" 2>"$T/err" || { cat "$T/err"; fail "train on gen data exited $?"; }
acc=$(json_field "$T/j" test_accuracy)
at_least "held-out accuracy on generated linear data" "$acc" 0.90

"$BOAR" gen --quiet --task mf --rows 200000 --users 2000 --items 1000 \
	--rank 4 --noise 0.1 --seed 3 -o "$T/mf.txt" || fail "gen mf exited $?"
n=$(wc -l <"$T/mf.txt")
[ "$n" = 200000 ] || fail "gen mf --rows 200000 wrote $n lines"
awk 'NF < 3 { exit 1 }' "$T/mf.txt" || fail "gen mf: a line without user item rating"
head -n 180000 "$T/mf.txt" >"$T/mf.train"
tail -n 20000 "$T/mf.txt" >"$T/mf.test"
"$BOAR" train --task mf --rank 8 --epochs 20 --eta 0.05 --l2 0.01 --json \
	--test "$T/mf.test" \
	"$T/mf.train" >"$T/j" 2>"$T/err" || { cat "$T/err"; fail "mf train exited $?"; }
rmse=$(json_field "$T/j" test_rmse)
first=$(head -n 1 "$T/j" | python3 -c 'import json,sys; print(json.load(sys.stdin)["test_rmse"])')
# Learning happened: the final RMSE is below the first epoch's and far
# below the spread of the ratings.
awk -v a="$rmse" -v b="$first" 'BEGIN { exit !(a < b) }' ||
	fail "mf RMSE did not improve: first epoch $first, last $rmse"
std=$(awk '{ s += $3; q += $3 * $3 } END { m = s / NR; print sqrt(q / NR - m * m) }' "$T/mf.test")
awk -v a="$rmse" -v s="$std" 'BEGIN { exit !(a < 0.5 * s) }' ||
	fail "mf test RMSE $rmse is not well below the ratings' stddev $std"
# The generator adds noise of stddev 0.1: a rank-8 fit gets near it.
at_most "mf test RMSE on rank-4 data with noise 0.1" "$rmse" 0.3
exit 0
