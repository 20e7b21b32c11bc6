#!/bin/sh
# VW feature generation from the command line: --quadratic (VW's -q),
# --interactions, --ngram, --skips. XOR data that no linear model of the
# single features separates is learnt once the namespaces are crossed;
# the model remembers the options, so predict and eval cross the test rows
# without being told; contradictions and bad values are refused with exit
# 2; the non-zeros and the slots are those computed by hand; dump --names
# shows the name behind each slot (VW's --invert_hash).
. tests/cli/lib/common.sh
. tests/cli/lib/vw.sh

xor_vw "$T/xor.vw"
nnz() { sed -n 's/.* \([0-9]*\) non-zeros.*/\1/p' "$T/err"; }
acc() { "$BOAR" eval --json -m "$1" "$T/xor.vw" | json_field /dev/stdin test_accuracy; }

"$BOAR" train --epochs 20 -m "$T/lin" "$T/xor.vw" 2>"$T/err" || fail "train exited $?"
[ "$(nnz)" = 80 ] || { cat "$T/err"; fail "expected 80 non-zeros without -q"; }
"$BOAR" train --epochs 20 --quadratic ab -m "$T/q" "$T/xor.vw" 2>"$T/err" ||
	fail "--quadratic exited $?"
[ "$(nnz)" = 120 ] || { cat "$T/err"; fail "--quadratic ab: expected 120 non-zeros"; }
a=$(acc "$T/lin")
b=$(acc "$T/q")
python3 -c "import sys; sys.exit(not ($a <= 0.75 and $b == 1.0))" ||
	fail "accuracy without -q $a, with -q $b: the crosses did not reach eval"
# predict crosses too, and an agreeing option changes nothing
"$BOAR" predict -m "$T/q" "$T/xor.vw" >"$T/p1" || fail "predict exited $?"
"$BOAR" predict --interactions ab -m "$T/q" "$T/xor.vw" >"$T/p2" ||
	fail "an agreeing --interactions is refused"
cmp -s "$T/p1" "$T/p2" || fail "predict with the model's own -q differs"
awk 'NR % 4 == 1 && $1 < 0.5 || NR % 4 == 3 && $1 > 0.5 { bad++ } END { exit bad > 0 }' \
	"$T/p1" || fail "predict did not use the model's interactions"

# --interactions ab,ba is one cross (VW drops the reordered one); a
# self-cross of a gives combinations: x*x only for rows of one token
"$BOAR" train --epochs 1 --interactions ab --interactions ba "$T/xor.vw" 2>"$T/err" ||
	fail "--interactions exited $?"
[ "$(nnz)" = 120 ] || { cat "$T/err"; fail "ab,ba: expected 120 non-zeros"; }
"$BOAR" train --epochs 1 --quadratic :: "$T/xor.vw" 2>"$T/err" || fail ":: exited $?"
[ "$(nnz)" = 200 ] || { cat "$T/err"; fail "-q ::: expected 200 non-zeros (aa ab bb)"; }
# n-grams: "|t a b c" gives a b c a^b b^c, and with --skips 1 a^c
echo "1 |t a b c" >"$T/g.vw"
"$BOAR" train --epochs 1 --ngram 2 "$T/g.vw" 2>"$T/err" || fail "--ngram exited $?"
[ "$(nnz)" = 5 ] || { cat "$T/err"; fail "--ngram 2: expected 5 non-zeros"; }
"$BOAR" train --epochs 1 --ngram t2 --skips t1 -m "$T/g" "$T/g.vw" 2>"$T/err" ||
	fail "--skips exited $?"
[ "$(nnz)" = 6 ] || { cat "$T/err"; fail "--ngram t2 --skips t1: expected 6 non-zeros"; }

# contradictions and bad values: exit 2, saying what
expect_refused "contradicting -q" "$BOAR" predict --quadratic ba -m "$T/q" "$T/xor.vw"
[ "$rc" = 2 ] || fail "contradicting --quadratic: exit $rc"
expect_message "contradicting -q" "interactions ba, but .* was trained with --interactions ab"
expect_refused "--ngram on a model without" "$BOAR" eval --ngram 2 -m "$T/q" "$T/xor.vw"
[ "$rc" = 2 ] || fail "contradicting --ngram: exit $rc"
expect_refused "one letter" "$BOAR" train --quadratic a "$T/xor.vw"
[ "$rc" = 2 ] || fail "--quadratic a: exit $rc"
expect_message "one letter" "give two namespace letters"
expect_refused "ngram 0" "$BOAR" train --ngram 0 "$T/xor.vw"
[ "$rc" = 2 ] || fail "--ngram 0: exit $rc"
expect_refused "skips without ngram" "$BOAR" train --ngram a2 --skips b1 "$T/xor.vw"
[ "$rc" = 2 ] || fail "--skips b1: exit $rc"
expect_message "skips without ngram" "needs --ngram of at least 2 for namespace b"
expect_refused "nine letters" "$BOAR" train --interactions abcdefghi "$T/xor.vw"
[ "$rc" = 2 ] || fail "--interactions of nine: exit $rc"
# (VW's own -q AB: cli_vw_q.sh)
# --max-memory counts the generated features before they are allocated
awk 'BEGIN { printf "1 |a"; for (i = 0; i < 300; i++) printf " w%d", i; print "" }' >"$T/wide.vw"
"$BOAR" train --epochs 1 --hash-bits 10 --max-memory 64K "$T/wide.vw" 2>"$T/err" ||
	{ cat "$T/err"; fail "300 features refused under 64K"; }
expect_refused "memory" "$BOAR" train --epochs 1 --hash-bits 10 --max-memory 64K --quadratic aa "$T/wide.vw"
expect_message "memory" "interactions and n-grams needs .*over the memory limit"
printf '1,2\n0,3\n' >"$T/c.csv"
expect_refused "-q on CSV" "$BOAR" train --quadratic ab --format csv "$T/c.csv"
expect_message "-q on CSV" "for VW data"
"$BOAR" train --help | grep -q -- "--quadratic AB" || fail "train --help lacks --quadratic"

# dump --names: slot 187107 is user^alice*doc^sports at 18 bits (VW's
# FNV of the murmur3 hashes, computed by hand), bob*sports is 17410
printf '1 |user alice bob:3 |doc sports:2\n-1 |user carol |doc news\n' >"$T/n.vw"
"$BOAR" train --epochs 2 --quadratic ud -m "$T/n" "$T/n.vw" 2>/dev/null || fail "train n.vw"
"$BOAR" dump -m "$T/n" --names "$T/n.vw" >"$T/d" || fail "dump --names exited $?"
grep -q '^187107 [0-9.e-]* user^alice\*doc^sports$' "$T/d" || { cat "$T/d"; fail "no alice*sports at 187107"; }
grep -q '^17410 [0-9.e-]* user^bob\*doc^sports$' "$T/d" || { cat "$T/d"; fail "no bob*sports at 17410"; }
[ "$(wc -l <"$T/d")" = 8 ] || { cat "$T/d"; fail "expected 8 named weights"; }
"$BOAR" dump -m "$T/g" --names "$T/g.vw" | grep -q ' t^a^c$' || fail "no skip-gram name"
# collisions are all listed: 1 bit leaves two slots
"$BOAR" train --epochs 2 --hash-bits 1 -m "$T/n1" "$T/n.vw" 2>/dev/null || fail "train -b 1"
"$BOAR" dump -m "$T/n1" --names "$T/n.vw" --json >"$T/j" || fail "dump --json --names"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = sorted(n for l in d["names"] for n in l)
want = sorted(["user^alice", "user^bob", "doc^sports", "user^carol", "doc^news"])
sys.exit(names != want or len(d["names"]) != len(d["features"]))' "$T/j" ||
	{ cat "$T/j"; fail "collided names not all listed"; }
echo "ok"
