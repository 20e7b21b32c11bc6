#!/bin/sh
# Vowpal Wabbit's -q AB where boar's -q is --quiet: `boar train -q ab
# FILE` and `-qab` cross the namespaces as --quadratic ab does (the same
# model, bit for bit, at one thread) and say so on stderr (unless
# --quiet), rather than training without the crosses; -q before a file
# (a two-letter one too) stays --quiet; -q ab where ab is also a file, beside FILE, is refused
# with exit 2 naming --quadratic; predict and eval, which have no -q,
# name --quadratic in their refusal.
. tests/cli/lib/common.sh
. tests/cli/lib/vw.sh

xor_vw "$T/xor.vw"
OPTS="--epochs 5 --threads 1 --seed 3"

"$BOAR" train $OPTS --quadratic ab -m "$T/long" "$T/xor.vw" 2>/dev/null ||
	fail "--quadratic ab exited $?"
"$BOAR" train $OPTS -q ab -m "$T/q" "$T/xor.vw" 2>"$T/err" ||
	{ cat "$T/err"; fail "-q ab exited $?"; }
grep -q "^boar: -q ab read as --quadratic ab" "$T/err" ||
	{ cat "$T/err"; fail "-q ab: no note that it is --quadratic"; }
grep -q "120 non-zeros" "$T/err" ||
	{ cat "$T/err"; fail "-q ab: not the 120 non-zeros of the crosses"; }
cmp -s "$T/long" "$T/q" || fail "-q ab and --quadratic ab give other models"
"$BOAR" train $OPTS -m "$T/q2" "$T/xor.vw" -qab 2>"$T/err" ||
	{ cat "$T/err"; fail "-qab exited $?"; }
cmp -s "$T/long" "$T/q2" || fail "-qab and --quadratic ab give other models"
"$BOAR" train $OPTS --quiet -q ab "$T/xor.vw" 2>"$T/err" || fail "--quiet -q ab exited $?"
[ -s "$T/err" ] && { cat "$T/err"; fail "--quiet -q ab printed on stderr"; }

# -q before a file is --quiet, a two-letter file too
"$BOAR" train $OPTS -q -m "$T/quiet" "$T/xor.vw" 2>"$T/err" || fail "-q -m exited $?"
[ -s "$T/err" ] && { cat "$T/err"; fail "-q printed on stderr"; }
cp "$T/xor.vw" "$T/ab"
(cd "$T" && "$BOAR" train $OPTS -q ab) 2>"$T/err" || fail "-q ab (a file) exited $?"
[ -s "$T/err" ] && { cat "$T/err"; fail "-q before the file ab printed on stderr"; }
# ... and beside another FILE it is a question only the user can answer
(cd "$T" && "$BOAR" train -q ab xor.vw) >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 2 ] || { cat "$T/err"; fail "-q ab (a file) xor.vw: exit $rc, expected 2"; }
expect_message "-q ab (a file) xor.vw" "--quadratic AB"

expect_refused "-q a (one letter: --quiet and two FILEs)" "$BOAR" train -q a "$T/xor.vw"
[ "$rc" = 2 ] || fail "-q a: exit $rc, expected 2"
expect_refused "predict -q ab" "$BOAR" predict -q ab -m "$T/q" "$T/xor.vw"
[ "$rc" = 2 ] || fail "predict -q ab: exit $rc, expected 2"
expect_message "predict -q ab" "unknown option -q .*--quadratic AB"
expect_refused "-q ab on CSV" "$BOAR" train -q ab --format csv "$T/xor.vw"
expect_message "-q ab on CSV" "for VW data"
exit 0
