#!/bin/sh
# Faults with real processes, on loopback:
#  1. a straggler (one worker sleeps after every clock): with s = 1 the
#     shards never serve a pull staler than 1, the run finishes and the
#     accuracy holds;
#  2. kill -9 of a worker mid-run: the others finish once the shards drop it
#     after --heartbeat-timeout, and the model is still good;
#  3. kill -9 of a shard mid-run, restarted from its checkpoint: the workers
#     reconnect with backoff and finish with a good model;
#  4. kill -9 of a worker, restarted at once with the same rank: it rejoins
#     (at the clock the shard knew) and everyone finishes;
#  5. SIGTERM makes a shard write its checkpoint (taking over what its push
#     log held), and a new shard resumes from it.
. net/tests/lib.sh

want=$(single_accuracy)

# ---- 1. straggler under SSP
serve 0 2 --staleness 1
s0=$SPID
serve 1 2 --staleness 1
s1=$SPID
worker 1 2 2 --sync-every 500 --throttle-ms 15
w1=$WPID
worker 0 2 2 --sync-every 500 --shutdown-servers -m "$T/strag.model"
w0=$WPID
wait_ok $w0 "straggler run: worker 0"
wait_ok $w1 "straggler run: worker 1"
wait_ok $s0 "straggler run: shard 0"
wait_ok $s1 "straggler run: shard 1"
st=$(max_staleness "$T/s0.err" "$T/s1.err")
at_most "straggler: max staleness served" "$st" 1
got=$(model_accuracy "$T/strag.model")
close_to "straggler" "$got" "$want"
echo "straggler, s=1: accuracy $got, max staleness served $st"

# ---- 2. kill -9 of a worker
new_cluster
: >"$T/s0.err"
serve 0 1 --staleness 1 --heartbeat-timeout 2
s0=$SPID
worker 2 3 1 --sync-every 500 --throttle-ms 20
victim=$WPID
worker 1 3 1 --sync-every 500 --throttle-ms 5
w1=$WPID
worker 0 3 1 --sync-every 500 --throttle-ms 5 --shutdown-servers -m "$T/kw.model"
w0=$WPID
sleep 1.5
kill -9 $victim 2>/dev/null || fail "the victim worker ended before it was killed"
t0=$(date +%s)
wait_ok $w0 "worker 0 after a worker was killed"
wait_ok $w1 "worker 1 after a worker was killed"
wait_ok $s0 "shard after a worker was killed"
grep -q "dropped_workers=1" "$T/s0.err" ||
	{ cat "$T/s0.err"; fail "the shard did not report the dead worker dropped"; }
grep -q "dropped from the clock" "$T/s0.err" || fail "no drop logged"
at_most "worker killed: max staleness served" "$(max_staleness "$T/s0.err")" 1
got=$(model_accuracy "$T/kw.model")
close_to "worker killed" "$got" "$want"
echo "worker killed: others finished $(($(date +%s) - t0)) s later, accuracy $got"

# ---- 3. kill -9 of a shard, restart from the checkpoint (same port)
new_cluster
: >"$T/s0.err"
: >"$T/s1.err"
mkdir "$T/ckpt"
serve 0 2 --staleness 1 --checkpoint "$T/ckpt" --checkpoint-every 0.2
s0=$SPID
serve 1 2 --staleness 1 --checkpoint "$T/ckpt" --checkpoint-every 0.2
s1=$SPID
worker 1 2 2 --sync-every 500 --throttle-ms 10
w1=$WPID
worker 0 2 2 --sync-every 500 --throttle-ms 10 --shutdown-servers -m "$T/ks.model"
w0=$WPID
# mid-run: both workers joined shard 1 and pushed to it (a shard writes
# its first checkpoint when the first worker joins, so the checkpoint
# alone does not say the workers are there; slow on a sanitizer build)
mid_run() {
	[ -s "$T/ckpt/shard-1-of-2.ckpt" ] &&
		[ "$(grep -c " joined from " "$T/s1.err")" -ge 2 ] &&
		[ -s "$T/ckpt/shard-1-of-2.log" ]
}
for _ in $(seq 150); do mid_run && break; sleep 0.2; done
mid_run || fail "shard 1 saw no pushes from both workers after 30 s"
kill -9 $s1 || fail "shard 1 ended before it was killed"
wait $s1 2>/dev/null
sleep 0.5
serve 1 2 --staleness 1 --checkpoint "$T/ckpt" --checkpoint-every 0.2
s1=$SPID
wait_ok $w0 "worker 0 after a shard restart"
wait_ok $w1 "worker 1 after a shard restart"
wait_ok $s0 "shard 0 after the restart of shard 1"
wait_ok $s1 "restarted shard 1"
grep -q "resumed from checkpoint" "$T/s1.err" ||
	{ cat "$T/s1.err"; fail "shard 1 did not resume from its checkpoint"; }
grep -Eq "[1-9][0-9]* reconnects" "$T/w0.err" ||
	{ cat "$T/w0.err"; fail "worker 0 did not reconnect"; }
st=$(max_staleness "$T/s0.err" "$T/s1.err")
at_most "shard restart: max staleness served" "$st" 1
got=$(model_accuracy "$T/ks.model")
close_to "shard killed and restarted" "$got" "$want"
echo "shard killed and restarted: accuracy $got, max staleness served $st"

# ---- 4. a worker killed and restarted with the same rank
new_cluster
: >"$T/s0.err"
serve 0 1 --staleness 1 --heartbeat-timeout 5
s0=$SPID
worker 1 2 1 --sync-every 500 --throttle-ms 10
victim=$WPID
worker 0 2 1 --sync-every 500 --throttle-ms 10 --shutdown-servers -m "$T/rw.model"
w0=$WPID
sleep 1.5
kill -9 $victim || fail "worker 1 ended before it was killed"
worker 1 2 1 --sync-every 500
w1=$WPID
wait_ok $w1 "restarted worker 1"
wait_ok $w0 "worker 0 next to a restarted worker"
wait_ok $s0 "shard with a restarted worker"
n=$(grep -c "worker 1 joined" "$T/s0.err")
[ "$n" = 2 ] || { cat "$T/s0.err"; fail "expected worker 1 to join twice, saw $n"; }
grep "worker 1 joined" "$T/s0.err" | tail -1 | grep -qv "at clock 0$" ||
	fail "the restarted worker did not rejoin at the clock the shard knew"
at_most "worker restarted: max staleness served" "$(max_staleness "$T/s0.err")" 1
got=$(model_accuracy "$T/rw.model")
close_to "worker restarted" "$got" "$want"
echo "worker restarted: rejoined ($(grep 'worker 1 joined' "$T/s0.err" | tail -1 | sed 's/.*joined //')), accuracy $got"

# ---- 5. SIGTERM writes the checkpoint
new_cluster
: >"$T/s0.err"
mkdir "$T/ck2"
serve 0 1 --checkpoint "$T/ck2" --checkpoint-every 0
s0=$SPID
worker 0 1 1 --sync-every 500 -m "$T/term.model"
wait_ok $WPID "worker before SIGTERM"
# with --checkpoint-every 0 the only checkpoint so far is the one written
# when the first worker joined (the push log's base): every push since is
# in the log alone, until SIGTERM checkpoints them and empties the log
[ -s "$T/ck2/shard-0-of-1.log" ] || fail "pushes before SIGTERM are not in the push log"
kill -TERM $s0
wait_ok $s0 "shard stopped by SIGTERM"
[ -s "$T/ck2/shard-0-of-1.ckpt" ] || fail "no checkpoint after SIGTERM"
[ -s "$T/ck2/shard-0-of-1.log" ] && fail "SIGTERM did not checkpoint what the push log held"
ls "$T/ck2" | grep -q tmp && fail "a temp checkpoint file was left behind"
serve 0 1 --checkpoint "$T/ck2"
s0=$SPID
sleep 0.2
kill -TERM $s0
wait_ok $s0 "resumed shard"
grep -q "resumed from checkpoint" "$T/s0.err" || fail "no resume after SIGTERM"
echo "SIGTERM checkpoint: written and resumed"
exit 0
