#!/bin/sh
# The launcher's replicas (issue 13): `boar train --cluster --servers 2
# --replicas 2` on 6 ranks (started by hand with SLURM_PROCID/NTASKS set
# as srun would): ranks 0-1 are the primaries, 2-3 their backups (ports
# base + 2 + i), 4-5 the workers, which know both addresses. Rank 0 (the
# primary of shard 0) is killed -9 after epoch 3 and not restarted: its
# backup takes over, every other rank exits 0, and worker 0's model is
# within half a point of the single-node run.
. net/tests/lib.sh

want=$(single_accuracy)
pids=""
for r in 0 1 2 3 4 5; do
	SLURM_PROCID=$r SLURM_NTASKS=6 "$BOAR" train --cluster --servers 2 \
		--replicas 2 --base-port "$PORT" $COMMON --sync-every 500 \
		--throttle-ms 10 --json -m "$T/model" "$A9A" \
		>"$T/r$r.out" 2>"$T/r$r.err" &
	eval "pid_$r=$!"
	PIDS="$PIDS $!"
done
for _ in $(seq 600); do
	grep -q '"epoch": 3,' "$T/r4.out" 2>/dev/null && break
	sleep 0.05
done
grep -q '"epoch": 3,' "$T/r4.out" ||
	{ tail -n 5 "$T"/r*.err; fail "worker 0 (rank 4) did not reach epoch 3"; }
kill -9 $pid_0 || fail "rank 0 ended before it was killed"
for r in 1 2 3 4 5; do
	eval "wait_ok \$pid_$r 'rank $r'"
done
grep -q "took over" "$T/r2.err" ||
	{ cat "$T/r2.err"; fail "rank 2 (shard 0's backup) did not take over"; }
grep -q "backup of 127.0.0.1:$PORT" "$T/r2.err" ||
	{ cat "$T/r2.err"; fail "rank 2 is not the backup of rank 0's address"; }
got=$(model_accuracy "$T/model")
close_to "--replicas 2, rank 0 killed" "$got" "$want"
echo "--cluster --replicas 2: rank 0 killed -9, its backup took over; accuracy $got (single node $want)"
