#!/bin/sh
# A cluster worker's idle OpenMP threads spin briefly (src/cli/omp_spin.c):
# `boar train --ps ... --worker ...` starts with GOMP_SPINCOUNT=10000 where
# the user set neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY, and keeps the
# user's own setting where there is one; the worker's JSON says which
# count libgomp read. The model is the one trained without the default.
. net/tests/lib.sh

# run NAME [VAR=VALUE]: one shard + one worker, worker 0's JSON in
# $T/NAME.json and its model in $T/NAME.model
run() {
	new_cluster
	serve 0 1
	s0=$SPID
	if [ -n "${2:-}" ]; then export "$2"; fi
	COMMON="--threads 2 --epochs 2 --seed 7" worker 0 1 1 --sync-every 2000 \
		--json --shutdown-servers -m "$T/$1.model"
	if [ -n "${2:-}" ]; then unset "${2%%=*}"; fi
	wait_ok $WPID "$1 worker"
	wait_ok $s0 "$1 shard"
	tail -n 1 "$T/w0.out" >"$T/$1.json"
}

unset GOMP_SPINCOUNT OMP_WAIT_POLICY
run default
run own GOMP_SPINCOUNT=77
run passive OMP_WAIT_POLICY=passive

spin() { grep -o '"gomp_spincount": [^,}]*' "$T/$1.json" | sed 's/.*: //'; }
[ "$(spin default)" = '"10000"' ] ||
	fail "default: the worker's spin count is $(spin default), not \"10000\""
[ "$(spin own)" = '"77"' ] ||
	fail "GOMP_SPINCOUNT=77: the worker read $(spin own)"
[ "$(spin passive)" = null ] ||
	fail "OMP_WAIT_POLICY=passive: a spin count $(spin passive) was set over it"
echo "spin counts: default $(spin default), own $(spin own), passive $(spin passive)"
exit 0
