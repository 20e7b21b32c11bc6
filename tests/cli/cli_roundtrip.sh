#!/bin/sh
# The round trip users do first: train on a9a with a9a.t as test set, save
# the model, load it back in `predict` and `eval`, and check that every
# number agrees: test accuracy >= 0.845 within 10 epochs, one score per test
# row, probabilities in [0, 1], the accuracy recomputed from predict's
# scores equals eval's, and eval on the saved model equals train's final
# test accuracy.
. tests/cli/lib/common.sh

A=datasets/a9a
AT=datasets/a9a.t
[ -f "$A" ] && [ -f "$AT" ] || fail "datasets/a9a and a9a.t are missing"
have_python || skip "python3 not found (needed to read the JSON output)"

"$BOAR" train --epochs 10 --test "$AT" --json -m "$T/a9a.model" "$A" \
	>"$T/train.json" 2>"$T/train.err" ||
	{ cat "$T/train.err"; fail "train exited $?"; }
[ -s "$T/a9a.model" ] || fail "train -m wrote no model file"
n=$(grep -c . "$T/train.json")
[ "$n" = 10 ] || fail "expected 10 JSON lines (one per epoch), got $n"
acc=$(json_field "$T/train.json" test_accuracy)
at_least "a9a test accuracy after 10 epochs" "$acc" 0.845
# stderr carries the human-readable progress and summary.
grep -q '^epoch  *10/10' "$T/train.err" || fail "no progress line for epoch 10 on stderr"
grep -q 'accuracy' "$T/train.err" || fail "no summary with the accuracy on stderr"

# eval on the saved model reproduces train's final test metrics.
"$BOAR" eval -m "$T/a9a.model" --json "$AT" >"$T/eval.json" ||
	fail "eval exited $?"
eacc=$(json_field "$T/eval.json" test_accuracy)
[ "$eacc" = "$acc" ] ||
	fail "eval of the saved model: accuracy $eacc, train reported $acc"
rows=$(json_field "$T/eval.json" rows)
[ "$rows" = "$(grep -c . "$AT")" ] || fail "eval rows $rows != lines of $AT"
"$BOAR" eval -m "$T/a9a.model" "$AT" >"$T/eval.txt" || fail "eval (text) exited $?"
grep -Eq 'accuracy 0\.8[4-9].*AUC 0\.[89].*log loss 0\.' "$T/eval.txt" ||
	{ cat "$T/eval.txt"; fail "eval text summary lacks accuracy/AUC/log loss"; }

# predict: one probability per row, in order, to stdout and with -o.
"$BOAR" predict -m "$T/a9a.model" "$AT" >"$T/scores" || fail "predict exited $?"
"$BOAR" predict -m "$T/a9a.model" "$AT" -o "$T/scores2" || fail "predict -o exited $?"
cmp -s "$T/scores" "$T/scores2" || fail "predict to stdout and to -o differ"
ls "$T" | grep -q 'tmp' && fail "predict -o left a temp file: $(ls "$T")"
n=$(wc -l <"$T/scores")
[ "$n" -eq "$rows" ] || fail "predict wrote $n scores for $rows rows"
awk '$1 < 0 || $1 > 1 || NF != 1 { bad++ } END { exit bad > 0 }' "$T/scores" ||
	fail "predict: a score outside [0, 1] for a logistic model"
# Accuracy from the scores against the labels equals eval's.
pacc=$(cut -d' ' -f1 "$AT" | paste - "$T/scores" | awk '
	{ y = ($1 > 0) ? 1 : 0; p = ($2 >= 0.5) ? 1 : 0; ok += (y == p) }
	END { printf "%.6f", ok / NR }')
d=$(awk -v a="$pacc" -v b="$eacc" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d < 0.0005) }')
[ "$d" = 1 ] || fail "accuracy from predict's scores $pacc, eval says $eacc"

# The text export names the weights.
"$BOAR" export -m "$T/a9a.model" >"$T/export.txt" || fail "export exited $?"
"$BOAR" export -m "$T/a9a.model" -o "$T/export2.txt" || fail "export -o exited $?"
cmp -s "$T/export.txt" "$T/export2.txt" || fail "export to stdout and to -o differ"
nw=$(grep -Ec '^[0-9]+ [-+0-9.eE]+$' "$T/export.txt")
[ "$nw" -ge 50 ] || fail "export: expected >= 50 'feature weight' lines, got $nw"
exit 0
