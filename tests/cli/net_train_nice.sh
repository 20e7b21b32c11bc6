#!/bin/sh
# A cluster worker's training threads run --train-nice levels (default 5)
# below its network thread (net/worker.c): the worker's JSON says how many
# levels its threads went down, 0 with --train-nice 0; the model is the
# same bits either way (one training thread); a level outside 0-19 is a
# usage error.
. net/tests/lib.sh

# run NAME [OPTIONS...]: one shard + one worker of one thread, worker 0's
# JSON in $T/NAME.json and its model in $T/NAME.model
run() {
	name=$1
	shift
	new_cluster
	serve 0 1
	s0=$SPID
	COMMON="--threads 1 --epochs 2 --seed 7" worker 0 1 1 --sync-every 2000 \
		--json --shutdown-servers -m "$T/$name.model" "$@"
	wait_ok $WPID "$name worker"
	wait_ok $s0 "$name shard"
	tail -n 1 "$T/w0.out" >"$T/$name.json"
}

run default
run off --train-nice 0
run ten --train-nice 10

lowered() { grep -o '"train_nice": [0-9-]*' "$T/$1.json" | sed 's/.*: //'; }
now=$(nice)
want() { [ $((now + $1)) -gt 19 ] && echo $((19 - now)) || echo "$1"; }
[ "$(lowered default)" = "$(want 5)" ] ||
	fail "default: the training threads went $(lowered default) levels down, not $(want 5)"
[ "$(lowered off)" = 0 ] ||
	fail "--train-nice 0: the training threads went $(lowered off) levels down"
[ "$(lowered ten)" = "$(want 10)" ] ||
	fail "--train-nice 10: $(lowered ten) levels down, not $(want 10)"
cmp -s "$T/default.model" "$T/off.model" ||
	fail "the model differs with and without the training threads lowered"

"$BOAR" train --ps 127.0.0.1:1 --worker 0/1 --train-nice 20 "$A9A" \
	>"$T/bad.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q -- "--train-nice wants 0-19" "$T/bad.out" ||
	fail "--train-nice 20: exit $rc, $(cat "$T/bad.out")"
echo "levels down: default $(lowered default), off $(lowered off), 10: $(lowered ten) (ran at nice $now)"
exit 0
