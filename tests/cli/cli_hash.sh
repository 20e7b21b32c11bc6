#!/bin/sh
# Feature hashing: a model trained with --hash-bits B remembers B, and
# predict/eval load their data with the same hashing, so scores match
# train's own test evaluation. With enough slots a9a loses no accuracy.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read the JSON output)"

A=datasets/a9a
AT=datasets/a9a.t
"$BOAR" train --hash-bits 18 --epochs 10 --json --test "$AT" -m "$T/h.model" \
	"$A" >"$T/j" 2>"$T/err" || { cat "$T/err"; fail "train --hash-bits exited $?"; }
acc=$(json_field "$T/j" test_accuracy)
at_least "a9a accuracy with --hash-bits 18" "$acc" 0.84
"$BOAR" eval --json -m "$T/h.model" "$AT" >"$T/e" || fail "eval exited $?"
eacc=$(json_field "$T/e" test_accuracy)
[ "$eacc" = "$acc" ] || fail "eval of the hashed model: accuracy $eacc, train said $acc"
"$BOAR" predict -m "$T/h.model" "$AT" >"$T/p" || fail "predict exited $?"
[ "$(wc -l <"$T/p")" = "$(grep -c . "$AT")" ] || fail "predict: wrong number of scores"
pacc=$(cut -d' ' -f1 "$AT" | paste - "$T/p" | awk '
	{ ok += (($1 > 0) == ($2 >= 0.5)) } END { printf "%.6f", ok / NR }')
d=$(awk -v a="$pacc" -v b="$eacc" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d < 0.0005) }')
[ "$d" = 1 ] || fail "accuracy from predict's scores $pacc, eval says $eacc"

# Very few slots: collisions cost accuracy but nothing breaks.
"$BOAR" train --quiet --hash-bits 4 --epochs 3 -m "$T/h4.model" "$A" ||
	fail "train --hash-bits 4 exited $?"
"$BOAR" predict -m "$T/h4.model" "$AT" >"$T/p4" || fail "predict (4 bits) exited $?"
[ "$(wc -l <"$T/p4")" = "$(grep -c . "$AT")" ] || fail "predict (4 bits): wrong count"
exit 0
