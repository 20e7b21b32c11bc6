#!/bin/sh
# Early stopping: --early-stop N stops after N epochs without a lower loss
# on --test, or on a --holdout fraction of the training rows, keeps the
# best epoch's model and says so in one line ("early stop: no improvement
# for N epochs; keeping epoch K (holdout loss X)"); --json lines carry
# holdout_loss and best_epoch; --holdout beside --test holds rows out and
# early stopping watches them. The model saved is really the best epoch's:
# its test loss is the one reported for that epoch. --holdout alone only
# reports the held-out loss. Contradictions are refused.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read --json)"

A=datasets/a9a
AT=datasets/a9a.t

"$BOAR" train --holdout 0.2 --early-stop 2 --epochs 50 --json -m "$T/h" "$A" \
	>"$T/j" 2>"$T/err" || { cat "$T/err"; fail "train --holdout --early-stop exited $?"; }
epochs=$(grep -c . "$T/j")
[ "$epochs" -lt 50 ] || fail "--early-stop 2: ran all 50 epochs"
line=$(grep '^early stop:' "$T/err") ||
	{ cat "$T/err"; fail "no 'early stop:' line on stderr"; }
echo "$line"
echo "$line" | grep -Eq '^early stop: no improvement for 2 epochs; keeping epoch [0-9]+ \(holdout loss [0-9.]+\)$' ||
	fail "unexpected early-stop line: $line"
kept=$(echo "$line" | sed 's/.*keeping epoch \([0-9]*\).*/\1/')
best=$(json_field "$T/j" best_epoch)
[ "$best" = "$kept" ] || fail "the message keeps epoch $kept, JSON best_epoch is $best"
[ $((epochs - kept)) = 2 ] || fail "stopped at epoch $epochs, $((epochs - kept)) after the best ($kept), expected 2"
[ -n "$(json_field "$T/j" holdout_loss)" ] || fail "JSON lines lack holdout_loss"
grep -q "($epochs epochs)" "$T/err" || { cat "$T/err"; fail "summary does not say $epochs epochs"; }

# With --test, the test set is watched and the saved model is the best
# epoch's: its test loss is the one that epoch reported.
"$BOAR" train --test "$AT" --early-stop 1 --epochs 50 --json -m "$T/t" "$A" \
	>"$T/j2" 2>"$T/err" || { cat "$T/err"; fail "train --test --early-stop exited $?"; }
grep -Eq '^early stop: no improvement for 1 epoch; keeping epoch [0-9]+ \(test loss' "$T/err" ||
	{ cat "$T/err"; fail "no early-stop line naming the test loss"; }
python3 - "$T/j2" >"$T/bestloss" <<'PY' || fail "cannot find the best epoch's loss"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
best = rows[-1]["best_epoch"]
print(repr(next(r["test_loss"] for r in rows if r["epoch"] == best)))
PY
"$BOAR" eval --json -m "$T/t" "$AT" >"$T/ev" || fail "eval exited $?"
got=$(json_field "$T/ev" test_loss)
want=$(cat "$T/bestloss")
awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d < 1e-7 && d > -1e-7) }' ||
	fail "saved model's test loss $got, but the best epoch reported $want"

# --holdout without --early-stop: all epochs, the held-out loss reported.
"$BOAR" train --holdout 0.3 --epochs 3 --json "$A" >"$T/j3" 2>"$T/err" ||
	fail "train --holdout exited $?"
[ "$(grep -c . "$T/j3")" = 3 ] || fail "--holdout alone: expected 3 epochs"
[ -n "$(json_field "$T/j3" holdout_loss)" ] || fail "--holdout alone: no holdout_loss"
[ -z "$(json_field "$T/j3" best_epoch)" ] || fail "--holdout alone: best_epoch without early stopping"
grep -q 'holdout loss' "$T/err" || { cat "$T/err"; fail "--holdout alone: progress lacks the holdout loss"; }
grep -q '^early stop' "$T/err" && fail "--holdout alone printed an early-stop line"

# --holdout with --test (issue 12: once refused with a message about early
# stopping nobody asked for): both reported every epoch; with --early-stop
# the held-out rows choose the epoch, and the test set stays unseen.
"$BOAR" train --holdout 0.2 --test "$AT" --epochs 2 --json "$A" >"$T/j4" 2>"$T/err" ||
	{ cat "$T/err"; fail "--holdout with --test exited $?"; }
[ -n "$(json_field "$T/j4" holdout_loss)" ] || fail "--holdout with --test: no holdout_loss"
[ -n "$(json_field "$T/j4" test_loss)" ] || fail "--holdout with --test: no test_loss"
[ "$(json_field "$T/j4" holdout_loss)" != "$(json_field "$T/j4" test_loss)" ] ||
	fail "--holdout with --test: the holdout loss is the test loss"
grep -q 'test loss.*holdout loss' "$T/err" || { cat "$T/err"; fail "--holdout with --test: progress lacks a column"; }
"$BOAR" train --holdout 0.2 --test "$AT" --early-stop 1 --epochs 30 "$A" 2>"$T/err" ||
	{ cat "$T/err"; fail "--holdout --test --early-stop exited $?"; }
grep -Eq '^early stop: .*keeping epoch [0-9]+ \(holdout loss' "$T/err" ||
	{ cat "$T/err"; fail "--holdout --test --early-stop: not watching the holdout"; }

# Refusals.
for bad in "--holdout 1" "--holdout -0.1" "--holdout x" "--early-stop -1"; do
	# shellcheck disable=SC2086
	expect_refused "$bad" "$BOAR" train $bad "$A"
	[ "$rc" = 2 ] || fail "$bad: expected exit 2, got $rc"
done
exit 0
