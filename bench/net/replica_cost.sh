#!/bin/sh
# What a backup costs a clean run (issue 13, chain replication): a9a, one
# shard (one lane), WORKERS (2) workers on loopback, no kill; the shard
# alone (`plain`) and the shard with a backup (`replica`: serve --backup /
# --replica-of, workers with --ps-backup), alternating, ROUNDS (5) rounds
# per sync interval of SYNCS ("500 100"). Wall time from the start of the
# shards to the end of worker 0 (whose final test loss is read too). CSV
# under $OUT, medians on stdout.
#
# BACKUP_DELAY_US=D puts the backup on another "machine": the primary and
# the workers in one network namespace, the backup in another, joined by
# a veth whose input is delayed D us on each side (delay_link.sh, so a
# round trip to the backup takes 2 D more), every process with a secret
# (the backup listens beyond loopback); both kinds run so. Needs root,
# iptables and NFQUEUE, and $BUILD/bench/nfq_delay (make bench-bin, or
# NFQ=path).
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
DELAY=${BACKUP_DELAY_US:-}
mkdir -p "$OUT"
opts="--threads 1 --epochs $EPOCHS --seed 7 --quiet"
tmp=$(mktemp -d)
# in_a / in_b: run in the primary's / the backup's namespace (none
# without a delay); host: where the backup listens
in_a="" in_b="" host=127.0.0.1 secret=""
A=rca$$ B=rcb$$
cleanup() {
	if [ -n "$DELAY" ]; then
		for n in $A $B; do
			sh bench/net/delay_link.sh stop $n "$tmp/delay.log" 2>/dev/null
			for p in $(ip netns pids $n 2>/dev/null); do kill $p 2>/dev/null; done
		done
		sleep 0.1
		ip netns del $A 2>/dev/null
		ip netns del $B 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ -n "$DELAY" ]; then
	NFQ=${NFQ:-$BUILD/bench/nfq_delay}
	[ -x "$NFQ" ] || { echo "no $NFQ (make bench-bin)" >&2; exit 1; }
	ip netns add $A && ip netns add $B &&
		ip link add eth0 netns $A type veth peer name eth0 netns $B &&
		ip -n $A addr add 10.95.0.1/24 dev eth0 &&
		ip -n $B addr add 10.95.0.2/24 dev eth0 &&
		for n in $A $B; do
			ip -n $n link set lo up && ip -n $n link set eth0 up || exit 1
		done
	for n in $A $B; do
		sh bench/net/delay_link.sh start $n "$DELAY" "$NFQ" "$tmp/delay.log"
	done
	in_a="ip netns exec $A" in_b="ip netns exec $B" host=10.95.0.2
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
	secret="--secret-file $tmp/secret"
fi

# start_shard NAME NETNS-PREFIX HOST ARGS...: a shard on a port the
# kernel picks; its port in $port, its pid in $pid.
start_shard() {
	name=$1 ns=$2 at=$3
	shift 3
	: >"$tmp/$name.err" # not the last run's "listening on"
	$ns "$BOAR" serve --shard 0/1 --listen "$at:0" --threads 1 \
		--staleness 1 $secret "$@" 2>"$tmp/$name.err" &
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
		start_shard backup "$in_b" $host --replica-of 127.0.0.1:9
		extra="--ps-backup $host:$port"
		start_shard primary "$in_a" 127.0.0.1 --backup "$host:$port"
	else
		start_shard primary "$in_a" 127.0.0.1
	fi
	for w in $(seq $((WORKERS - 1))); do
		$in_a "$BOAR" train $opts $secret --sync-every "$2" \
			--ps 127.0.0.1:$port $extra --worker $w/$WORKERS \
			datasets/a9a 2>/dev/null &
	done
	$in_a "$BOAR" train $opts $secret --sync-every "$2" \
		--ps 127.0.0.1:$port $extra --worker 0/$WORKERS --json \
		--shutdown-servers --test datasets/a9a.t datasets/a9a \
		>"$tmp/w0.json"
	wait
	t1=$(date +%s.%N)
	loss=$(tail -n 1 "$tmp/w0.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["test_loss"])')
	echo "$(python3 -c "print($t1 - $t0)") $loss"
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
