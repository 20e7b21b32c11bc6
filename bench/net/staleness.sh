#!/bin/sh
# Staleness experiments on a9a (1 shard, loopback), CSV under $OUT:
#
#  staleness.csv  test loss per epoch against training time for
#                 s = 0, 1, 3, 10, inf, with and without a straggler (worker
#                 1 sleeps THROTTLE ms after every clock), 2 workers;
#  workers.csv    1..3 workers at s = 1: time to reach the target test loss
#                 (the single-node run's final loss + 0.001) and the final
#                 accuracy.
#
#   bench/net/staleness.sh        (BUILD=build dir with boar)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
BOAR=$BUILD/boar
OUT=${OUT:-bench/results/$(date -u +%Y%m%d)-$(hostname)/net}
THROTTLE=${THROTTLE:-5}
EPOCHS=${EPOCHS:-10}
mkdir -p "$OUT"
port=$((31000 + $$ % 15000))
base="--threads 1 --epochs $EPOCHS --seed 7 --quiet"
opts="$base --sync-every 200"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run W S EXTRA1: W workers against one shard with staleness S; worker 1
# gets EXTRA1; worker 0's JSON lines in $tmp/w0.json, the shard's in
# $tmp/s.err.
run() {
	w=$1 s=$2 extra1=$3
	"$BOAR" serve --shard 0/1 --listen 127.0.0.1:$port --staleness "$s" \
		2>"$tmp/s.err" &
	sp=$!
	sleep 0.3
	r=$((w - 1))
	while [ $r -ge 1 ]; do
		e=""
		[ $r = 1 ] && e=$extra1
		"$BOAR" train $opts --ps 127.0.0.1:$port --worker $r/$w $e \
			datasets/a9a 2>/dev/null &
		r=$((r - 1))
	done
	"$BOAR" train $opts --ps 127.0.0.1:$port --worker 0/$w --json \
		--shutdown-servers --test datasets/a9a.t datasets/a9a >"$tmp/w0.json"
	wait
	port=$((port + 1))
}

"$BOAR" train $base --json --test datasets/a9a.t datasets/a9a >"$tmp/single.json"
target=$(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("%.4f" % (rows[-1]["test_loss"] + 0.001))' "$tmp/single.json")

echo "s,straggler,epoch,train_seconds,test_loss,test_accuracy,max_staleness_served" >"$OUT/staleness.csv"
for s in 0 1 3 10 inf; do
	for strag in no yes; do
		e=""
		[ $strag = yes ] && e="--throttle-ms $THROTTLE"
		run 2 $s "$e"
		st=$(sed -n 's/.*max_staleness_served=\([0-9]*\).*/\1/p' "$tmp/s.err" | tail -1)
		python3 - "$tmp/w0.json" $s $strag "$st" >>"$OUT/staleness.csv" <<'PY'
import json, sys
t = 0.0
for l in open(sys.argv[1]):
    j = json.loads(l)
    if "epoch" not in j:
        continue
    t += j["seconds"]
    print("%s,%s,%d,%.4f,%.5f,%.5f,%s" % (sys.argv[2], sys.argv[3], j["epoch"],
          t, j["test_loss"], j["test_accuracy"], sys.argv[4]))
PY
	done
done

echo "workers,time_to_target_s,target_loss,final_test_loss,final_accuracy" >"$OUT/workers.csv"
for w in 1 2 3; do
	run $w 1 ""
	python3 - "$tmp/w0.json" $w "$target" >>"$OUT/workers.csv" <<'PY'
import json, sys
t, hit, last = 0.0, None, None
for l in open(sys.argv[1]):
    j = json.loads(l)
    if "epoch" not in j:
        continue
    t += j["seconds"]
    last = j
    if hit is None and j["test_loss"] <= float(sys.argv[3]):
        hit = t
print("%s,%s,%s,%.5f,%.5f" % (sys.argv[2], "%.4f" % hit if hit else "never",
      sys.argv[3], last["test_loss"], last["test_accuracy"]))
PY
done
cat "$OUT/staleness.csv" "$OUT/workers.csv"
