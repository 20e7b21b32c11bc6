#!/bin/sh
# Shards + workers on the cores of one host against one process using them
# all, same data: time to the single-node test loss (issue 13's first
# criterion: at most 1.5x).
#
#   bench/net/scale16.sh BOAR OUTDIR [CORES]     (CORES default: nproc)
#
# Data: `boar gen` 1.1M rows x 2^20 features x 30 non-zeros, power-law
# ids (skew 1); the first 1M rows train, the last 100k test. The single
# node trains EPOCHS (5) epochs with CORES threads; its final test loss is
# the target. Each cluster layout (shards x lanes, workers x threads, rows
# per clock) runs as separate processes on loopback, workers with
# --read-part, EPOCHS epochs; worker 0's per-epoch JSON gives the first
# epoch R whose test loss is at or below the target. "To target" is then
# the wall time of runs of R epochs (start of the shards to the end
# of worker 0: parsing, every evaluation and the gather included); the
# single node is timed the same way (the first epoch at or below its own
# final loss); each of these timed runs is the median of REPEAT (3) runs,
# as one host's parse times vary by a quarter run to run. RERUN=0 instead subtracts the later epochs' sweep seconds
# from the first run's wall (their evaluations stay in). The last columns
# are where worker 0's time went (boar_ps_phase; empty for a build
# without them), then its fixed costs outside the clocks: reading its part
# and the test set (load_s) and the gather after DONE (gather_s). Prints
# CSV on stdout; logs in OUTDIR.
# WORKER_OPTS: more options for every worker (e.g. --adagrad-sums local).
set -u
B=$1
O=$2
C=${3:-$(nproc)}
mkdir -p "$O"
D=${DATA:-$O/data}
mkdir -p "$D"
if [ ! -s "$D/train.svm" ]; then
	"$B" gen --rows 1100000 --features 1048576 --nnz 30 --skew 1 -q \
		-o "$D/all.svm" || exit 1
	head -n 1000000 "$D/all.svm" >"$D/train.svm"
	tail -n 100000 "$D/all.svm" >"$D/test.svm"
	rm -f "$D/all.svm"
fi
EPOCHS=${EPOCHS:-5}
RERUN=${RERUN:-1}
REPEAT=${REPEAT:-3}
. "$(dirname "$0")/target_lib.sh"

single() { # EPOCHS OUT: wall seconds on stdout
	t0=$(now)
	"$B" train --threads "$C" --epochs "$1" --json --test "$D/test.svm" \
		-q "$D/train.svm" >"$2" 2>"$O/single.err"
	t1=$(now)
	awk "BEGIN{print $t1 - $t0}"
}

single_wall=$(single "$EPOCHS" "$O/single.json")
target=$(last_loss "$O/single.json")
sr=$(reach "$target" "$O/single.json")
single_to=$single_wall
if [ "$RERUN" = 1 ] && [ "$sr" != - ]; then
	single_to=$(median single "$sr" "$O/single-to.json")
fi
echo "layout,shards,lanes,workers,threads,sync_every,wall_s,final_test_loss,target_loss,epoch_reached,to_target_s,ratio_to_single,keys_s,pull_s,local_s,sweep_s,push_s,clock_s,refresh_s,load_s,gather_s,setup_s"
echo "single,0,0,1,$C,-,$single_wall,$target,$target,$sr,$single_to,1.00,,,,,,,,,,"

port=$((20000 + $$ % 20000))
# cluster S L W T SYNC EPOCHS JSON: S shards of L lanes, W workers of T
# threads; wall seconds on stdout
cluster() {
	S=$1 L=$2 W=$3 T=$4 SYNC=$5 E=$6 J=$7
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
			--threads "$T" --epochs "$E" --sync-every "$SYNC" -q ${WORKER_OPTS:-} \
			"$D/train.svm" 2>>"$O/worker.err" &
	done
	timeout ${RUN_TIMEOUT:-60} "$B" train --ps "$ps" --worker "0/$W" --read-part \
		--threads "$T" --epochs "$E" --sync-every "$SYNC" -q ${WORKER_OPTS:-} \
		--shutdown-servers --json --test "$D/test.svm" "$D/train.svm" \
		>"$J" 2>>"$O/worker.err"
	t1=$(now)
	# worker 0 stopped the shards; if it failed, nobody did
	sleep 0.2
	kill $pids 2>/dev/null
	wait
	port=$((port + S))
	awk "BEGIN{print $t1 - $t0}"
}

# fixed JSON: worker 0's load_s,gather_s,setup_s (empty for a build
# without them)
fixed() {
	awk "$FIELD"'!/"epoch"/ && /"clocks"/ {
		printf "%s,%s,%s\n", field("load_s"), field("gather_s"),
			field("setup_s") }' "$1"
}

run_layout() {
	tag="s${1}l${2}w${3}t${4}y$5"
	wall=$(cluster "$1" "$2" "$3" "$4" "$5" "$EPOCHS" "$O/$tag.json")
	r=$(reach "$target" "$O/$tag.json")
	to=-
	ratio=-
	if [ "$r" != - ]; then
		if [ "$RERUN" = 1 ]; then
			to=$(median cluster "$1" "$2" "$3" "$4" "$5" "$r" \
				"$O/$tag-to.json")
		else
			to=$(awk "BEGIN{print $wall - $(sweeps_after "$r" "$O/$tag.json")}")
		fi
		ratio=$(awk "BEGIN{printf \"%.2f\", $to / $single_to}")
	fi
	printf "cluster,%s,%s,%s,%s,%s,%.2f,%.4f,%.4f,%s,%s,%s,%s,%s\n" "$1" \
		"$2" "$3" "$4" "$5" "$wall" "$(last_loss "$O/$tag.json")" \
		"$target" "$r" "$to" "$ratio" "$(phases "$O/$tag.json")" \
		"$(fixed "$O/$tag.json")"
}
# LAYOUTS: "S L W T SYNC;..." (default below)
echo "${LAYOUTS:-2 2 2 6 10000;2 2 2 6 100000;2 2 4 3 100000;4 1 4 3 100000}" |
	tr ';' '\n' | while read -r s l w t y; do
	[ -n "$s" ] && run_layout "$s" "$l" "$w" "$t" "$y"
done
