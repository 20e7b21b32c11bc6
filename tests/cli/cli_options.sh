#!/bin/sh
# Bad options are refused before any work starts: unknown options, values
# that are not numbers or have trailing garbage, values out of range,
# unknown names. Each gets "boar: <reason>" on stderr and exit 2; both
# "--opt value" and "--opt=value" are understood.
. tests/cli/lib/common.sh

printf '+1 1:1 3:0.5\n-1 2:1\n+1 1:0.5 2:0.1\n-1 3:1\n' >"$T/tiny.svm"

# refuse_usage WHAT PATTERN ARGS...: `boar ARGS` exits 2 with a message
# matching PATTERN.
refuse_usage() {
	what=$1
	pat=$2
	shift 2
	expect_refused "$what" "$BOAR" "$@"
	[ "$rc" = 2 ] || { cat "$T/err"; fail "$what: expected exit 2 (usage), got $rc"; }
	expect_message "$what" "$pat"
}

refuse_usage "--eta abc" "eta.*abc" train --eta abc "$T/tiny.svm"
refuse_usage "--eta=abc" "eta.*abc" train --eta=abc "$T/tiny.svm"
refuse_usage "--eta -1" "eta" train --eta -1 "$T/tiny.svm"
refuse_usage "--eta 0" "eta" train --eta 0 "$T/tiny.svm"
refuse_usage "--eta 1e999" "eta" train --eta 1e999 "$T/tiny.svm"
refuse_usage "--eta nan" "eta" train --eta nan "$T/tiny.svm"
refuse_usage "--eta 0.1x" "eta.*0.1x" train --eta 0.1x "$T/tiny.svm"
refuse_usage "--eta ''" "eta" train --eta '' "$T/tiny.svm"
refuse_usage "--eta 0x10" "eta.*0x10" train --eta 0x10 "$T/tiny.svm"
refuse_usage "--eta ' 0.1'" "eta" train --eta ' 0.1' "$T/tiny.svm"
refuse_usage "--l2 inf" "l2" train --l2 inf "$T/tiny.svm"
refuse_usage "--epochs 010x" "epochs" train --epochs 010x "$T/tiny.svm"
refuse_usage "--rank 0" "rank" train --rank 0 "$T/tiny.svm"
refuse_usage "--rank -3" "rank" train --rank -3 "$T/tiny.svm"
refuse_usage "--loss foo" "loss.*foo" train --loss foo "$T/tiny.svm"
refuse_usage "--optimizer foo" "optimizer.*foo" train --optimizer foo "$T/tiny.svm"
refuse_usage "--update foo" "update.*foo" train --update foo "$T/tiny.svm"
refuse_usage "--task foo" "task.*foo" train --task foo "$T/tiny.svm"
refuse_usage "--device foo" "device.*foo" train --device foo "$T/tiny.svm"
refuse_usage "--epochs 1.5" "epochs.*1.5" train --epochs 1.5 "$T/tiny.svm"
refuse_usage "--epochs 0" "epochs" train --epochs 0 "$T/tiny.svm"
refuse_usage "--epochs 99999999999999999999" "epochs" train --epochs 99999999999999999999 "$T/tiny.svm"
refuse_usage "--threads x" "threads.*x" train --threads x "$T/tiny.svm"
refuse_usage "--threads -1" "threads" train --threads -1 "$T/tiny.svm"
refuse_usage "--l1 -0.5" "l1" train --l1 -0.5 "$T/tiny.svm"
refuse_usage "--l2 -1" "l2" train --l2 -1 "$T/tiny.svm"
refuse_usage "--eta-decay 0" "eta-decay" train --eta-decay 0 "$T/tiny.svm"
refuse_usage "--hash-bits 40" "hash-bits" train --hash-bits 40 "$T/tiny.svm"
refuse_usage "--seed -1" "seed" train --seed -1 "$T/tiny.svm"
refuse_usage "--init-scale 0" "init-scale" train --init-scale 0 "$T/tiny.svm"
refuse_usage "--streams 0" "streams" train --streams 0 "$T/tiny.svm"
refuse_usage "unknown option" "unknown option --bogus" train --bogus "$T/tiny.svm"
refuse_usage "abbreviation" "unknown option --epo" train --epo 3 "$T/tiny.svm"
refuse_usage "flag with a value" "json" train --json=yes "$T/tiny.svm"
refuse_usage "missing value" "eta" train "$T/tiny.svm" --eta
refuse_usage "no FILE" "FILE" train --epochs 2
refuse_usage "two FILEs" "FILE" train "$T/tiny.svm" "$T/tiny.svm"
refuse_usage "predict without -m" "-m MODEL" predict "$T/tiny.svm"
refuse_usage "eval without -m" "-m MODEL" eval "$T/tiny.svm"
refuse_usage "predict --threads x" "threads" predict -m x --threads x "$T/tiny.svm"
refuse_usage "gen without -o" "-o FILE" gen --rows 10
refuse_usage "gen --rows 0" "rows" gen --rows 0 -o "$T/g"
refuse_usage "gen --task auto" "task" gen --task auto -o "$T/g"
refuse_usage "gen --skew x" "skew" gen --skew x -o "$T/g"
refuse_usage "export without -m" "-m MODEL" export
[ -e "$T/g" ] && fail "a refused gen left $T/g behind"

# The accepted spellings all work: --opt value, --opt=value, -m FILE, -mFILE.
"$BOAR" train --quiet --epochs=2 --eta 0.5 --l2=0.001 --threads=1 \
	--loss=hinge --seed 3 -m "$T/m1" "$T/tiny.svm" ||
	fail "train with --opt=value forms failed"
[ -s "$T/m1" ] || fail "-m FILE wrote no model"
"$BOAR" train -q --epochs 1 -m"$T/m2" -- "$T/tiny.svm" ||
	fail "train with -mFILE and -- failed"
[ -s "$T/m2" ] || fail "-mFILE wrote no model"
exit 0
