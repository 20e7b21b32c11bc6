#!/bin/sh
# accuracy_run.sh - CPU and GPU engines side by side through the CLI on
# generated data larger than the test sets: issue 2's peer shapes (1M rows x
# 2^20 features, ~30 nnz, power-law ids; 9M ratings, 20k x 10k, rank 16).
# Prints, per run, the last epoch's test metrics, the median epoch time and
# the whole command's wall time. Needs $BOAR (a CUDA build) and a GPU.
#   BOAR=build-gpu/boar sh bench/gpu/accuracy_run.sh [DIR]
set -eu
BOAR=${BOAR:-build-gpu/boar}
D=${1:-/tmp/boar-acc}
mkdir -p "$D"
[ -f "$D/lin.train" ] || {
	"$BOAR" gen -q --task linear --rows 1000000 --features 1048576 --nnz 30 \
		--skew 1 --seed 11 -o "$D/lin.all"
	head -n 800000 "$D/lin.all" >"$D/lin.train"
	tail -n 200000 "$D/lin.all" >"$D/lin.test"
	"$BOAR" gen -q --task mf --rows 10000000 --users 20000 --items 10000 \
		--rank 16 --seed 12 -o "$D/mf.all"
	head -n 9000000 "$D/mf.all" >"$D/mf.train"
	tail -n 1000000 "$D/mf.all" >"$D/mf.test"
}
summ() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
last = rows[-1]
secs = sorted(r["seconds"] for r in rows)
keys = [k for k in ("test_accuracy", "test_auc", "test_loss", "test_rmse") if k in last]
print("%-34s epochs %2d  median epoch %.4f s  wall %s s  %s" % (sys.argv[2], len(rows),
      secs[len(secs) // 2], sys.argv[3], "  ".join("%s %.4f" % (k, last[k]) for k in keys)))
PY
}
run() {
	name=$1
	shift
	t0=$(date +%s.%N)
	"$BOAR" train --json "$@" >"$D/out.json" 2>"$D/err" || { cat "$D/err"; exit 1; }
	t1=$(date +%s.%N)
	summ "$D/out.json" "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
}
for dev in cpu gpu; do
	run "linear adagrad $dev" --device $dev --epochs 5 --test "$D/lin.test" "$D/lin.train"
	run "linear sgd $dev" --device $dev --optimizer sgd --epochs 5 --test "$D/lin.test" "$D/lin.train"
	run "mf rank 16 sgd $dev" --device $dev --task mf --optimizer sgd --rank 16 --epochs 20 \
		--test "$D/mf.test" "$D/mf.train"
done
