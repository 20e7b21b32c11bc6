#!/bin/sh
# kill -9 of a shard under load loses nothing (issue 13): a shard with
# --checkpoint logs every push before applying it (net/pushlog.h); killed
# mid-run and restarted at once, it replays its log onto its checkpoint,
# the workers reconnect and resend the pushes it had not answered
# anything after (numbered, so one it already holds is not applied twice).
# Checked: the restarted shard replayed its log, its push counter (kept
# across the restart by the checkpoint and the log) equals exactly the
# pushes the workers made (2 workers x clocks: none lost, none doubled),
# and the final model's test loss and accuracy are those of a run without
# the kill (within 0.003 and half a point).
. net/tests/lib.sh

# one run: 1 shard (checkpoints only at the start and the end, so every
# push after the first lives in the log), 2 workers; KILL=1 kills it
run() {
	new_cluster
	rm -rf "$T/ckpt"
	: >"$T/s0.err"
	serve 0 1 --staleness 1 --checkpoint "$T/ckpt" --checkpoint-every 1000
	s0=$SPID
	worker 1 2 1 --sync-every 500 --throttle-ms 10
	w1=$WPID
	worker 0 2 1 --sync-every 500 --throttle-ms 10 --json \
		--shutdown-servers -m "$T/$1.model"
	w0=$WPID
	if [ "$1" = kill ]; then
		# under load: the log has grown past a few pushes
		for _ in $(seq 300); do
			[ "$(wc -c <"$T/ckpt/shard-0-of-1.log" 2>/dev/null || echo 0)" -gt 20000 ] && break
			sleep 0.05
		done
		kill -9 $s0 || fail "the shard ended before it was killed"
		wait $s0 2>/dev/null
		serve 0 1 --staleness 1 --checkpoint "$T/ckpt" --checkpoint-every 1000
		s0=$SPID
	fi
	wait_ok $w0 "worker 0 ($1)"
	wait_ok $w1 "worker 1 ($1)"
	wait_ok $s0 "shard ($1)"
}

run clean
clean_loss=$(model_loss "$T/clean.model")
clean_acc=$(model_accuracy "$T/clean.model")

run kill
grep -q "replayed [1-9][0-9]* records of the push log" "$T/s0.err" ||
	{ cat "$T/s0.err"; fail "the restarted shard did not replay its push log"; }
grep -Eq "[1-9][0-9]* reconnects" "$T/w0.err" ||
	{ cat "$T/w0.err"; fail "worker 0 did not reconnect"; }
worker_clocks
pushes=$(shard_pushes "$T/s0.err")
[ "$pushes" = $((2 * clocks)) ] ||
	{ cat "$T/s0.err"; fail "the shard holds $pushes pushes, the 2 workers made $((2 * clocks)) ($clocks clocks each)"; }
loss=$(model_loss "$T/kill.model")
acc=$(model_accuracy "$T/kill.model")
like_clean "shard killed" "$loss" "$clean_loss" "$acc" "$clean_acc"
resent=$(pushes_resent "$T/w0.err" "$T/w1.err")
echo "shard killed -9 and restarted: $pushes pushes held = 2 x $clocks clocks," \
	"$resent resent; test loss $loss (clean run $clean_loss), accuracy $acc ($clean_acc)"
exit 0
