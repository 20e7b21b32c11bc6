#!/bin/sh
# Matrix factorization in the cluster against one process: test RMSE
# after every epoch and the wall time, for W workers of T threads each.
#
#   bench/net/mf_scale.sh BOAR OUTDIR        (CSV on stdout, logs in OUTDIR)
#
# Data: `boar gen --task mf` ROWS + TEST ratings of USERS x ITEMS, rank
# RANK, seed 5 (random order, so with --read-part nearly every user is
# held by every worker); the first ROWS train, the rest test; ORDER=user
# trains on them sorted by user (as a ratings log grouped by user: with
# --read-part only the users cut by a part boundary are shared). The single
# node: `boar train --threads CORES --early-stop 0`. Each layout "WxT"
# of LAYOUTS: SHARDS shards (LANES lanes, staleness STALENESS) and W
# workers of T threads, SYNC/W ratings per clock (used by builds without
# strata), worker 0 evaluating after every epoch; READ_PART=1 (default):
# each worker reads its part (--read-part --users --items), 0: every
# worker reads the whole file and takes a hash-chosen 1/W of its users.
# Wall: starting the shards to the end of worker 0 (parse, agreement,
# every epoch with its evaluation, gather), the median of REPEAT runs;
# RMSE per epoch and the phases from the last.
#
# NET=shaped (needs root, ip, tc): every worker and shard on a "machine"
# of its own (network namespace, CORES/MACHINES cores by taskset), the
# machines joined through a bridge by veth links shaped with tbf to RATE
# (10gbit) each way; shard i runs on machine i, worker r on machine r;
# the frames are authenticated (a secret file), as off loopback they must.
# Knobs: ROWS (4000000) TEST (400000) USERS (100000) ITEMS (20000) RANK
# (16) EPOCHS (5) SHARDS (2) LANES (2) SYNC (40000) STALENESS (1)
# LAYOUTS ("1x12 2x6 4x3 1x3 2x3") REPEAT (3) CORES (nproc) MACHINES (4)
# RATE ORDER (random) WORKER_OPTS; SINGLE=0 skips the single node.
set -u
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
O=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$O"
O=$(cd "$O" && pwd)
ROWS=${ROWS:-4000000}
TEST=${TEST:-400000}
USERS=${USERS:-100000}
ITEMS=${ITEMS:-20000}
RANK=${RANK:-16}
EPOCHS=${EPOCHS:-5}
SHARDS=${SHARDS:-2}
LANES=${LANES:-2}
SYNC=${SYNC:-40000}
STALENESS=${STALENESS:-1}
LAYOUTS=${LAYOUTS:-"1x12 2x6 4x3 1x3 2x3"}
REPEAT=${REPEAT:-3}
READ_PART=${READ_PART:-1}
CORES=${CORES:-$(nproc)}
NET=${NET:-loopback}
MACHINES=${MACHINES:-4}
RATE=${RATE:-10gbit}
. "$here/target_lib.sh"

D=${DATA:-$O/data}
mkdir -p "$D"
if [ ! -s "$D/test.txt" ]; then
	"$B" gen --task mf --rows $((ROWS + TEST)) --users "$USERS" \
		--items "$ITEMS" --rank "$RANK" --seed 5 -q -o "$D/all.txt" ||
		exit 1
	head -n "$ROWS" "$D/all.txt" >"$D/train.txt"
	tail -n "$TEST" "$D/all.txt" >"$D/test.txt"
	rm -f "$D/all.txt"
fi
F=$D/train.txt
if [ "${ORDER:-random}" = user ]; then
	F=$D/train-user.txt
	[ -s "$F" ] || sort -s -n -k1,1 "$D/train.txt" >"$F" || exit 1
fi
MF="--epochs $EPOCHS --rank $RANK --seed 7 -q"

# ------------------------------------------------- machines (NET=shaped)
NS=mfb$$
AUTH=""
on() { shift; "$@"; } # on MACHINE CMD...: CMD on that machine (loopback: here)
host() { echo 127.0.0.1; }
if [ "$NET" = shaped ]; then
	[ "$(id -u)" = 0 ] || { echo "mf_scale.sh: NET=shaped needs root" >&2; exit 77; }
	K=$((CORES / MACHINES))
	host() { echo "10.98.0.$(($1 + 1))"; }
	on() {
		_m=$1
		shift
		ip netns exec "$NS-$_m" taskset -c \
			"$((_m * K))-$((_m * K + K - 1))" "$@"
	}
	teardown() {
		for m in $(seq 0 $((MACHINES - 1))); do
			for p in $(ip netns pids "$NS-$m" 2>/dev/null); do
				kill "$p" 2>/dev/null
			done
			ip netns del "$NS-$m" 2>/dev/null
		done
		ip netns del "$NS-br" 2>/dev/null
	}
	trap teardown EXIT
	# tbf on DEV of namespace N: RATE, 128 KiB burst, 2 ms of queue
	limit_dev() {
		ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$RATE" \
			burst 131072 latency 2ms
	}
	ip netns add "$NS-br" && ip -n "$NS-br" link add sw type bridge &&
		ip -n "$NS-br" link set sw up || exit 77
	for m in $(seq 0 $((MACHINES - 1))); do
		ip netns add "$NS-$m" &&
			ip link add eth0 netns "$NS-$m" mtu 9000 type veth peer \
				name "v$m" netns "$NS-br" mtu 9000 &&
			ip -n "$NS-br" link set "v$m" master sw up &&
			ip -n "$NS-$m" addr add "$(host "$m")/24" dev eth0 &&
			ip -n "$NS-$m" link set eth0 up &&
			ip -n "$NS-$m" link set lo up &&
			limit_dev "$NS-$m" eth0 && limit_dev "$NS-br" "v$m" ||
			{ echo "mf_scale.sh: cannot build or shape the links" >&2; exit 77; }
	done
	echo "# $MACHINES machines x $K cores, links $RATE each way (tbf)" >&2
	# not loopback: the shards want a shared secret
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$O/secret"
	AUTH="--secret-file $O/secret"
fi

# ------------------------------------------------------------------- runs
single() { # OUT: wall seconds on stdout
	t0=$(now)
	"$B" train --threads "$CORES" $MF --early-stop 0 --json \
		--test "$D/test.txt" "$F" >"$1" 2>>"$O/single.err"
	t1=$(now)
	awk "BEGIN{print $t1 - $t0}"
}

# cluster W T JSON: wall seconds on stdout
cluster() {
	W=$1 T=$2 J=$3
	# below the kernel's ephemeral ports (32768 up), which the workers'
	# connections of a run just ended may still hold: a shard's listen
	# then failed (Address already in use) and the run with it
	port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 12000))
	ps=""
	for i in $(seq 0 $((SHARDS - 1))); do
		ps="$ps${ps:+,}$(host "$i"):$((port + i))"
	done
	part=""
	[ "$READ_PART" = 1 ] && part="--read-part --users $USERS --items $ITEMS"
	t0=$(now)
	pids=""
	for i in $(seq 0 $((SHARDS - 1))); do
		on "$i" "$B" serve --shard "$i/$SHARDS" --listen \
			"$(host "$i"):$((port + i))" --staleness "$STALENESS" \
			--threads "$LANES" $AUTH -q 2>>"$O/serve.err" &
		pids="$pids $!"
	done
	for r in $(seq 1 $((W - 1))); do
		on "$r" timeout "${RUN_TIMEOUT:-300}" "$B" train --ps "$ps" \
			--worker "$r/$W" --threads "$T" --sync-every \
			$((SYNC / W)) $part $MF $AUTH ${WORKER_OPTS:-} "$F" \
			2>>"$O/worker.err" &
		pids="$pids $!"
	done
	on 0 timeout "${RUN_TIMEOUT:-300}" "$B" train --ps "$ps" \
		--worker "0/$W" --threads "$T" --sync-every $((SYNC / W)) $part \
		$MF $AUTH ${WORKER_OPTS:-} --shutdown-servers --json \
		--test "$D/test.txt" "$F" >"$J" 2>>"$O/worker.err"
	t1=$(now)
	sleep 0.2
	kill $pids 2>/dev/null
	wait
	awk "BEGIN{print $t1 - $t0}"
}

# rmses JSON: the test RMSE after each epoch, space-separated
rmses() {
	awk "$FIELD"'/"epoch"/ { printf "%s%.4f", n++ ? " " : "", field("test_rmse") }
		END { print "" }' "$1"
}

echo "layout,workers,threads,read_part,order,net,wall_s,rmse_per_epoch,keys_s,pull_s,local_s,sweep_s,push_s,clock_s,refresh_s"
if [ "${SINGLE:-1}" = 1 ]; then
wall=$(median single "$O/single.json")
echo "single,0,$CORES,-,${ORDER:-random},-,$(printf %.2f "$wall"),$(rmses "$O/single.json"),,,,,,,"
fi
for lay in $LAYOUTS; do
	W=${lay%x*} T=${lay#*x}
	J="$O/w${W}t$T.json"
	wall=$(median cluster "$W" "$T" "$J")
	echo "$lay,$W,$T,$READ_PART,${ORDER:-random},$NET,$(printf %.2f "$wall"),$(rmses "$J"),$(phases "$J")"
done
