# lib.sh - sourced by the cluster tests tests/cli/net_*.sh (not a test).
#
# Starts shards and workers as real background processes on loopback (or
# inside network namespaces), remembers their pids and kills whatever is
# left when the test exits. Each test gets its own port range so that a
# leftover process of another run cannot answer it.
. tests/cli/lib/common.sh

A9A=datasets/a9a
A9AT=datasets/a9a.t
[ -r "$A9A" ] && [ -r "$A9AT" ] || skip "datasets/a9a and a9a.t are missing"
have_python || skip "python3 is needed to read the JSON output"

# Shards listen on port 0 and say which port the kernel gave them, so that
# tests running at the same time never collide; PORT_I is shard I's port
# (kept when a shard is restarted: new_cluster forgets them). PORT is a
# random base only for what cannot ask the kernel (mpirun's --base-port,
# the namespaces' own stacks).
PORT=$((20000 + ($$ * 37 + $(date +%N | sed 's/^0*//;s/^$/0/')) % 40000))
PIDS=""

new_cluster() {
	for _i in 0 1 2 3; do unset PORT_$_i; done
}

cleanup_net() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	[ -n "${NETNS_CLEANUP:-}" ] && eval "$NETNS_CLEANUP"
	rm -rf "$T"
}
trap cleanup_net EXIT

# Options every run shares: small and quick, one thread per process (the
# test machine has two cores and runs several processes at once).
COMMON="--threads 1 --epochs 10 --seed 7"

# serve I S EXTRA...: starts shard I of S on 127.0.0.1 (port PORT_I if
# set, else one the kernel picks, then recorded in PORT_I), stderr in
# $T/sI.err; its pid in $SPID.
serve() {
	_i=$1
	_s=$2
	shift 2
	eval "_p=\${PORT_$_i:-0}"
	touch "$T/s$_i.err"
	_n=$(grep -c "listening on" "$T/s$_i.err")
	"$BOAR" serve --shard "$_i/$_s" --listen "127.0.0.1:$_p" \
		"$@" >"$T/s$_i.out" 2>>"$T/s$_i.err" &
	SPID=$!
	PIDS="$PIDS $SPID"
	_end=$(($(date +%s) + 10))
	while [ "$(grep -c "listening on" "$T/s$_i.err")" = "$_n" ]; do
		kill -0 $SPID 2>/dev/null || { cat "$T/s$_i.err"; fail "shard $_i did not start"; }
		[ "$(date +%s)" -lt "$_end" ] || fail "shard $_i is not listening after 10 s"
		sleep 0.05
	done
	_p=$(grep "listening on" "$T/s$_i.err" | tail -1 | sed 's/.*listening on [^ ]*:\([0-9]*\),.*/\1/')
	eval "PORT_$_i=$_p"
}

# wait_listen PORT: until something accepts on 127.0.0.1:PORT (5 s).
wait_listen() {
	python3 - "$1" <<'PY' || fail "nothing listens on port $1"
import socket, sys, time
end = time.time() + 5
while time.time() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
PY
}

# ps_list S: the --ps list of S shards on loopback.
ps_list() {
	_l=""
	for _i in $(seq 0 $(($1 - 1))); do
		eval "_p=\$PORT_$_i"
		_l="$_l${_l:+,}127.0.0.1:$_p"
	done
	echo "$_l"
}

# worker R W S EXTRA...: starts worker R of W against S shards in the
# background (stdout $T/wR.out, stderr $T/wR.err); its pid in $WPID.
worker() {
	_r=$1
	_w=$2
	_s=$3
	shift 3
	"$BOAR" train $COMMON --ps "$(ps_list "$_s")" --worker "$_r/$_w" "$@" \
		"$A9A" >"$T/w$_r.out" 2>"$T/w$_r.err" &
	WPID=$!
	PIDS="$PIDS $WPID"
}

# one_worker NAME EXTRA...: worker 0 of 1 (EXTRA its options) on two
# fresh shards at staleness 1, 2000 rows a clock, to the end: its model
# in $T/NAME.model, its JSON summary in $T/NAME.json, the shards' stderr
# (emptied first) in $T/s0.err and $T/s1.err. SHARD_OPTS: more options
# for both shards (words without spaces).
one_worker() {
	_name=$1
	shift
	new_cluster
	: >"$T/s0.err"
	: >"$T/s1.err"
	serve 0 2 --staleness 1 $SHARD_OPTS
	_s0=$SPID
	serve 1 2 --staleness 1 $SHARD_OPTS
	_s1=$SPID
	worker 0 1 2 --sync-every 2000 --json --shutdown-servers \
		-m "$T/$_name.model" "$@"
	wait_ok $WPID "worker ($_name)"
	wait_ok $_s0 "shard 0 ($_name)"
	wait_ok $_s1 "shard 1 ($_name)"
	tail -n 1 "$T/w0.out" >"$T/$_name.json"
}

# wait_ok PID WHAT: the process must exit 0, within WAIT_LIMIT seconds
# (default 180; then every log is shown and the test fails rather than
# hanging until the runner's timeout).
wait_ok() {
	_end=$(($(date +%s) + ${WAIT_LIMIT:-180}))
	while kill -0 "$1" 2>/dev/null && [ "$(date +%s)" -lt "$_end" ]; do
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		for _f in "$T"/*.err; do echo "== $_f"; tail -20 "$_f"; done
		fail "$2 still running after ${WAIT_LIMIT:-180} s"
	fi
	wait "$1"
	_rc=$?
	[ "$_rc" = 0 ] || {
		for _f in "$T"/*.err; do echo "== $_f"; tail -20 "$_f"; done
		fail "$2 exited $_rc"
	}
}

# single_accuracy: test accuracy of the single-node run with $COMMON.
single_accuracy() {
	"$BOAR" train $COMMON --quiet --json --test "$A9AT" "$A9A" >"$T/single.json" ||
		fail "single-node training failed"
	json_field "$T/single.json" test_accuracy
}

# model_accuracy MODEL: test accuracy of a saved model (boar eval).
model_accuracy() {
	"$BOAR" eval --json -m "$1" "$A9AT" >"$T/eval.json" ||
		fail "boar eval of $1 failed"
	json_field "$T/eval.json" test_accuracy
}

# model_loss MODEL: test loss of a saved model (boar eval).
model_loss() {
	"$BOAR" eval --json -m "$1" "$A9AT" >"$T/eval.json" || fail "eval $1"
	json_field "$T/eval.json" test_loss
}

# worker_clocks: $clocks, the clocks worker 0's JSON summary says it made
# (each worker pushes once per clock, all the same number).
worker_clocks() {
	clocks=$(tail -n 1 "$T/w0.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["clocks"])') ||
		fail "worker 0: no clocks in its JSON summary"
}

# shard_pushes FILE: the push count a shard said (in its log FILE) when it
# stopped.
shard_pushes() {
	sed -n 's/.* pushes=\([0-9]*\).*/\1/p' "$1" | tail -1
}

# pushes_resent FILE...: the pushes the workers (their logs FILE...) sent
# again after a shard died, all together.
pushes_resent() {
	sed -n 's/.*(\([0-9]*\) pushes resent.*/\1/p' "$@" | awk '{ s += $1 } END { print s + 0 }'
}

# like_clean WHAT LOSS CLEAN_LOSS ACC CLEAN_ACC: a run with a fault
# trained the model of the run without it: test loss within 0.003,
# accuracy within half a point.
like_clean() {
	awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 0.003) }' ||
		fail "$1: test loss $2, $3 in the run without the fault"
	close_to "$1" "$4" "$5"
}

# close_to WHAT GOT WANT [POINTS]: |GOT - WANT| <= POINTS / 100 (default
# half a point).
close_to() {
	awk -v g="$2" -v w="$3" -v p="${4:-0.5}" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= p / 100) }' ||
		fail "$1: accuracy $2 is not within ${4:-0.5} points of the single-node $3"
}

# max_staleness FILE...: the largest max_staleness_served= in the files.
max_staleness() {
	cat "$@" | sed -n 's/.*max_staleness_served=\([0-9]*\).*/\1/p' |
		sort -n | tail -1
}
