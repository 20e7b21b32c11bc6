#!/bin/sh
# What a backup costs a clean run (issue 13, chain replication): a9a, one
# shard (one lane), WORKERS (2) workers on loopback, no kill; the shard
# alone (`plain`) and the shard with a backup (`replica`: serve --backup /
# --replica-of, workers with --ps-backup), alternating, ROUNDS (5) rounds
# per sync interval of SYNCS ("500 100"). Wall
# time from the start of the shards to the end of worker 0 (whose final
# test loss is read too). CSV under $OUT, medians on stdout.
#
#   bench/net/replica_cost.sh        (BUILD=build dir with boar)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
BOAR=$BUILD/boar
OUT=${OUT:-bench/results/$(date -u +%Y%m%d)-$(hostname)/net}
ROUNDS=${ROUNDS:-5}
SYNCS=${SYNCS:-500 100}
EPOCHS=${EPOCHS:-10}
WORKERS=${WORKERS:-2}
mkdir -p "$OUT"
opts="--threads 1 --epochs $EPOCHS --seed 7 --quiet"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# start_shard NAME ARGS...: a shard on a port the kernel picks; its port
# in $port, its pid in $pid.
start_shard() {
	name=$1
	shift
	: >"$tmp/$name.err" # not the last run's "listening on"
	"$BOAR" serve --shard 0/1 --listen 127.0.0.1:0 --threads 1 \
		--staleness 1 "$@" 2>"$tmp/$name.err" &
	pid=$!
	while ! grep -q "listening on" "$tmp/$name.err"; do
		kill -0 $pid 2>/dev/null || { cat "$tmp/$name.err" >&2; exit 1; }
		sleep 0.02
	done
	port=$(sed -n 's/.*listening on [^ ]*:\([0-9]*\),.*/\1/p' "$tmp/$name.err")
}

# run KIND SYNC: one timed run; prints "seconds loss".
run() {
	t0=$(date +%s.%N)
	extra=""
	if [ "$1" = replica ]; then
		# (the primary's address is only logged; it is not known yet)
		start_shard backup --replica-of 127.0.0.1:9
		extra="--ps-backup 127.0.0.1:$port"
		start_shard primary --backup "127.0.0.1:$port"
	else
		start_shard primary
	fi
	for w in $(seq $((WORKERS - 1))); do
		"$BOAR" train $opts --sync-every "$2" --ps 127.0.0.1:$port \
			$extra --worker $w/$WORKERS datasets/a9a 2>/dev/null &
	done
	"$BOAR" train $opts --sync-every "$2" --ps 127.0.0.1:$port $extra \
		--worker 0/$WORKERS --json --shutdown-servers \
		--test datasets/a9a.t datasets/a9a >"$tmp/w0.json"
	wait
	t1=$(date +%s.%N)
	loss=$(tail -n 1 "$tmp/w0.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["test_loss"])')
	echo "$(echo "$t1 - $t0" | bc) $loss"
}

csv=$OUT/replica_cost.csv
echo "sync_every,round,kind,seconds,test_loss" >"$csv"
for sync in $SYNCS; do
	for r in $(seq "$ROUNDS"); do
		# alternate which goes first, so drift hits both alike
		if [ $((r % 2)) = 1 ]; then kinds="plain replica"; else kinds="replica plain"; fi
		for k in $kinds; do
			set -- $(run "$k" "$sync")
			echo "$sync,$r,$k,$1,$2" >>"$csv"
		done
	done
done
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for sync in sorted({r["sync_every"] for r in rows}, key=int, reverse=True):
    med = {}
    for k in ("plain", "replica"):
        s = [float(r["seconds"]) for r in rows if r["sync_every"] == sync and r["kind"] == k]
        l = [float(r["test_loss"]) for r in rows if r["sync_every"] == sync and r["kind"] == k]
        med[k] = statistics.median(s)
        print(f"sync {sync} {k:8s} median {med[k]:.3f} s (min {min(s):.3f}, max {max(s):.3f}) over {len(s)} runs; test loss {min(l):.5f}-{max(l):.5f}")
    print(f"sync {sync} replica / plain: {med['replica'] / med['plain']:.3f}")
PY
echo "CSV: $csv"
