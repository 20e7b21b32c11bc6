#!/bin/sh
# Shards + workers on the cores of one host against one process using them
# all, same data: time to the single-node test loss (issue 13's first
# criterion: at most 1.5x).
#
#   bench/net/scale16.sh BOAR OUTDIR [CORES]     (CORES default: nproc)
#
# Data: `boar gen` 1.1M rows x 2^20 features x 30 non-zeros, power-law
# ids (skew 1); the first 1M rows train, the last 100k test. The single
# node trains 5 epochs with CORES threads; its final test loss is the
# target. Each cluster layout (shards x lanes, workers x threads, rows
# per clock) runs as separate processes on loopback, workers with
# --read-part; worker 0's per-epoch JSON gives the epoch that reaches the
# target. Wall times are whole runs (start of the shards to the end of
# worker 0, parsing included), and "to target" removes the epochs after
# the one that reached it. Prints CSV on stdout; logs in OUTDIR.
set -u
B=$1
O=$2
C=${3:-$(nproc)}
mkdir -p "$O"
D=$O/data
mkdir -p "$D"
if [ ! -s "$D/all.svm" ]; then
	"$B" gen --rows 1100000 --features 1048576 --nnz 30 --skew 1 -q \
		-o "$D/all.svm" || exit 1
	head -n 1000000 "$D/all.svm" >"$D/train.svm"
	tail -n 100000 "$D/all.svm" >"$D/test.svm"
fi
now() { date +%s.%N; }
EPOCHS=${EPOCHS:-5}

t0=$(now)
"$B" train --threads "$C" --epochs "$EPOCHS" --json --test "$D/test.svm" -q \
	"$D/train.svm" >"$O/single.json" 2>"$O/single.err"
t1=$(now)
single_wall=$(awk "BEGIN{print $t1 - $t0}")
target=$(tail -n 1 "$O/single.json" | sed 's/.*"test_loss": \([0-9.e-]*\).*/\1/')
echo "layout,shards,lanes,workers,threads,sync_every,wall_s,final_test_loss,target_loss,epoch_reached,to_target_s,ratio_to_single"
echo "single,0,0,1,$C,-,$single_wall,$target,$target,$EPOCHS,$single_wall,1.00"

port=$((20000 + $$ % 20000))
# S L W T SYNC: S shards of L lanes, W workers of T threads
run_layout() {
	S=$1 L=$2 W=$3 T=$4 SYNC=$5
	ps=""
	for i in $(seq 0 $((S - 1))); do
		ps="$ps${ps:+,}127.0.0.1:$((port + i))"
	done
	t0=$(now)
	pids=""
	for i in $(seq 0 $((S - 1))); do
		"$B" serve --shard "$i/$S" --listen "127.0.0.1:$((port + i))" \
			--staleness 3 --threads "$L" -q 2>>"$O/serve.err" &
		pids="$pids $!"
	done
	for r in $(seq 1 $((W - 1))); do
		timeout ${RUN_TIMEOUT:-60} "$B" train --ps "$ps" --worker "$r/$W" --read-part \
			--threads "$T" --epochs "$EPOCHS" --sync-every "$SYNC" -q \
			"$D/train.svm" 2>>"$O/worker.err" &
	done
	tag="s${S}l${L}w${W}t${T}y$SYNC"
	timeout ${RUN_TIMEOUT:-60} "$B" train --ps "$ps" --worker "0/$W" --read-part \
		--threads "$T" --epochs "$EPOCHS" --sync-every "$SYNC" -q \
		--shutdown-servers --json --test "$D/test.svm" "$D/train.svm" \
		>"$O/$tag.json" 2>>"$O/worker.err"
	t1=$(now)
	# worker 0 stopped the shards; if it failed, nobody did
	sleep 0.2
	kill $pids 2>/dev/null
	wait
	port=$((port + S))
	wall=$(awk "BEGIN{print $t1 - $t0}")
	awk -v target="$target" -v wall="$wall" -v single="$single_wall" \
		-v tag="$S,$L,$W,$T,$SYNC" '
	function field(name,   m) {
		if (match($0, "\"" name "\": [-0-9.e+]*")) {
			m = substr($0, RSTART, RLENGTH)
			sub(/.*: /, "", m)
			return m + 0
		}
		return ""
	}
	/"epoch"/ { n++; ep[n] = field("epoch"); sec[n] = field("seconds")
		    tl = field("test_loss")
		    if (reach == "" && tl != "" && tl <= target) reach = ep[n] }
	{ last = field("test_loss") }
	END {
		to = wall
		if (reach == "") { printf "cluster,%s,%.2f,%.4f,%.4f,-,-,-\n", tag, wall, last, target; exit }
		for (i = 1; i <= n; i++) if (ep[i] > reach) to -= sec[i]
		printf "cluster,%s,%.2f,%.4f,%.4f,%d,%.2f,%.2f\n", tag, wall, last, target, reach, to, to / single
	}' "$O/$tag.json"
}
# LAYOUTS: "S L W T SYNC;..." (default below)
echo "${LAYOUTS:-2 4 2 6 1000;2 4 2 6 10000;4 2 4 3 10000;1 4 4 3 10000;2 2 4 3 10000;1 2 1 14 10000}" |
	tr ';' '\n' | while read -r s l w t y; do
	run_layout "$s" "$l" "$w" "$t" "$y"
done
