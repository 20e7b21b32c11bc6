#!/bin/sh
# Cluster workers on the GPU engine: one shard and two `--device gpu`
# workers on loopback train a9a to within 0.5 points of the single-node
# (CPU) test accuracy, with the staleness bound held; again with the data
# streamed in small chunks (each clock's slice of the epoch then runs over
# chunks kept in the stream slots). Without a usable GPU: a GPU worker is
# refused cleanly with the GPU's reason (it opens the GPU before it
# connects), then the test is skipped.
. net/tests/lib.sh

if ! "$BOAR" train --device gpu --epochs 1 -m "$T/probe" "$A9A" \
	>/dev/null 2>"$T/probe.err"; then
	expect_refused "GPU worker without a GPU" \
		"$BOAR" train $COMMON --device gpu --ps 127.0.0.1:9 \
		--worker 0/1 "$A9A"
	expect_message "GPU worker without a GPU" "no GPU support|no usable GPU"
	skip "no usable GPU: $(tail -n 1 "$T/probe.err")"
fi

want=$(single_accuracy)
"$BOAR" train $COMMON --device gpu --quiet --json --test "$A9AT" "$A9A" \
	>"$T/single_gpu.json" || fail "single-node GPU training failed"
want_gpu=$(json_field "$T/single_gpu.json" test_accuracy)

# run NAME STALENESS EXTRA...: 1 shard, 2 GPU workers; checks accuracy and
# the staleness bound.
run() {
	_name=$1
	_st=$2
	shift 2
	new_cluster
	: >"$T/s0.err"
	serve 0 1 --staleness "$_st"
	_s0=$SPID
	worker 1 2 1 --device gpu --sync-every 500 "$@"
	_w1=$WPID
	worker 0 2 1 --device gpu --sync-every 500 --shutdown-servers \
		-m "$T/$_name.model" "$@"
	_w0=$WPID
	wait_ok $_w0 "$_name: worker 0"
	wait_ok $_w1 "$_name: worker 1"
	wait_ok $_s0 "$_name: shard"
	got=$(model_accuracy "$T/$_name.model")
	close_to "$_name" "$got" "$want"
	st=$(max_staleness "$T/s0.err")
	[ -n "$st" ] || fail "$_name: the shard did not report max_staleness_served"
	at_most "$_name: max staleness served" "$st" "$_st"
	echo "$_name: accuracy $got (single node cpu $want, gpu $want_gpu), max staleness served $st"
	echo "$_name: $(grep '^worker 0/2' "$T/w0.err" | cut -d';' -f1)"
}

run resident 2
export BOAR_GPU_CHUNK_BYTES=65536 # about 60 chunks of a9a
run streamed 1 --streams 3
unset BOAR_GPU_CHUNK_BYTES
exit 0
