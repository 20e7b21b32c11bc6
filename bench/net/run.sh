#!/bin/sh
# Network benchmarks of the parameter server; writes CSV files under
# bench/results/<date>-<host>/net/ (or $OUT) and prints them.
#
#   bench/net/run.sh [--quick]     (BUILD=build dir with libboar-net.a, libboar-internal.a and boar)
#
# 1. bench_net: keys/s and bytes/s per shard for push and pull, the
#    io_uring shard against a blocking-socket baseline, same run.
# 2. bytes per update on a9a training (2 workers, 1 shard): float32,
#    float16, and float16 with the significance filter at two thresholds,
#    with the test accuracy each reaches.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
quick=${1:-}
OUT=${OUT:-bench/results/$(date -u +%Y%m%d)-$(hostname)/net}
mkdir -p "$OUT"
sh bench/net/build_bench_net.sh "$BUILD"
"$BUILD/bench_net" $quick | tee "$OUT/throughput.csv"

BOAR=$BUILD/boar
port=$((30000 + $$ % 20000))
echo "mode,threshold,push_bytes_per_update,keys_offered,push_bytes,test_accuracy" >"$OUT/bytes_per_update.csv"
for mode in "f32 0" "f16 0" "f16 1e-4" "f16 1e-3" "f32 1e-3"; do
	set -- $mode
	extra=""
	[ "$1" = f16 ] && extra="--f16"
	[ "$2" != 0 ] && extra="$extra --push-threshold $2"
	"$BOAR" serve --shard 0/1 --listen 127.0.0.1:$port --quiet 2>/dev/null &
	spid=$!
	sleep 0.3
	"$BOAR" train --threads 1 --epochs 10 --seed 7 --quiet --sync-every 500 \
		--ps 127.0.0.1:$port --worker 1/2 $extra datasets/a9a &
	"$BOAR" train --threads 1 --epochs 10 --seed 7 --quiet --sync-every 500 \
		--ps 127.0.0.1:$port --worker 0/2 $extra --json --shutdown-servers \
		--test datasets/a9a.t datasets/a9a >"$OUT/w0.json"
	wait
	python3 - "$OUT/w0.json" "$1" "$2" >>"$OUT/bytes_per_update.csv" <<'PY'
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
print("%s,%s,%.3f,%d,%d,%.4f" % (sys.argv[2], sys.argv[3],
      last["push_bytes_per_update"], last["keys_offered"],
      last["push_bytes"], last["test_accuracy"]))
PY
	port=$((port + 1))
done
rm -f "$OUT/w0.json"
cat "$OUT/bytes_per_update.csv"
