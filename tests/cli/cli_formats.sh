#!/bin/sh
# Input formats from the command line: a9a converted to Vowpal Wabbit text
# trains to a9a's accuracy with VW's hashing (and eval/predict read it the
# same way); the Criteo sample CSV trains with one command and its
# --csv-* options carry to eval and predict; gzip-compressed inputs of
# every format give the very same model as the plain files; bad input and
# bad options are refused with the reason.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read the JSON output)"

A=datasets/a9a
AT=datasets/a9a.t
CRITEO=$SHARED/datasets/criteo-tiny/train.tiny.csv

# LIBSVM -> VW: +1/-1 labels, one namespace, the indices as names
to_vw() {
	awk '{ printf "%s |f", ($1 > 0 ? 1 : -1)
	       for (i = 2; i <= NF; i++) { split($i, kv, ":"); printf " %s:%s", kv[1], kv[2] }
	       printf "\n" }' "$1"
}
to_vw "$A" >"$T/a9a.vw"
to_vw "$AT" >"$T/a9a.t.vw"

"$BOAR" train --epochs 10 --json --test "$T/a9a.t.vw" -m "$T/vw.model" \
	"$T/a9a.vw" >"$T/j" 2>"$T/err" || { cat "$T/err"; fail "train on VW exited $?"; }
grep -q "of 262144 slots" "$T/err" || { cat "$T/err"; fail "VW data not hashed into 2^18 slots"; }
acc=$(json_field "$T/j" test_accuracy)
at_least "a9a as VW: test accuracy" "$acc" 0.84
"$BOAR" eval --json -m "$T/vw.model" "$T/a9a.t.vw" >"$T/e" || fail "eval on VW exited $?"
[ "$(json_field "$T/e" test_accuracy)" = "$acc" ] ||
	fail "eval on VW: accuracy $(json_field "$T/e" test_accuracy), train said $acc"
"$BOAR" predict -m "$T/vw.model" "$T/a9a.t.vw" >"$T/p" || fail "predict on VW exited $?"
[ "$(wc -l <"$T/p")" = "$(wc -l <"$T/a9a.t.vw")" ] || fail "predict on VW: wrong number of scores"
"$BOAR" dump -m "$T/vw.model" >"$T/dump" 2>&1 || fail "dump of the VW model exited $?"
grep -q "hash_bits 18" "$T/dump" || fail "the VW model does not record hash_bits 18"

# gzip: the same model, bit for bit (one thread, fixed seed), per format
gzip -c "$A" >"$T/a9a.gz" || skip "gzip not found"
gzip -c "$T/a9a.vw" >"$T/a9a.vw.gz"
n=0
for f in "$A" "$T/a9a.gz" "$T/a9a.vw" "$T/a9a.vw.gz"; do
	n=$((n + 1))
	"$BOAR" train --quiet --threads 1 --epochs 2 -m "$T/m$n" "$f" ||
		fail "train on $f exited $?"
done
cmp -s "$T/m1" "$T/m2" || fail "a9a.gz trains another model than a9a"
cmp -s "$T/m3" "$T/m4" || fail "a9a.vw.gz trains another model than a9a.vw"
# and the cache of a .gz works (second run reads it)
"$BOAR" train --quiet --cache --threads 1 --epochs 2 -m "$T/c1.m" "$T/a9a.vw.gz" || fail "train --cache exited $?"
[ -f "$T/a9a.vw.gz.boarcache" ] || fail "no cache beside a9a.vw.gz"
"$BOAR" train --quiet --cache --threads 1 --epochs 2 -m "$T/c2.m" "$T/a9a.vw.gz" || fail "train from the cache exited $?"
cmp -s "$T/c1.m" "$T/m4" && cmp -s "$T/c2.m" "$T/m4" ||
	fail "training from the cache of a9a.vw.gz gives another model"

# errors name the file and the line, compressed or not
printf '1 |f a\n1 f b\n' | gzip -c >"$T/bad.vw.gz"
expect_refused "VW line without '|'" "$BOAR" train "$T/bad.vw.gz"
expect_message "VW line without '|'" "bad.vw.gz:2: missing '\\|'"
printf '1 |f a:x\n' >"$T/bad2.vw"
expect_refused "VW bad value" "$BOAR" train --format vw "$T/bad2.vw"
expect_message "VW bad value" "bad2.vw:1: bad number after ':'"
expect_refused "unknown format" "$BOAR" train --format arff "$A"
expect_refused "empty separator" "$BOAR" train --csv-separator '' "$A"
expect_refused "list with a hole" "$BOAR" train --csv-ignore 'a,,b' "$A"

if [ ! -r "$CRITEO" ]; then
	echo "note: $CRITEO not found; the Criteo part is skipped"
	exit 0
fi
# Criteo: train on 1500 rows, test on the other 499 (with the header)
head -n 1501 "$CRITEO" >"$T/tr.csv"
{ head -n 1 "$CRITEO"; tail -n +1502 "$CRITEO"; } >"$T/te.csv"
C="--csv-label Label --csv-ignore Id --csv-log"
"$BOAR" train $C --epochs 2 --json --test "$T/te.csv" -m "$T/c.model" \
	"$T/tr.csv" >"$T/j" 2>"$T/err" || { cat "$T/err"; fail "train on the Criteo CSV exited $?"; }
grep -q "1500 rows" "$T/err" || { cat "$T/err"; fail "Criteo: expected 1500 training rows"; }
auc=$(json_field "$T/j" test_auc)
at_least "Criteo sample: test AUC" "$auc" 0.62
cacc=$(json_field "$T/j" test_accuracy)
"$BOAR" eval --json $C -m "$T/c.model" "$T/te.csv" >"$T/e" || fail "eval on CSV exited $?"
[ "$(json_field "$T/e" test_accuracy)" = "$cacc" ] ||
	fail "eval on CSV: accuracy $(json_field "$T/e" test_accuracy), train said $cacc"
"$BOAR" predict $C -m "$T/c.model" "$T/te.csv" >"$T/p" || fail "predict on CSV exited $?"
[ "$(wc -l <"$T/p")" = 499 ] || fail "predict on CSV: $(wc -l <"$T/p") scores for 499 rows"
# compressed: the same model
gzip -c "$T/tr.csv" >"$T/tr.csv.gz"
"$BOAR" train --quiet $C --threads 1 -m "$T/c1.model" "$T/tr.csv" || fail "train on CSV exited $?"
"$BOAR" train --quiet $C --threads 1 -m "$T/c2.model" "$T/tr.csv.gz" || fail "train on CSV.gz exited $?"
cmp -s "$T/c1.model" "$T/c2.model" || fail "tr.csv.gz trains another model than tr.csv"
# bad CSV: a short line, a column that does not exist
{ head -n 3 "$T/tr.csv"; echo "1,0,3"; } >"$T/short.csv"
expect_refused "short CSV line" "$BOAR" train $C "$T/short.csv"
expect_message "short CSV line" "short.csv:4: 3 fields, but the first line has 41"
expect_refused "unknown column" "$BOAR" train --csv-label Click "$T/tr.csv"
expect_message "unknown column" "label column 'Click' not found"
exit 0
