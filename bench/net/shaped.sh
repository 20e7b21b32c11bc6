#!/bin/sh
# The cluster as a cluster user sees it, on one host: "machines" in
# network namespaces, joined by one switch over veth links shaped to a
# line rate (tbf) with latency added where the kernel has netem; strong
# scaling, weak scaling and the SSP staleness sweep with a straggler, each
# as the time to the single-node test loss (issue 13). Needs root.
#
#   bench/net/shaped.sh BOAR OUTDIR        (CSV on stdout, logs in OUTDIR)
#
# Network: namespace SW holds a bridge; machine i (of M, namespace Mi) has
# eth0 = 10.99.0.(i+1), a veth to port p<i> of the bridge. Each direction
# of each link is shaped on its egress: eth0 (machine -> switch) and p<i>
# (switch -> machine), tbf at RATE, burst 200 us of the rate (at least
# 128 KiB, above a 64 KiB GSO packet), a 2 ms queue; with netem, DELAY on
# each egress under the tbf, so a message between two machines waits
# 2 DELAY one way. A machine's processes run on its own CORES/M cores
# (taskset), so machines share no cores; a shard talks to its machine's
# worker over that namespace's loopback, as on a real host.
#
# Layout: M shards (one per machine, LANES lanes each, the same shards in
# every run of a part) and W workers (machines 0..W-1, THREADS training
# threads each, --read-part, staleness STALENESS, SYNC rows per clock).
# Time to target, as in scale16.sh: a run of EPOCHS epochs gives the first
# epoch R whose test loss (worker 0's, after the epoch) is at or below the
# target; the time is the median of REPEAT runs of exactly R epochs, from
# starting the shards to the end of worker 0 (parsing, every evaluation,
# the gather included). The target of a data set is the single node's
# final test loss on it: one process, all CORES threads, no network,
# EPOCHS epochs (its time to target is measured the same way).
#
# Parts (PARTS, default "strong weak stale strong1"), at each rate of RATES:
#   strong   W in STRONG (1 2 4) workers on M (4) machines, the ROWS rows
#   weak     W in WEAK (4) workers on W x ROWS rows against 1 worker on
#            ROWS rows (FEATURES features), each to the single node's loss
#            on its own rows, in rounds (1 worker, then each model of
#            WEAK_MODELS, REPEAT times) so that host drift hits all alike.
#            WEAK_MODELS (default "scaled fixed loaded"): "scaled" (weak_scaled)
#            is Gustafson's weak scaling, the problem per worker fixed:
#            W x ROWS rows over W x FEATURES features, same NNZ and skew
#            (the power law id = D u^2 has the same per-feature counts at
#            every relative position id/D when rows/D is fixed), its own
#            test set; "fixed" (weak) keeps the FEATURES model, so the
#            rows per feature grow W-fold and the single node's loss keeps
#            falling where the 1x one overfits. WEAK_SAME=1 (default) also
#            times the fixed model for the epochs the 1-worker run needed
#            ("weak_epochs": the same work per worker). "loaded"
#            (weak_loaded) is the 1-worker run again, timed while W - 1
#            copies of it, each with shards of its own, run on machines
#            1..W-1: the machines of one host share its memory bandwidth
#            (and L3), which separate machines would not, so the W-worker
#            runs' machines get a quarter of what the lone 1-worker run's
#            machine gets; beside its copies it gets the same share (the
#            problem and the coupling through the shards stay the 1x
#            run's). bench/membw measures that sharing.
#   stale    4 workers, staleness in SWEEP (0 1 3 inf), STALE_SYNC rows per
#            clock (more clocks, so the bound matters), the last worker a
#            straggler (its THREADS threads on one core); plus one run
#            without the straggler at STALENESS; REPEAT_STALE runs to the
#            target; only at the first of RATES unless STALE_RATES is set
#   strong1  W in STRONG1 (1 2 4 8) one-thread workers on M1 (CORES/2, at
#            most 8) machines of 2 cores (1 shard lane + 1 worker thread)
#
# Data: `boar gen` (FEATURES features, NNZ non-zeros, power-law ids), a
# TEST_ROWS (100k) test set after ROWS x max(WEAK) rows, whatever the
# parts (one test set per feature space); the scaled sets in DATA/scaled-W
# with test sets of their own; DATA=DIR reuses them.
# Knobs: CORES (nproc) M (4) M1 LANES (1) THREADS (CORES/M - LANES, at
# least 1) RATES ("10gbit 25gbit") DELAY (25us) MTU (9000) ROWS (1000000)
# EPOCHS (5) REPEAT (3) SYNC (100000) STALENESS (3) RUN_TIMEOUT (120 s)
# HASH=k: every training run (single node and workers) hashes the ids
# into 2^(log2 of the model's features + k) slots (--hash-bits), which
# scatters the power-law head over the shards' key ranges.
# PERF=a perf binary: shard 0 and worker 0 of every cluster run under
# perf record (JSON.s0.perf, JSON.w0.perf; paths without spaces).
# CSV columns after the phases: the model's features; worker 0's load_s,
# gather_s and seconds (connect to end); the test loss after each epoch
# of the EPOCHS-epoch run ("l1;l2;..."); the timed runs' seconds in the
# order run (their median is to_target_s; in the weak part run i of every
# layout is round i).
# WORKER_OPTS (more options for every worker, e.g. --f16) LATENCY (0: us
# added to a round trip between machines, half on each machine's input by
# bench/net/delay_link.sh, NFQUEUE to NFQ_DELAY: for kernels without netem).
# The CSV goes to bench/net/shaped_report.py for tables and plots.
set -u
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
O=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$O"
O=$(cd "$O" && pwd)
CORES=${CORES:-$(nproc)}
M0=${M:-4}
M1=${M1:-$((CORES / 2 > 8 ? 8 : CORES / 2))}
NM=$((M0 > M1 ? M0 : M1))
M=$M0
LANES=${LANES:-1}
THREADS0=${THREADS:-}
[ "$((CORES / NM))" -ge 1 ] || { echo "shaped.sh: $CORES cores for $NM machines" >&2; exit 2; }
RATES=${RATES:-"10gbit 25gbit"}
DELAY=${DELAY:-25us}
LATENCY=${LATENCY:-0}
NFQ_DELAY=${NFQ_DELAY:-$(dirname "$B")/bench/nfq_delay}
MTU=${MTU:-9000}
ROWS=${ROWS:-1000000}
TEST_ROWS=${TEST_ROWS:-100000}
FEATURES=${FEATURES:-1048576}
NNZ=${NNZ:-30}
EPOCHS=${EPOCHS:-5}
REPEAT=${REPEAT:-3}
SYNC=${SYNC:-100000}
STALENESS=${STALENESS:-3}
PARTS=${PARTS:-"strong weak stale strong1"}
STRONG1=${STRONG1:-"1 2 4 8"}
STRONG=${STRONG:-"1 2 4"}
WEAK=${WEAK:-4}
SWEEP=${SWEEP:-"0 1 3 inf"}
STALE_SYNC=${STALE_SYNC:-20000}
REPEAT_STALE=${REPEAT_STALE:-1}
WEAK_MODELS=${WEAK_MODELS:-"scaled fixed loaded"}
WEAK_SAME=${WEAK_SAME:-1}
STALE_RATES=${STALE_RATES:-${RATES%% *}}
. "$here/target_lib.sh"

[ "$(id -u)" = 0 ] || { echo "shaped.sh: needs root (network namespaces)" >&2; exit 77; }
for t in ip tc taskset; do
	command -v $t >/dev/null || { echo "shaped.sh: no $t" >&2; exit 77; }
done

# ---------------------------------------------------------------- network
NS=psb$$
NETEM=0
cleanup() {
	# whatever still runs in a machine (runs are in subshells: ask the
	# namespace, not a list of ids)
	for i in $(seq 0 $((NM - 1))); do
		for p in $(ip netns pids "$NS-m$i" 2>/dev/null); do
			kill "$p" 2>/dev/null
		done
	done
	for i in $(seq 0 $((NM - 1))); do
		ip netns del "$NS-m$i" 2>/dev/null
	done
	ip netns del "$NS-sw" 2>/dev/null
}
trap 'cleanup' EXIT
trap 'exit 130' INT TERM HUP

addr() { echo "10.99.0.$(($1 + 1))"; }
# cores I: machine I's cores, "a-b"
cores() { echo "$(($1 * K))-$(($1 * K + K - 1))"; }

net_up() {
	ip netns add "$NS-sw" || return 1
	ip -n "$NS-sw" link add br0 type bridge || return 1
	ip -n "$NS-sw" link set br0 up
	for i in $(seq 0 $((NM - 1))); do
		ip netns add "$NS-m$i" &&
		ip link add name eth0 netns "$NS-m$i" mtu "$MTU" type veth \
			peer name "p$i" netns "$NS-sw" mtu "$MTU" &&
		ip -n "$NS-sw" link set "p$i" master br0 up &&
		ip -n "$NS-m$i" addr add "$(addr "$i")/24" dev eth0 &&
		ip -n "$NS-m$i" link set eth0 up &&
		ip -n "$NS-m$i" link set lo up || return 1
	done
	# netem may be a module, or not built at all (then: no added latency)
	modprobe sch_netem 2>/dev/null
	modprobe sch_tbf 2>/dev/null
	if tc -n "$NS-m0" qdisc add dev eth0 root handle 1: netem \
		delay "$DELAY" 2>/dev/null; then
		NETEM=1
		tc -n "$NS-m0" qdisc del dev eth0 root
	fi
}

delay_up() { # LATENCY/2 on every machine's input (the daemons end with cleanup)
	for i in $(seq 0 $((NM - 1))); do
		sh "$here/delay_link.sh" start "$NS-m$i" "$(awk "BEGIN{print $LATENCY / 2}")" \
			"$NFQ_DELAY" "$O/delay.log" || return 1
	done
}

# bytes RATE: RATE ("10gbit", "25gbit", "800mbit") in bytes per second
bytes() {
	echo "$1" | awk '{ n = $1 + 0; u = tolower($1); sub(/^[0-9.]+/, "", u)
		m = u ~ /^g/ ? 1e9 : u ~ /^m/ ? 1e6 : u ~ /^k/ ? 1e3 : 1
		printf "%.0f\n", n * m / 8 }'
}

# shape_dev NS DEV RATE
shape_dev() {
	bps=$(bytes "$3")
	burst=$((bps / 5000)) # 200 us of the line
	[ "$burst" -ge 131072 ] || burst=131072
	limit=$((bps / 500 + burst)) # 2 ms of queue
	tc -n "$1" qdisc del dev "$2" root 2>/dev/null
	if [ "$NETEM" = 1 ]; then
		tc -n "$1" qdisc add dev "$2" root handle 1: netem \
			delay "$DELAY" limit 100000 &&
		tc -n "$1" qdisc add dev "$2" parent 1:1 handle 10: tbf \
			rate "$3" burst "$burst" limit "$limit"
	else
		tc -n "$1" qdisc add dev "$2" root handle 10: tbf \
			rate "$3" burst "$burst" limit "$limit"
	fi
}

shape() { # RATE: every link, both directions
	for i in $(seq 0 $((NM - 1))); do
		shape_dev "$NS-m$i" eth0 "$1" && shape_dev "$NS-sw" "p$i" "$1" ||
			return 1
	done
}

# tc_stats TAG: each link's tbf counters (bytes, drops, overlimits) and
# each machine's TCP counters (segments out, retransmitted: a tbf queue
# that overflows drops, and TCP resends) into the log
tc_stats() {
	for i in $(seq 0 $((NM - 1))); do
		echo "== $1 m$i eth0"
		tc -s -n "$NS-m$i" qdisc show dev eth0
		echo "== $1 sw p$i"
		tc -s -n "$NS-sw" qdisc show dev "p$i"
		echo "== $1 m$i tcp"
		ip netns exec "$NS-m$i" awk '/^Tcp:/ { if (!h) { split($0, k); h = 1 }
			else for (j = 2; j <= NF; j++)
				if (k[j] ~ /OutSegs|RetransSegs|InErrs/) printf "%s %s ", k[j], $j }
			END { print "" }' /proc/net/snmp
	done >>"$O/tc.log"
}

# ------------------------------------------------------------------- data
D=${DATA:-$O/data}
mkdir -p "$D"
# the most rows any part trains on (ROWS x max(WEAK))
maxw=1
for w in $WEAK; do [ "$w" -gt "$maxw" ] && maxw=$w; done
weak_model() { case " $WEAK_MODELS " in *" $1 "*) return 0 ;; esac; return 1; }
# The test set is the TEST_ROWS after ROWS x max(WEAK) rows whatever the
# parts and models run, so that every run on these FEATURES shares one
# test set (its loss moves by ~1e-3 from one 100k sample to another, as
# much as an epoch late in a run).
big=$((ROWS * maxw))
if [ ! -s "$D/test.svm" ] || [ ! -s "$D/train-$big.svm" ]; then
	"$B" gen --rows $((big + TEST_ROWS)) --features "$FEATURES" \
		--nnz "$NNZ" --skew 1 -q -o "$D/all.svm" || exit 1
	head -n "$big" "$D/all.svm" >"$D/train-$big.svm"
	tail -n "$TEST_ROWS" "$D/all.svm" >"$D/test.svm"
	rm -f "$D/all.svm"
fi
# train ROWS: the first ROWS rows of the largest set
train() {
	[ -s "$D/train-$1.svm" ] || head -n "$1" "$D/train-$big.svm" >"$D/train-$1.svm"
	echo "$D/train-$1.svm"
}
# scaled W: the weak-scaling set for W workers, W x ROWS rows over W x
# FEATURES features with a test set of its own, in $D/scaled-W (made once)
scaled() {
	sd=$D/scaled-$1
	sn=$((ROWS * $1))
	mkdir -p "$sd"
	if [ ! -s "$sd/test.svm" ] || [ ! -s "$sd/train-$sn.svm" ]; then
		"$B" gen --rows $((sn + TEST_ROWS)) --features $((FEATURES * $1)) \
			--nnz "$NNZ" --skew 1 -q -o "$sd/all.svm" || exit 1
		head -n "$sn" "$sd/all.svm" >"$sd/train-$sn.svm"
		tail -n "$TEST_ROWS" "$sd/all.svm" >"$sd/test.svm"
		rm -f "$sd/all.svm"
	fi
}
# data set: the model's features (CF) and test set (TE) of the runs that
# follow; runs are in subshells, which see them
CF=$FEATURES
TE=$D/test.svm
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$O/secret"

# ------------------------------------------------------------------- runs
# hash_opt: --hash-bits for a model of CF features with HASH set, else
# nothing
hash_opt() {
	[ -n "${HASH:-}" ] || return 0
	awk -v f="$CF" -v k="$HASH" 'BEGIN { b = 0
		while (2 ^ b < f) b++
		print "--hash-bits", b + k }'
}
single() { # FILE EPOCHS OUT: wall seconds on stdout
	t0=$(now)
	taskset -c "0-$((CORES - 1))" "$B" train --threads "$CORES" $(hash_opt) \
		--epochs "$2" --json --test "$TE" -q "$1" >"$3" \
		2>>"$O/single.err"
	t1=$(now)
	awk "BEGIN{print $t1 - $t0}"
}

# perf_of I FILE: with PERF (a perf binary) and I = 0, the words that run
# a command under `perf record` into FILE (shard 0 and worker 0 of every
# cluster run profiled, per thread: perf report -s tid,sym)
perf_of() {
	[ -n "${PERF:-}" ] && [ "$1" = 0 ] && [ "$2" != - ] && echo "$PERF record -q -F 999 -o $2 --"
}

# shards PORT PERF_FILE: M shards, one a machine, listening on PORT
# (shard 0 under perf with PERF, into PERF_FILE; "-": none); their pids
# added to spids
shards() {
	for i in $(seq 0 $((M - 1))); do
		ip netns exec "$NS-m$i" taskset -c "$(cores "$i")" \
			$(perf_of "$i" "$2") "$B" serve \
			--shard "$i/$M" --listen "$(addr "$i"):$1" \
			--staleness "$S" --threads "$LANES" \
			--secret-file "$O/secret" -q 2>>"$O/serve.err" &
		spids="$spids $!"
	done
}

# ps_list PORT: the M shards' addresses at PORT, for --ps
ps_list() {
	l=""
	for i in $(seq 0 $((M - 1))); do
		l="$l${l:+,}$(addr "$i"):$1"
	done
	echo "$l"
}

# copies N: N copies of the one-worker job the caller runs (F, CF, Y, S,
# E), independent of it and of each other, copy c's worker on machine c
# with M shards of its own on port + c (one a machine, beside the
# caller's): the load of the 4-machine weak runs on every machine while
# the caller's worker 0 is timed (weak_loaded). Pids added to spids, cpids.
copies() {
	for c in $(seq 1 "$1"); do
		shards $((port + c)) -
		ip netns exec "$NS-m$c" taskset -c "$(cores "$c")" \
			timeout "${RUN_TIMEOUT:-120}" "$B" train \
			--ps "$(ps_list $((port + c)))" --worker 0/1 --read-part \
			--threads "$THREADS" --epochs "$E" --sync-every "$Y" \
			--features "$CF" --secret-file "$O/secret" -q $(hash_opt) \
			--shutdown-servers ${WORKER_OPTS:-} "$F" 2>>"$O/worker.err" &
		cpids="$cpids $!"
	done
}

# cluster W FILE SYNC STALE STRAGGLE EPOCHS JSON [COPIES]: M shards + W
# workers; STRAGGLE=1: the last worker's threads share one core; COPIES
# (W = 1 only): that many copies of the job beside it (copies). Wall
# seconds of this job (to its worker 0's end) on stdout.
cluster() {
	W=$1 F=$2 Y=$3 S=$4 G=$5 E=$6 J=$7
	# a fresh port per run (runs are in subshells: no counter survives)
	# below the kernel's ephemeral ports (32768 up), which the workers'
	# connections of a run just ended may still hold: a shard's listen
	# then failed (Address already in use) and the run with it
	port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 12000))
	ps=$(ps_list "$port")
	spids="" cpids=""
	[ "${8:-0}" -gt 0 ] && copies "$8"
	t0=$(now)
	shards "$port" "$J.s0.perf"
	wpids=""
	for r in $(seq $((W - 1)) -1 0); do
		set -- --ps "$ps" --worker "$r/$W" --read-part --threads "$THREADS" \
			--epochs "$E" --sync-every "$Y" --features "$CF" \
			--secret-file "$O/secret" -q $(hash_opt) ${WORKER_OPTS:-}
		[ "$r" = 0 ] && set -- "$@" --shutdown-servers --json --test "$TE"
		c=$(cores "$r")
		[ "$G" = 1 ] && [ "$r" = $((W - 1)) ] && [ "$W" -gt 1 ] && c=$((r * K))
		if [ "$r" = 0 ]; then
			ip netns exec "$NS-m0" taskset -c "$c" $(perf_of 0 "$J.w0.perf") \
				timeout "${RUN_TIMEOUT:-120}" \
				"$B" train "$@" "$F" >"$J" 2>>"$O/worker.err"
		else
			ip netns exec "$NS-m$r" taskset -c "$c" timeout "${RUN_TIMEOUT:-120}" \
				"$B" train "$@" "$F" 2>>"$O/worker.err" &
			wpids="$wpids $!"
		fi
	done
	t1=$(now)
	# the copies end as this job does (the same work); worker 0 of each
	# job stopped its shards; if one failed, nobody did
	[ -z "$cpids" ] || wait $cpids
	sleep 0.2
	kill $spids $wpids 2>/dev/null
	wait
	awk "BEGIN{print $t1 - $t0}"
}

# layout TAG TARGET REP W FILE SYNC STALE STRAGGLE: a run of EPOCHS
# epochs, then REP runs of the epochs to TARGET; prints "wall,final loss,
# target,epoch reached,to target (median),phases,extra columns"
layout() {
	tag=$1 tgt=$2 rep=$3 W=$4 F=$5 Y=$6 S=$7 G=$8
	wall=$(cluster "$W" "$F" "$Y" "$S" "$G" "$EPOCHS" "$O/$tag.json")
	r=$(reach "$tgt" "$O/$tag.json")
	runs=-
	if [ "$r" != - ]; then
		runs=$(REPEAT=$rep timed cluster "$W" "$F" "$Y" "$S" "$G" "$r" \
			"$O/$tag-to.json")
	fi
	probe_cols "$O/$tag.json" "$wall" "$tgt" "$r" "$runs"
}

# probe_cols JSON WALL TARGET REACHED RUNS: a row's columns from wall on,
# for the EPOCHS-epoch run JSON and the timed RUNS ("-": none)
probe_cols() {
	to=-
	[ "$5" = - ] || to=$(med "$5")
	printf "%.2f,%.4f,%.4f,%s,%s,%s,%s,%s,%s,%s\n" "$2" "$(last_loss "$1")" \
		"$3" "$4" "$to" "$(phases "$1")" "$CF" "$(fixed_costs "$1")" \
		"$(losses "$1")" "$5"
}

# target FILE ROWS TAG: the single node's final loss on FILE (ROWS rows,
# CF features, test set TE) and its time to it; sets tgt and tgt_s
target() {
	wall=$(single "$1" "$EPOCHS" "$O/single-$3.json")
	tgt=$(last_loss "$O/single-$3.json")
	r=$(reach "$tgt" "$O/single-$3.json")
	runs=$(timed single "$1" "$r" "$O/single-$3-to.json")
	tgt_s=$(med "$runs")
	printf "single,-,%s,1,%s,-,-,0,%.2f,%.4f,%.4f,%s,%s,,,,,,,,%s,,,,%s,%s\n" \
		"$2" "$CORES" "$wall" "$tgt" "$tgt" "$r" "$tgt_s" "$CF" \
		"$(losses "$O/single-$3.json")" "$runs"
}

# loss_at EPOCH JSON: the test loss after EPOCH
loss_at() {
	awk -v e="$1" "$FIELD"'/"epoch"/ { if (field("epoch") == e)
		printf "%.4f\n", field("test_loss") }' "$2"
}

# machines N: the layout of the parts that follow: N machines of CORES/N
# cores, THREADS0 (or the cores left after the lanes, at least 1) worker
# threads each
machines() {
	M=$1
	K=$((CORES / M))
	THREADS=${THREADS0:-$((K - LANES > 0 ? K - LANES : 1))}
}

# one row of the CSV: PART RATE ROWS WORKERS SYNC STALE STRAGGLE, then the
# layout's columns
row() {
	echo "$1,$2,$3,$4,$THREADS,$5,$6,$7,$(shift 7; layout "$@")"
}

# strong_part TAG RATE LIST: W in LIST workers on the ROWS rows; sets r1,
# the epochs the one-worker run needed
strong_part() {
	for w in $3; do
		[ "$w" -le "$M" ] || continue
		line=$(row "$1" "$2" "$ROWS" "$w" "$SYNC" "$STALENESS" 0 \
			"$1-$2-w$w" "$tgt1" "$REPEAT" "$w" "$f1" "$SYNC" "$STALENESS" 0)
		echo "$line"
		[ "$w" = 1 ] && r1=$(echo "$line" | cut -d, -f12)
	done
}

# weak_layout NAME: the run of weak layout NAME (base: 1 worker on ROWS
# rows; fixed, scaled: WW workers on WW x ROWS rows): sets lw (workers),
# lf (training file), lt (target), CF and TE
weak_layout() {
	lc=0
	CF=$FEATURES
	TE=$D/test.svm
	case $1 in
	base) lw=1 lf=$f1 lt=$tgt1 ;;
	loaded) lw=1 lf=$f1 lt=$tgt1 lc=$((WW - 1)) ;;
	fixed)
		lw=$WW lf=$(train $((ROWS * WW)))
		eval "lt=\$tgt_$((ROWS * WW))" ;;
	scaled)
		lw=$WW lf=$D/scaled-$WW/train-$((ROWS * WW)).svm
		CF=$((FEATURES * WW)) TE=$D/scaled-$WW/test.svm
		eval "lt=\$tgts_$((ROWS * WW))" ;;
	esac
}

# weak_part RATE: for WW in WEAK, an EPOCHS-epoch run of each layout (1
# worker on ROWS rows, then WW workers on each model of WEAK_MODELS) gives
# the epoch it reaches its target at; then REPEAT rounds, each timing
# every layout once for those epochs, in turn
weak_part() {
	for WW in $WEAK; do
		[ "$WW" -le "$M" ] || continue
		names="base $WEAK_MODELS"
		for nm in $names; do
			weak_layout "$nm"
			j=$O/weak-$1-w$WW-$nm.json
			wall=$(cluster "$lw" "$lf" "$SYNC" "$STALENESS" 0 "$EPOCHS" "$j" "$lc")
			r=$(reach "$lt" "$j")
			eval "wall_$nm=\$wall r_$nm=\$r runs_$nm=-"
		done
		for i in $(seq "$REPEAT"); do
			for nm in $names; do
				eval "r=\$r_$nm runs=\$runs_$nm"
				[ "$r" = - ] && continue
				weak_layout "$nm"
				t=$(cluster "$lw" "$lf" "$SYNC" "$STALENESS" 0 "$r" \
					"$O/weak-$1-w$WW-$nm-to.json" "$lc")
				t=$(printf %.3f "$t")
				l=$(last_loss "$O/weak-$1-w$WW-$nm-to.json")
				echo "weak $1 $nm round $i: $r epochs, $t s, loss $l, target $lt" >&2
				[ "$runs" = - ] && runs=$t || runs="$runs;$t"
				eval "runs_$nm=\$runs"
			done
		done
		for nm in $names; do
			weak_layout "$nm"
			eval "r=\$r_$nm runs=\$runs_$nm wall=\$wall_$nm"
			case $nm in
			base) part=weak_base rows=$ROWS ;;
			loaded) part=weak_loaded rows=$ROWS ;;
			fixed) part=weak rows=$((ROWS * WW)) ;;
			*) part=weak_$nm rows=$((ROWS * WW)) ;;
			esac
			echo "$part,$1,$rows,$lw,$THREADS,$SYNC,$STALENESS,0,$(probe_cols \
				"$O/weak-$1-w$WW-$nm.json" "$wall" "$lt" "$r" "$runs")"
		done
		weak_model fixed && [ "$WEAK_SAME" = 1 ] || continue
		# the fixed model for the epochs the one worker needed
		e=$r_base
		[ "$e" = - ] && e=$EPOCHS
		weak_layout fixed
		secs=$(median cluster "$WW" "$lf" "$SYNC" "$STALENESS" 0 "$e" \
			"$O/weak-$1-w$WW-e$e.json")
		echo "weak_epochs,$1,$((ROWS * WW)),$WW,$THREADS,$SYNC,$STALENESS,0,-,$(loss_at "$e" \
			"$O/weak-$1-w$WW-fixed.json"),$(loss_at "$e" "$O/single-$((ROWS * WW)).json"),$e,$secs,,,,,,,,$CF,,,,,"
	done
	CF=$FEATURES
	TE=$D/test.svm
}

# stale_part RATE: 4 workers (at most M), STALE_SYNC rows per clock, evenly
# fast at STALENESS, then the last one a straggler at each s of SWEEP
stale_part() {
	w=$((M < 4 ? M : 4))
	row stale "$1" "$ROWS" "$w" "$STALE_SYNC" "$STALENESS" 0 "stale-$1-even" \
		"$tgt1" "$REPEAT_STALE" "$w" "$f1" "$STALE_SYNC" "$STALENESS" 0
	for s in $SWEEP; do
		row stale "$1" "$ROWS" "$w" "$STALE_SYNC" "$s" 1 "stale-$1-s$s" \
			"$tgt1" "$REPEAT_STALE" "$w" "$f1" "$STALE_SYNC" "$s" 1
	done
}

has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

net_up || { echo "shaped.sh: cannot build the namespaces and veth links" >&2; exit 77; }
shape "${RATES%% *}" || { echo "shaped.sh: tc cannot shape veth with tbf" >&2; exit 77; }
[ "$LATENCY" = 0 ] || delay_up || { echo "shaped.sh: cannot add LATENCY" >&2; exit 77; }
echo "# added round trip between machines: $LATENCY us" >&2
machines "$M"
echo "# $M machines x $K cores ($(cores 0), ...): 1 shard x $LANES lanes + worker x $THREADS threads each; strong1: $M1 machines x $((CORES / M1)) cores; netem: $([ $NETEM = 1 ] && echo "$DELAY per egress" || echo "not in this kernel"); MTU $MTU" >&2
echo "part,rate,rows,workers,threads,sync_every,staleness,straggler,wall_s,final_test_loss,target_loss,epoch_reached,to_target_s,keys_s,pull_s,local_s,sweep_s,push_s,clock_s,refresh_s,features,load_s,gather_s,seconds,losses,runs"

f1=$(train "$ROWS")
target "$f1" "$ROWS" "$ROWS"
tgt1=$tgt
if has weak; then
	for w in $WEAK; do
		n=$((ROWS * w))
		if weak_model fixed; then
			target "$(train $n)" $n $n
			eval "tgt_$n=\$tgt"
		fi
		if weak_model scaled; then
			scaled "$w"
			CF=$((FEATURES * w)) TE=$D/scaled-$w/test.svm
			target "$D/scaled-$w/train-$n.svm" $n "${n}s"
			eval "tgts_$n=\$tgt"
			CF=$FEATURES TE=$D/test.svm
		fi
	done
fi

for rate in $RATES; do
	shape "$rate" || exit 1
	machines "$M0"
	r1=""
	has strong && strong_part strong "$rate" "$STRONG"
	has weak && weak_part "$rate"
	if has stale; then
		case " $STALE_RATES " in *" $rate "*) stale_part "$rate" ;; esac
	fi
	if has strong1 && [ "$M1" -gt 0 ]; then
		t0s=$THREADS0
		THREADS0=1
		machines "$M1"
		strong_part strong1 "$rate" "$STRONG1"
		THREADS0=$t0s
	fi
	tc_stats "$rate"
done
