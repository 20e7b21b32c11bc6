#!/bin/sh
# --deterministic: the same model at any thread count. Training a9a with
# --deterministic on 1 and on 2 threads (binary logistic, and 3-class
# softmax) must give byte-identical model files, and the model must still
# be a good one (test accuracy as without the flag).
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read eval --json)"

A=datasets/a9a
AT=datasets/a9a.t
for extra in "" "--optimizer sgd --update atomic" "--loss hinge"; do
	# shellcheck disable=SC2086
	"$BOAR" train --quiet --deterministic --threads 1 --seed 3 --epochs 3 \
		$extra -m "$T/d1" "$A" || fail "--deterministic --threads 1 $extra exited $?"
	# shellcheck disable=SC2086
	"$BOAR" train --quiet --deterministic --threads 2 --seed 3 --epochs 3 \
		$extra -m "$T/d2" "$A" || fail "--deterministic --threads 2 $extra exited $?"
	cmp -s "$T/d1" "$T/d2" ||
		fail "--deterministic $extra: --threads 1 and --threads 2 gave different model files"
done
"$BOAR" eval --json -m "$T/d2" "$AT" >"$T/ev" || fail "eval exited $?"
at_least "--deterministic hinge model: a9a.t accuracy" "$(json_field "$T/ev" test_accuracy)" 0.83

# Multiclass (softmax) too.
awk 'BEGIN { srand(8); for (i = 0; i < 3000; i++) { c = 1 + int(rand() * 3)
	print c, c ":1", 4 + int(rand() * 20) ":" rand() } }' >"$T/c3"
for t in 1 2; do
	"$BOAR" train --quiet --deterministic --threads $t --loss softmax --epochs 2 \
		-m "$T/s$t" "$T/c3" || fail "softmax --deterministic --threads $t exited $?"
done
cmp -s "$T/s1" "$T/s2" ||
	fail "--deterministic softmax: --threads 1 and --threads 2 gave different model files"
exit 0
