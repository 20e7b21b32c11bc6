#!/bin/sh
# --loss quantile and --loss poisson from the command line and in the
# cluster. Quantile: labels y = 1 + w.x + U(0, 4) noise; a tau-0.9 model
# must put about 90% of fresh labels below its predictions (2000 test rows:
# sampling error ~0.007) and its bias near the noise's 0.9-quantile, 1 + 3.6.
# Poisson: counts of mean exp(0.5 + w.x); `predict` writes counts (the mean
# prediction on the training rows is the mean count, the score equation of
# a Poisson fit with a bias), and the cluster lands near the same weights.
# A negative count is refused naming the file and row (exit 1); tau outside
# (0, 1) and --quantile-tau with another loss are refused with exit 2, a
# model file whose tau is outside (0, 1) with exit 1.
. net/tests/lib.sh
. tests/cli/lib/regression.sh

# w_j = j/5 - 0.6 (j = 1..5), x_j in [-1, 1). Quantile: 1 + m + U(0, 4);
# Poisson: a count of mean exp(0.5 + m), by Knuth's product of uniforms.
TRUE_W="j / 5 - 0.6"
QUANTILE='print 1 + m + 4 * unif() line'
POISSON='floor_p = exp(-exp(0.5 + m)); k = 0; p = 1
	while ((p *= unif()) > floor_p) k++
	print k line'
lcg_data 11 4000 5 "$QUANTILE" >"$T/q.svm"
lcg_data 12 2000 5 "$QUANTILE" >"$T/qt.svm"
lcg_data 5 4000 5 "$POISSON" >"$T/p.svm"

OPTS="--threads 1 --epochs 20 --seed 3 --quiet"
"$BOAR" train $OPTS --loss quantile --quantile-tau 0.9 -m "$T/q.model" \
	"$T/q.svm" || fail "quantile training"
"$BOAR" eval -m "$T/q.model" "$T/qt.svm" >"$T/qe" || fail "quantile eval"
cat "$T/qe"
below=$(sed -n 's/.*labels below the prediction \([0-9.]*\).*/\1/p' "$T/qe")
at_least "labels below the tau-0.9 predictions" "$below" 0.87
at_most "labels below the tau-0.9 predictions" "$below" 0.93
"$BOAR" export -m "$T/q.model" | grep -qx "tau 0.899999976" ||
	fail "the export does not show tau 0.9"
bias=$("$BOAR" export -m "$T/q.model" | awk '$1 == "bias" { print $2 }')
at_least "the tau-0.9 bias" "$bias" 4.4
at_most "the tau-0.9 bias" "$bias" 4.8

"$BOAR" train $OPTS --loss poisson -m "$T/p.model" "$T/p.svm" ||
	fail "poisson training"
"$BOAR" predict -m "$T/p.model" "$T/p.svm" >"$T/pp" || fail "poisson predict"
ratio=$(paste -d ' ' "$T/pp" "$T/p.svm" | awk '
	$1 <= 0 { bad = 1 } { sp += $1; sy += $2 }
	END { if (bad) print "nonpositive"; else printf "%.4f\n", sp / sy }')
echo "poisson: mean prediction / mean count = $ratio"
at_least "mean prediction / mean count" "$ratio" 0.98
at_most "mean prediction / mean count" "$ratio" 1.02
"$BOAR" eval -m "$T/p.model" "$T/p.svm" | grep -q "poisson loss" ||
	fail "boar eval does not name the poisson loss"

# distance MODEL: of the weights and bias from the truth (bias 0.5).
distance() {
	weights_distance "$1" 0.5 5
}
single=$(distance "$T/p.model")
at_most "the poisson model's distance to the truth" "$single" 0.15

sed '7s/^[0-9]*/-2/' "$T/p.svm" >"$T/neg.svm"
expect_refused "a negative count" "$BOAR" train --loss poisson "$T/neg.svm"
[ "$rc" = 1 ] || fail "a negative count: exit $rc, expected 1"
expect_message "a negative count" "neg.svm: row 7: label -2: poisson loss needs labels >= 0"
expect_refused "tau 1" "$BOAR" train --loss quantile --quantile-tau 1 "$T/q.svm"
[ "$rc" = 2 ] || fail "tau 1: exit $rc, expected 2"
expect_message "tau 1" "tau.* must be in .0, 1."
expect_refused "a tau for poisson" \
	"$BOAR" train --loss poisson --quantile-tau 0.3 "$T/p.svm"
[ "$rc" = 2 ] || fail "a tau for poisson: exit $rc, expected 2"
"$BOAR" train --help | grep -q -- "--quantile-tau" ||
	fail "--help does not list --quantile-tau"
"$BOAR" train --help | grep -Eq "^  poisson +counts" ||
	fail "--help does not list the poisson loss"

# The file keeps tau (in the header's mu); a forged tau outside (0, 1) is
# refused on load, as a wrong one would shift every prediction's quantile.
if have_python; then
	python3 tests/cli/lib/forge_model.py "$T/q.model" "$T/q15.model" mu=1.5
	expect_refused "a model with tau 1.5" "$BOAR" eval -m "$T/q15.model" "$T/qt.svm"
	[ "$rc" = 1 ] || fail "a model with tau 1.5: exit $rc, expected 1"
	expect_message "a model with tau 1.5" "q15.model.*mu"
	python3 tests/cli/lib/forge_model.py "$T/q.model" "$T/q25.model" mu=0.25
	"$BOAR" eval -m "$T/q25.model" "$T/qt.svm" >/dev/null ||
		fail "a model with tau 0.25 is refused"
fi

# The cluster: one shard, two workers, the Poisson data split between them.
echo "poisson: distance to the truth $single"
cluster_fits poisson "$T/p.svm" 0.2 $OPTS
exit 0
