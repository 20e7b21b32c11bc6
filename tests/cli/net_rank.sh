#!/bin/sh
# Cluster membership: a second live process claiming a worker rank that a
# live connection holds is refused, not let in to evict the first (two
# workers with one rank once evicted each other at every clock, lost a
# fifth of the pushes and sometimes deadlocked, all with exit 0). The
# shard logs the refusal with both addresses; the refused process retries
# for its --reconnect-timeout (the holder might be its own dead
# predecessor) and then exits 1 naming the shard. The first holder and the
# other workers finish normally. (A worker killed and restarted with the
# same rank still rejoins: net_faults.sh case 4.)
. net/tests/lib.sh

new_cluster
serve 0 1 --staleness 1 --heartbeat-timeout 5
s0=$SPID
worker 0 2 1 --sync-every 500 --throttle-ms 10 --shutdown-servers \
	-m "$T/dup.model"
w0=$WPID
worker 1 2 1 --sync-every 500 --throttle-ms 10 --reconnect-timeout 2
a=$WPID
mv_logs() { mv "$T/w1.out" "$T/w1$1.out"; mv "$T/w1.err" "$T/w1$1.err"; }
# Let the first one join before the impostor comes.
end=$(($(date +%s) + 20))
until grep -q "worker 1 joined" "$T/s0.err"; do
	[ "$(date +%s)" -lt "$end" ] || { cat "$T/s0.err"; fail "worker 1 never joined"; }
	sleep 0.05
done
mv_logs a
worker 1 2 1 --sync-every 500 --reconnect-timeout 2
b=$WPID
t0=$(date +%s)
wait $b
rc=$?
mv_logs b
[ "$rc" = 1 ] || { cat "$T/w1b.err" "$T/s0.err"; fail "the second rank-1 process exited $rc, want 1"; }
[ "$(($(date +%s) - t0))" -le 30 ] || fail "the refused process took over 30 s to give up"
grep -q "^boar: .*shard 127.0.0.1:$PORT_0: worker rank 1 is already held by a live connection from 127.0.0.1:" \
	"$T/w1b.err" || { cat "$T/w1b.err"; fail "the refused process did not say why"; }
[ "$(grep -c . "$T/w1b.err")" = 1 ] || { cat "$T/w1b.err"; fail "the refusal is not one line"; }
grep -q "worker rank 1 is already held" "$T/s0.err" ||
	{ cat "$T/s0.err"; fail "the shard did not log the refusal"; }
wait_ok $a "the first rank-1 worker"
wait_ok $w0 "worker 0"
wait_ok $s0 "the shard"
n=$(grep -c "worker 1 joined" "$T/s0.err")
[ "$n" = 1 ] || { cat "$T/s0.err"; fail "rank 1 joined $n times, want 1 (evicted?)"; }
grep -q "replaced\|worker 1 disconnected" "$T/s0.err" &&
	{ cat "$T/s0.err"; fail "the holder of rank 1 was disturbed"; }
want=$(single_accuracy)
got=$(model_accuracy "$T/dup.model")
close_to "rank held against an impostor" "$got" "$want"
echo "second rank-1 process refused after $(($(date +%s) - t0)) s: $(sed 's/^boar: //' "$T/w1b.err")"
exit 0
