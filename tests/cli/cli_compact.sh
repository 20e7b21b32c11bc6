#!/bin/sh
# AdaGrad's interleaved weights for the used features only
# (src/engine/engine_compact.c) train the same model: the same rows with
# every feature id doubled (half the feature space unused: the engine
# renumbers the used half) give, at one thread, the same weights bit for
# bit at the doubled ids, and the same bias, for the defaults (normalized)
# and AdaGrad, with and without L2 or L1 (their per-feature scales are
# renumbered too); and so does a warm-start chain whose middle run lacks a
# fifth of the features (their AdaGrad sums, kept aside, must survive into
# the last run). Enough rows and epochs that the engine packs its rows.
. tests/cli/lib/common.sh

"$BOAR" gen --quiet --rows 70000 --features 5000 --nnz 10 --skew 1 --seed 9 \
	-o "$T/d" || fail "gen exited $?"
# the same rows with ids doubled; and both without the rarest fifth
awk '{ printf "%s", $1; for (i = 2; i <= NF; i++) { split($i, p, ":")
	printf " %d:%s", 2 * p[1], p[2] } print "" }' "$T/d" >"$T/s"
for f in d s; do
	lim=4000
	[ $f = s ] && lim=8000
	awk -v L=$lim '{ printf "%s", $1; for (i = 2; i <= NF; i++) {
		split($i, p, ":"); if (p[1] <= L) printf " %s", $i } print "" }' \
		"$T/$f" >"$T/$f.sub"
done

# same NAME: dense and doubled models' dumps agree (weights at 2j, bias)
same() {
	"$BOAR" dump -m "$T/d.$1" >"$T/d.dump" || fail "$1: dump exited $?"
	"$BOAR" dump -m "$T/s.$1" >"$T/s.dump" || fail "$1: dump exited $?"
	awk 'NR == FNR { if ($1 ~ /^[0-9]+$/) w[2 * $1] = $2; else if ($1 == "bias") b = $2; next }
	     $1 == "bias" { if ($2 != b) bad = bad " bias " $2 "/" b }
	     $1 ~ /^[0-9]+$/ { n++; if ($1 % 2 || w[$1] != $2) bad = bad " " $1 }
	     END { if (n < 4000 || bad != "") { print "differ:" substr(bad, 1, 200) " (" n " weights)"; exit 1 } }' \
		"$T/d.dump" "$T/s.dump" || fail "$1: the doubled ids trained another model"
}

for opt in normalized adagrad "adagrad --l2 1e-4" "adagrad --l1 1e-5"; do
	name=$(echo "$opt" | tr -d ' -')
	for f in d s; do
		"$BOAR" train --quiet --epochs 3 --threads 1 --optimizer $opt \
			-m "$T/$f.$name" "$T/$f" || fail "$opt: train exited $?"
	done
	same "$name"
done

for f in d s; do
	"$BOAR" train --quiet --epochs 2 --threads 1 --optimizer adagrad \
		--save-resume -m "$T/$f.a" "$T/$f" &&
		"$BOAR" train --quiet --epochs 2 --threads 1 --init-model "$T/$f.a" \
			-m "$T/$f.b" "$T/$f.sub" &&
		"$BOAR" train --quiet --epochs 2 --threads 1 --init-model "$T/$f.b" \
			-m "$T/$f.c" "$T/$f" || fail "warm start chain ($f) failed"
done
same c
exit 0
