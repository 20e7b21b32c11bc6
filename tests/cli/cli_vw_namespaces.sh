#!/bin/sh
# VW's --ignore and --keep: namespaces named by first letter lose (or
# alone keep) their features; the model remembers the choice, so predict
# drops them too without being told, and a contradicting one is refused.
. tests/cli/lib/common.sh

i=0
while [ $i -lt 20 ]; do
	echo "1 |user u$i |ad good |noise n$i"
	echo "-1 |user v$i |ad bad |noise n$i"
	i=$((i + 1))
done >"$T/d.vw"
nnz() { sed -n 's/.* \([0-9]*\) non-zeros.*/\1/p' "$T/err"; }
"$BOAR" train --epochs 1 -m "$T/all" "$T/d.vw" 2>"$T/err" || fail "train exited $?"
[ "$(nnz)" = 120 ] || { cat "$T/err"; fail "expected 120 non-zeros"; }
"$BOAR" train --epochs 1 --ignore n -m "$T/ign" "$T/d.vw" 2>"$T/err" || fail "--ignore exited $?"
[ "$(nnz)" = 80 ] || { cat "$T/err"; fail "--ignore n: expected 80 non-zeros"; }
"$BOAR" train --epochs 1 --keep a -m "$T/keep" "$T/d.vw" 2>"$T/err" || fail "--keep exited $?"
[ "$(nnz)" = 40 ] || { cat "$T/err"; fail "--keep a: expected 40 non-zeros"; }
"$BOAR" train --epochs 1 --ignore u --keep un "$T/d.vw" 2>"$T/err" || fail "--ignore with --keep exited $?"
[ "$(nnz)" = 40 ] || { cat "$T/err"; fail "--keep un --ignore u: expected 40 non-zeros"; }

# --keep a: only |ad counts, so a row scores as its |ad part alone.
printf '|ad good\n|ad good |user zz |noise q\n' >"$T/p.vw"
"$BOAR" predict -m "$T/keep" "$T/p.vw" >"$T/s" || fail "predict exited $?"
[ "$(sed -n 1p "$T/s")" = "$(sed -n 2p "$T/s")" ] || fail "predict did not drop the namespaces the model dropped"
"$BOAR" predict --keep a -m "$T/keep" "$T/p.vw" >/dev/null || fail "an agreeing --keep is refused"
expect_refused "contradicting --ignore" "$BOAR" predict --ignore u -m "$T/keep" "$T/p.vw"
[ "$rc" = 2 ] || fail "contradicting --ignore: exit $rc"
expect_message "contradicting --ignore" "ignore u, but .* was trained with no --ignore"
echo "ok"
