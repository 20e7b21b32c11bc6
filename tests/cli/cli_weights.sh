#!/bin/sh
# Instance weights (--weights FILE, one per training row) and class weights
# (--class-weight LABEL:W). All-1 weights change nothing (bit for bit on one
# thread); weight 0 on half the rows changes the model; a bad weights file
# is refused naming the problem. On a9a, weighting the positive class up
# raises the share of rows predicted positive, weighting it down lowers it.
. tests/cli/lib/common.sh

A=datasets/a9a
AT=datasets/a9a.t
rows=$(wc -l <"$A")
train1() { # OUT [options...]: one thread, fixed seed, 2 epochs
	out=$1
	shift
	"$BOAR" train --quiet --threads 1 --seed 5 --epochs 2 "$@" -m "$out" "$A" ||
		fail "train $* exited $?"
}

awk -v n="$rows" 'BEGIN { for (i = 0; i < n; i++) print 1 }' >"$T/ones"
awk -v n="$rows" 'BEGIN { for (i = 0; i < n; i++) print (i < n / 2) ? 1 : 0 }' >"$T/half"
train1 "$T/plain"
train1 "$T/w1" --weights "$T/ones"
cmp -s "$T/plain" "$T/w1" || fail "weights all 1 gave a different model than no weights"
train1 "$T/wh" --weights "$T/half"
cmp -s "$T/plain" "$T/wh" && fail "weight 0 on half the rows left the model unchanged"

# ... and what it predicts.
"$BOAR" predict -m "$T/plain" "$AT" >"$T/p0" || fail "predict exited $?"
"$BOAR" predict -m "$T/wh" "$AT" >"$T/p1" || fail "predict exited $?"
cmp -s "$T/p0" "$T/p1" && fail "weight 0 on half the rows: identical predictions"

# Bad weights files.
head -n 100 "$T/ones" >"$T/short"
expect_refused "too few weights" "$BOAR" train --quiet --epochs 1 --weights "$T/short" "$A"
expect_message "too few weights" "weight|row|line"
{ head -n 10 "$T/ones"; echo -3; tail -n +12 "$T/ones"; } >"$T/neg"
expect_refused "a negative weight" "$BOAR" train --quiet --epochs 1 --weights "$T/neg" "$A"
expect_message "a negative weight" "11|>= 0|negative"
expect_refused "missing weights file" "$BOAR" train --quiet --epochs 1 \
	--weights "$T/nonexistent" "$A"
expect_message "missing weights file" "nonexistent"

# --class-weight syntax.
for bad in 1 :2 1: a:2 1:x 1:-2; do
	expect_refused "--class-weight $bad" "$BOAR" train --class-weight "$bad" "$A"
	[ "$rc" = 2 ] || fail "--class-weight $bad: expected exit 2, got $rc"
done
expect_refused "the same label twice" "$BOAR" train --class-weight 1:2 \
	--class-weight 1:3 "$A"
expect_message "the same label twice" "twice"
# A class weight for a label the data lacks is a likely typo: warned about.
"$BOAR" train --quiet --epochs 1 --class-weight 7:2 "$A" 2>"$T/err" ||
	fail "--class-weight 7:2 exited $?"
grep -q 'warning: --class-weight 7:2: no row .* has label 7' "$T/err" ||
	{ cat "$T/err"; fail "no warning for a class weight of an absent label"; }

# Class weights move the decision in the right direction.
pos_rate() { # MODEL: share of a9a.t predicted positive
	"$BOAR" predict -m "$1" "$AT" | awk '{ n++; p += ($1 > 0.5) } END { print p / n }'
}
train1 "$T/cw0"
train1 "$T/cwp" --class-weight 1:4
train1 "$T/cwn" --class-weight -1:4
r0=$(pos_rate "$T/cw0")
rp=$(pos_rate "$T/cwp")
rn=$(pos_rate "$T/cwn")
echo "a9a.t predicted positive: no class weights $r0, +1 weighted 4x $rp, -1 weighted 4x $rn"
awk -v a="$rp" -v b="$r0" 'BEGIN { exit !(a > b + 0.02) }' ||
	fail "--class-weight 1:4: positive rate $rp, expected above $r0 + 0.02"
awk -v a="$rn" -v b="$r0" 'BEGIN { exit !(a < b - 0.02) }' ||
	fail "--class-weight -1:4: positive rate $rn, expected below $r0 - 0.02"
exit 0
