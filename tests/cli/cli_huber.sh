#!/bin/sh
# --loss huber from the command line and in the cluster: on regression data
# with outliers (one row in ten pushed up by 30) a Huber model lands near
# the true weights where a squared-loss model does not, single-node and
# with two workers on one shard; the delta reaches the model file; a delta
# for another loss, or one that is not > 0, is refused with exit 2.
. net/tests/lib.sh

# y = 0.3 + sum_j w_j x_j, w_j = j/10 - 0.5 (j = 1..10), x_j in [-1, 1).
awk 'BEGIN {
	s = 7
	for (r = 0; r < 3000; r++) {
		y = 0.3; line = ""
		for (j = 1; j <= 10; j++) {
			s = (s * 1103515245 + 12345) % 2147483648
			x = s / 1073741824 - 1
			y += (j / 10 - 0.5) * x
			line = line " " j ":" x
		}
		if (r % 10 == 3) y += 30
		print y line
	}
}' >"$T/out.svm"

# distance MODEL: Euclidean distance of its weights and bias from the truth.
distance() {
	"$BOAR" export -m "$1" | awk '
		$1 == "bias" { d += ($2 - 0.3) ^ 2 }
		$1 ~ /^[0-9]+$/ { w[$1] = $2 }
		END { for (j = 1; j <= 10; j++) d += (w[j] - (j / 10 - 0.5)) ^ 2
		      printf "%.4f\n", sqrt(d) }'
}

OPTS="--threads 1 --epochs 20 --optimizer sgd --eta 0.02 --seed 3 --quiet"
"$BOAR" train $OPTS --loss squared -m "$T/sq.model" "$T/out.svm" ||
	fail "squared training"
"$BOAR" train $OPTS --loss huber -m "$T/hu.model" "$T/out.svm" ||
	fail "huber training"
sq=$(distance "$T/sq.model")
hu=$(distance "$T/hu.model")
echo "distance to the truth: squared $sq, huber $hu"
at_most "huber's distance" "$hu" 0.3
at_least "squared's distance" "$sq" 1
"$BOAR" export -m "$T/hu.model" | grep -qx "loss huber" ||
	fail "the export does not say loss huber"
"$BOAR" export -m "$T/hu.model" | grep -qx "delta 1" ||
	fail "the export does not show the default delta 1"
"$BOAR" train $OPTS --loss huber --huber-delta 0.5 -m "$T/h5.model" \
	"$T/out.svm" || fail "huber with --huber-delta 0.5"
"$BOAR" export -m "$T/h5.model" | grep -qx "delta 0.5" ||
	fail "the export does not show delta 0.5"
"$BOAR" eval -m "$T/hu.model" "$T/out.svm" 2>&1 | grep -q "huber loss" ||
	fail "boar eval does not name the huber loss"

expect_refused "a delta for squared loss" \
	"$BOAR" train --loss squared --huber-delta 2 "$T/out.svm"
[ "$rc" = 2 ] || fail "a delta for squared loss: exit $rc, expected 2"
expect_message "a delta for squared loss" "huber-delta is for --loss huber"
expect_refused "delta 0" "$BOAR" train --loss huber --huber-delta 0 "$T/out.svm"
[ "$rc" = 2 ] || fail "delta 0: exit $rc, expected 2"
"$BOAR" train --help | grep -q -- "--huber-delta" ||
	fail "--help does not list --huber-delta"
"$BOAR" train --help | grep -Eq "^  huber +robust regression" ||
	fail "--help does not list the huber loss"

# The cluster: one shard, two workers, the same data split between them.
new_cluster
serve 0 1
s0=$SPID
for r in 1 0; do
	extra=""
	[ $r = 0 ] && extra="--shutdown-servers -m $T/cl.model"
	"$BOAR" train $OPTS --loss huber --ps "$(ps_list 1)" --worker "$r/2" \
		--sync-every 200 $extra "$T/out.svm" >"$T/w$r.out" \
		2>"$T/w$r.err" &
	eval "w$r=\$!"
	PIDS="$PIDS $!"
done
wait_ok "$w0" "worker 0"
wait_ok "$w1" "worker 1"
wait_ok "$s0" "shard 0"
cl=$(distance "$T/cl.model")
echo "cluster huber: distance $cl"
at_most "the cluster's huber distance" "$cl" 0.5
"$BOAR" export -m "$T/cl.model" | grep -qx "loss huber" ||
	fail "the cluster's model is not a huber model"
exit 0
