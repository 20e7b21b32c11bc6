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

# A port range of our own: 20 ports from a random base.
PORT=$((20000 + ($$ * 37 + $(date +%N | sed 's/^0*//;s/^$/0/')) % 40000))
PIDS=""

cleanup_net() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	[ -n "${NETNS_CLEANUP:-}" ] && eval "$NETNS_CLEANUP"
	rm -rf "$T"
}
trap cleanup_net EXIT

# Options every run shares: small and quick, one thread per process (the
# test machine has two cores and runs several processes at once).
COMMON="--threads 1 --epochs 10 --seed 7"

# serve I S EXTRA...: starts shard I of S on 127.0.0.1:$PORT+I, stderr in
# $T/sI.err; its pid in $SPID.
serve() {
	_i=$1
	_s=$2
	shift 2
	"$BOAR" serve --shard "$_i/$_s" --listen "127.0.0.1:$((PORT + _i))" \
		"$@" >"$T/s$_i.out" 2>>"$T/s$_i.err" &
	SPID=$!
	PIDS="$PIDS $SPID"
	wait_listen $((PORT + _i))
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
		_l="$_l${_l:+,}127.0.0.1:$((PORT + _i))"
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

# wait_ok PID WHAT: the process must exit 0.
wait_ok() {
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

# close_to WHAT GOT WANT: |GOT - WANT| <= 0.005 (half a point).
close_to() {
	awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 0.005) }' ||
		fail "$1: accuracy $2 is not within 0.5 points of the single-node $3"
}

# max_staleness FILE...: the largest max_staleness_served= in the files.
max_staleness() {
	cat "$@" | sed -n 's/.*max_staleness_served=\([0-9]*\).*/\1/p' |
		sort -n | tail -1
}
