#!/bin/sh
# Matrix factorization converges with its defaults (issue 11): on clean
# rank-8 ratings (noise 0.05) the default run, no option but the rank,
# reaches a test RMSE near the noise (the old defaults stayed at 1.0, the
# spread of the ratings); the run watches a holdout by default (early
# stopping), --early-stop 0 turns it off; and the step follows the scale
# of the ratings: the same ratings times 10 reach 10 times the RMSE.
# --target-rmse X stops at the first epoch whose test RMSE is at most X and
# reports the time to it; it needs --test.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read --json)"

"$BOAR" gen --task mf --rows 330000 --users 3000 --items 1500 --rank 8 \
	--noise 0.05 -q -o "$T/all" || fail "gen exited $?"
awk -v t="$T" 'NR % 10 == 0 { print > (t "/te"); next } { print > (t "/tr") }' "$T/all"

"$BOAR" train --rank 8 --epochs 20 --threads 1 --json -m "$T/m" "$T/tr" \
	>"$T/j" 2>"$T/err" || { cat "$T/err"; fail "train exited $?"; }
[ -n "$(json_field "$T/j" holdout_loss)" ] ||
	fail "the default MF run does not watch a holdout"
"$BOAR" eval --json -m "$T/m" "$T/te" >"$T/e" || fail "eval exited $?"
rmse=$(json_field "$T/e" test_rmse)
echo "defaults, rank 8, 20 epochs: test RMSE $rmse (noise 0.05)"
at_most "test RMSE with the defaults" "$rmse" 0.08

"$BOAR" train --rank 8 --epochs 2 --threads 1 --early-stop 0 --json "$T/tr" \
	>"$T/j0" 2>"$T/err" || { cat "$T/err"; fail "train --early-stop 0 exited $?"; }
grep -q holdout_loss "$T/j0" && fail "--early-stop 0 still holds rows out"

awk '{ print $1, $2, $3 * 10 }' "$T/tr" >"$T/tr10"
awk '{ print $1, $2, $3 * 10 }' "$T/te" >"$T/te10"
"$BOAR" train --rank 8 --epochs 20 --threads 1 -m "$T/m10" "$T/tr10" \
	2>"$T/err" || { cat "$T/err"; fail "train on ratings x10 exited $?"; }
"$BOAR" eval --json -m "$T/m10" "$T/te10" >"$T/e10" || fail "eval exited $?"
rmse10=$(json_field "$T/e10" test_rmse)
echo "ratings x10: test RMSE $rmse10"
at_most "test RMSE on ratings x10" "$rmse10" 0.8

"$BOAR" train --rank 8 --epochs 20 --threads 1 --test "$T/te" --target-rmse 0.2 \
	--json "$T/tr" >"$T/jt" 2>"$T/err" || { cat "$T/err"; fail "train --target-rmse exited $?"; }
grep -Eq '^target RMSE 0.2 reached in epoch [0-9]+: [0-9.]+ s of sweeps, [0-9.]+ s since training began$' "$T/err" ||
	{ cat "$T/err"; fail "no 'target RMSE ... reached' line"; }
reached=$(json_field "$T/jt" target_epoch)
epochs=$(grep -c '"epoch"' "$T/jt")
[ "$reached" = "$epochs" ] || fail "reached in epoch $reached but ran $epochs epochs"
[ "$epochs" -lt 20 ] || fail "--target-rmse 0.2 did not stop early"
"$BOAR" train --rank 8 --epochs 2 --threads 1 --test "$T/te" --target-rmse 0.001 \
	"$T/tr" 2>"$T/err" || fail "train with an unreachable target exited $?"
grep -q '^target RMSE 0.001 not reached in 2 epochs$' "$T/err" ||
	{ cat "$T/err"; fail "no 'not reached' line"; }
expect_refused "--target-rmse without --test" "$BOAR" train --target-rmse 0.2 "$T/tr"
expect_message "--target-rmse without --test" "needs a --test"
exit 0
