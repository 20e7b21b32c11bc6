#!/bin/sh
# Two shards and two workers on loopback train a9a for s = 0 (BSP), 2 and
# inf (async): each run finishes, the gathered model file works with
# `boar eval` and `boar predict`, its test accuracy is within 0.5 points of
# the single-node run, and for a finite s no shard served a pull staler
# than s. Also: float16 pushes with the significance filter.
. net/tests/lib.sh

want=$(single_accuracy)

for s in 0 2 inf; do
	new_cluster
	: >"$T/s0.err"
	: >"$T/s1.err"
	serve 0 2 --staleness $s
	s0=$SPID
	serve 1 2 --staleness $s
	s1=$SPID
	worker 1 2 2 --sync-every 500
	w1=$WPID
	worker 0 2 2 --sync-every 500 --shutdown-servers -m "$T/m$s.model"
	w0=$WPID
	wait_ok $w0 "worker 0 (s=$s)"
	wait_ok $w1 "worker 1 (s=$s)"
	wait_ok $s0 "shard 0 (s=$s)"
	wait_ok $s1 "shard 1 (s=$s)"
	got=$(model_accuracy "$T/m$s.model")
	close_to "s=$s" "$got" "$want"
	st=$(max_staleness "$T/s0.err" "$T/s1.err")
	[ -n "$st" ] || fail "s=$s: the shards did not report max_staleness_served"
	[ "$s" = inf ] || at_most "s=$s: max staleness served" "$st" "$s"
	echo "s=$s: accuracy $got (single node $want), max staleness served $st"
done

"$BOAR" predict -m "$T/m0.model" -o "$T/scores" "$A9AT" ||
	fail "boar predict with the gathered model"
[ "$(wc -l <"$T/scores")" = 16281 ] || fail "predict: expected 16281 scores"

# float16 values and the significance filter: fewer push bytes per update
# than float32, same accuracy.
for mode in f32 f16; do
	new_cluster
	: >"$T/s0.err"
	serve 0 1 --staleness 1
	s0=$SPID
	if [ $mode = f32 ]; then extra=""; else extra="--f16 --push-threshold 1e-4"; fi
	worker 0 1 1 --sync-every 500 --json $extra --shutdown-servers \
		-m "$T/$mode.model"
	wait_ok $WPID "$mode worker"
	wait_ok $s0 "$mode shard"
	got=$(model_accuracy "$T/$mode.model")
	close_to "$mode" "$got" "$want"
	eval "bpu_$mode=\$(json_field "\$T/w0.out" push_bytes_per_update)"
done
awk -v a="$bpu_f16" -v b="$bpu_f32" 'BEGIN { exit !(a + 0 > 0 && a + 0 < 0.8 * b) }' ||
	fail "f16 + filter: expected well under $bpu_f32 bytes per update, got $bpu_f16"
echo "push bytes per update: f32 $bpu_f32, f16 + filter $bpu_f16"
exit 0
