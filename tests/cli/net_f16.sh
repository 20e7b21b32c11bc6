#!/bin/sh
# Cluster --f16 with weights far above half precision's 65504: a
# regression whose true weights are 2e5 and 3e4. Deltas that would
# overflow float16 travel as float32 frames, so the --f16 model matches the
# float32 cluster run within noise (it once ended at 2e7 with RMSE 1e7,
# exit 0).
. net/tests/lib.sh

python3 - "$T/big.svm" <<'PY'
import random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    for i in range(4000):
        a, b = random.random(), random.random()
        f.write("%.3f 1:%.4f 2:%.4f\n" % (200000 * a + 30000 * b + random.gauss(0, 1), a, b))
PY
O="--threads 1 --epochs 10 --seed 7 --loss squared --optimizer sgd --eta 0.5 --quiet --sync-every 200"

# cluster_rmse NAME EXTRA: 1 shard, 2 workers; the RMSE of the model on
# the training data.
cluster_rmse() {
	new_cluster
	serve 0 1 --staleness 1
	s0=$SPID
	"$BOAR" train $O --ps "$(ps_list 1)" --worker 1/2 $2 "$T/big.svm" 2>"$T/w1.err" &
	w1=$!
	PIDS="$PIDS $w1"
	"$BOAR" train $O --ps "$(ps_list 1)" --worker 0/2 $2 --shutdown-servers \
		-m "$T/$1.model" "$T/big.svm" 2>"$T/w0.err" || fail "$1: worker 0 failed"
	wait_ok $w1 "$1: worker 1"
	wait_ok $s0 "$1: the shard"
	"$BOAR" eval --json -m "$T/$1.model" "$T/big.svm" >"$T/$1.json" ||
		fail "$1: eval failed"
	json_field "$T/$1.json" test_rmse
}

f32=$(cluster_rmse f32 "")
f16=$(cluster_rmse f16 --f16)
f16t=$(cluster_rmse f16t "--f16 --push-threshold 1e-3")
echo "RMSE: float32 $f32, float16 $f16, float16 + filter $f16t (labels ~1e5)"
at_most "float32 cluster RMSE" "$f32" 20
# Within noise of the float32 run: a few units on labels of 1e5.
at_most "--f16 RMSE" "$f16" "$(awk -v x="$f32" 'BEGIN { print 2 * x + 5 }')"
at_most "--f16 --push-threshold RMSE" "$f16t" "$(awk -v x="$f32" 'BEGIN { print 2 * x + 5 }')"
exit 0
