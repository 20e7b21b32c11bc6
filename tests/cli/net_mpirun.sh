#!/bin/sh
# The launcher path: `mpirun -np 4 boar train --cluster --servers 2 ...`
# (Debian's openmpi-bin) runs two shards and two workers, worker 0 gathers
# a model that `boar eval` reads, within 0.5 points of the single-node run.
# The srun path is checked the same way without Slurm, by starting the four
# ranks by hand with SLURM_PROCID/SLURM_NTASKS set as srun would.
. net/tests/lib.sh

want=$(single_accuracy)

# ---- srun's variables
pids=""
for r in 0 1 2 3; do
	SLURM_PROCID=$r SLURM_NTASKS=4 "$BOAR" train --cluster --servers 2 \
		--base-port "$PORT" $COMMON --sync-every 500 -m "$T/srun.model" \
		"$A9A" >"$T/r$r.out" 2>"$T/r$r.err" &
	pids="$pids $!"
	PIDS="$PIDS $!"
done
for p in $pids; do wait_ok "$p" "rank with SLURM_PROCID"; done
got=$(model_accuracy "$T/srun.model")
close_to "SLURM_PROCID ranks" "$got" "$want"
st=$(max_staleness "$T/r0.err" "$T/r1.err")
at_most "SLURM_PROCID ranks: max staleness" "$st" 1
echo "SLURM_PROCID ranks: accuracy $got, max staleness served $st"

# ---- mpirun
command -v mpirun >/dev/null 2>&1 || skip "mpirun not found (apt-get install openmpi-bin)"
root=""
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
timeout 120 mpirun $root --oversubscribe -np 4 \
	"$BOAR" train --cluster --servers 2 --base-port $((PORT + 10)) \
	$COMMON --sync-every 500 --staleness 0 -m "$T/mpi.model" "$A9A" \
	>"$T/mpi.out" 2>"$T/mpi.err"
rc=$?
[ "$rc" = 0 ] || { tail -30 "$T/mpi.err"; fail "mpirun exited $rc"; }
got=$(model_accuracy "$T/mpi.model")
close_to "mpirun" "$got" "$want"
st=$(max_staleness "$T/mpi.err")
[ -n "$st" ] || fail "mpirun: no staleness report"
at_most "mpirun, s=0: max staleness" "$st" 0
echo "mpirun -np 4, 2 shards, s=0: accuracy $got, max staleness served $st"
exit 0
