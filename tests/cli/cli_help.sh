#!/bin/sh
# The help texts: `boar --help` lists every command and every train option
# with its default; `boar help CMD` and `boar CMD --help` agree; --version
# prints the library's version; unknown commands are usage errors (exit 2).
. tests/cli/lib/common.sh

# has_default HELPFILE OPT: the block of --OPT in HELPFILE (its line and the
# wrapped lines under it) shows a default.
has_default() {
	awk -v o="--$2" '
		/^  (-[a-zA-Z], )?--|^      --/ {
			on = 0
			n = split($0, w, " ")
			for (i = 1; i <= n; i++) if (w[i] == o) on = 1
		}
		on && /\(default:/ { found = 1 }
		END { exit !found }' "$1"
}

"$BOAR" --help >"$T/help" 2>&1 || fail "boar --help exited $?"
for cmd in train predict eval gen export; do
	grep -q "^  $cmd " "$T/help" || fail "--help does not list command $cmd"
done
for opt in task loss optimizer update epochs eta eta-decay l1 l2 seed \
	threads hash-bits rank mf-biases no-mf-biases init-scale device gpu \
	streams test json cache model-out quiet; do
	grep -q -- "--$opt\b" "$T/help" || fail "--help does not list --$opt"
done
# Every train option that takes a value shows its default.
"$BOAR" help train >"$T/train" || fail "boar help train exited $?"
"$BOAR" train --help >"$T/train2" || fail "boar train --help exited $?"
cmp -s "$T/train" "$T/train2" || fail "'boar help train' and 'boar train --help' differ"
for opt in task loss optimizer update epochs eta eta-decay l1 l2 seed \
	threads hash-bits rank init-scale device gpu streams; do
	has_default "$T/train" "$opt" ||
		fail "train --help shows no default for --$opt"
done
grep -q -- '--epochs N .*(default: [0-9]' "$T/train" ||
	fail "train --help: --epochs default is not a number"
for cmd in predict eval gen export; do
	"$BOAR" "$cmd" --help >"$T/h" || fail "boar $cmd --help exited $?"
	grep -q "^usage: boar $cmd" "$T/h" || fail "boar $cmd --help has no usage line"
done
"$BOAR" gen --help >"$T/gen"
for opt in task rows features users items nnz skew rank noise seed; do
	has_default "$T/gen" "$opt" ||
		fail "gen --help shows no default for --$opt"
done

v=$("$BOAR" --version) || fail "--version exited $?"
echo "$v" | grep -Eq '^boar [0-9]+\.[0-9]+\.[0-9]+' ||
	fail "--version: expected 'boar X.Y.Z', got '$v'"

"$BOAR" frobnicate >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 2 ] || fail "unknown command: expected exit 2, got $rc"
grep -q "unknown command 'frobnicate'" "$T/err" || fail "unknown command not named"
"$BOAR" >/dev/null 2>&1
[ $? = 2 ] || fail "no command: expected exit 2"
"$BOAR" help frobnicate >/dev/null 2>&1
[ $? = 2 ] || fail "help for an unknown command: expected exit 2"
exit 0
