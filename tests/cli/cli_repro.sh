#!/bin/sh
# The reproducibility promise: --threads 1 with a fixed --seed gives
# byte-identical model files run to run (linear and MF, SGD and AdaGrad),
# and a different seed gives a different model (the seed is really used).
. tests/cli/lib/common.sh

A=datasets/a9a
for extra in "--optimizer sgd" "--optimizer adagrad --update atomic" "--loss hinge --l2 0.0001"; do
	# shellcheck disable=SC2086
	"$BOAR" train --quiet --threads 1 --seed 42 --epochs 3 $extra \
		-m "$T/r1" "$A" || fail "train ($extra) exited $?"
	# shellcheck disable=SC2086
	"$BOAR" train --quiet --threads 1 --seed 42 --epochs 3 $extra \
		-m "$T/r2" "$A" || fail "train ($extra) exited $?"
	cmp -s "$T/r1" "$T/r2" ||
		fail "--threads 1 --seed 42 $extra: the two model files differ"
done
"$BOAR" train --quiet --threads 1 --seed 43 --epochs 3 -m "$T/r3" "$A" ||
	fail "train exited $?"
"$BOAR" train --quiet --threads 1 --seed 42 --epochs 3 -m "$T/r1" "$A" ||
	fail "train exited $?"
cmp -s "$T/r1" "$T/r3" && fail "seeds 42 and 43 gave identical models"

# Matrix factorization on ratings.
awk 'BEGIN { srand(11); for (i = 0; i < 5000; i++)
	printf "%d %d %d\n", 1 + int(rand() * 80), 1 + int(rand() * 60), 1 + int(rand() * 5) }' \
	>"$T/r.txt"
"$BOAR" train --quiet --task mf --rank 8 --threads 1 --seed 9 --epochs 3 \
	-m "$T/mf1" "$T/r.txt" || fail "mf train exited $?"
"$BOAR" train --quiet --task mf --rank 8 --threads 1 --seed 9 --epochs 3 \
	-m "$T/mf2" "$T/r.txt" || fail "mf train exited $?"
cmp -s "$T/mf1" "$T/mf2" || fail "mf: --threads 1 --seed 9 gave different models"
exit 0
