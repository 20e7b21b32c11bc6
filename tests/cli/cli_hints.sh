#!/bin/sh
# Hints for a new user: an unknown option names the closest one ("did you
# mean --epochs?"), VW's names included; a cluster option without --ps
# and --worker (or --cluster) says it needs them; training labels that hold one
# class give a warning; the summary counts the features seen, not the
# hash space.
. tests/cli/lib/common.sh

hint() { # OPTION EXPECTED
	expect_refused "$1" "$BOAR" train "$1" 1 datasets/a9a
	[ "$rc" = 2 ] || fail "$1: exit $rc, expected 2"
	expect_message "$1" "unknown option $1 \\(did you mean --$2\\?\\)"
}
hint --epoch epochs
hint --eta_decay eta-decay
hint --csv-lable csv-label
hint --passes epochs
hint --learning_rate eta
expect_refused "--zzzz" "$BOAR" train --zzzz datasets/a9a
grep -q "did you mean" "$T/err" && fail "--zzzz: a far-fetched suggestion"
# a cluster option without a cluster role says what it goes with
for o in --f16 "--staleness 3"; do
	expect_refused "$o" "$BOAR" train $o datasets/a9a
	[ "$rc" = 2 ] || fail "$o: exit $rc, expected 2"
	expect_message "$o" "${o%% *} is a cluster option: it goes with --ps"
done

printf '1 1:1\n1 2:1 3:1\n1 1:2\n' >"$T/one.svm"
"$BOAR" train --epochs 1 "$T/one.svm" 2>"$T/err" || fail "one-class train exited $?"
grep -q "warning: every label of .*one.svm is 1" "$T/err" || { cat "$T/err"; fail "no one-class warning"; }
"$BOAR" train --epochs 1 datasets/a9a 2>"$T/err" || fail "a9a train exited $?"
grep -q "warning" "$T/err" && { cat "$T/err"; fail "a warning for two classes"; }

# VW data hashed into 2^18 slots: 3 features seen.
printf '1 |a x y\n-1 |a z\n' >"$T/d.vw"
"$BOAR" train --epochs 1 "$T/d.vw" 2>"$T/err" || fail "vw train exited $?"
grep -q "2 rows, 3 features seen (of 262144 slots)" "$T/err" ||
	{ cat "$T/err"; fail "the summary does not count the features seen"; }
echo "ok"
