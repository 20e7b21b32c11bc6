#!/bin/sh
# Matrix factorization on real ratings: MovieLens small (100k ratings, CSV
# with a header), split 90/10 by a hash of each line, reaches test RMSE
# below 0.95 (predicting every rating as the mean gives about 1.04).
. tests/cli/lib/common.sh

R=$SHARED/datasets/movielens-small/ratings.csv
[ -f "$R" ] || skip "no $R (the shared datasets are not here)"
have_python || skip "python3 not found (needed to read the JSON output)"

# A cheap deterministic hash of the line's text picks the split, so the
# split does not depend on the file's order.
awk -v out="$T" '
	BEGIN { for (i = 0; i < 256; i++) ord[sprintf("%c", i)] = i }
	NR == 1 { print > (out "/train.csv"); print > (out "/test.csv"); next }
	{
		h = 7
		for (i = 1; i <= length($0); i++)
			h = (h * 31 + ord[substr($0, i, 1)]) % 1000003
		print > (out "/" (h % 10 == 0 ? "test" : "train") ".csv")
	}' "$R"
ntest=$(wc -l <"$T/test.csv")
[ "$ntest" -gt 5000 ] || fail "the split put only $ntest lines in the test set"

"$BOAR" train --task mf --rank 16 --epochs 20 --json --test "$T/test.csv" \
	-m "$T/ml.model" "$T/train.csv" >"$T/j" 2>"$T/err" ||
	{ cat "$T/err"; fail "train on MovieLens exited $?"; }
rmse=$(json_field "$T/j" test_rmse)
echo "MovieLens small, rank 16, 20 epochs: test RMSE $rmse"
at_most "MovieLens test RMSE" "$rmse" 0.95

# predict gives one rating per test line (the header is not a rating).
"$BOAR" predict -m "$T/ml.model" "$T/test.csv" >"$T/p" || fail "predict exited $?"
n=$(wc -l <"$T/p")
[ "$n" = $((ntest - 1)) ] || fail "predict wrote $n ratings for $((ntest - 1)) lines"
"$BOAR" eval --json -m "$T/ml.model" "$T/test.csv" >"$T/e" || fail "eval exited $?"
ermse=$(json_field "$T/e" test_rmse)
at_most "eval RMSE of the saved model" "$ermse" 0.95
exit 0
