#!/bin/sh
# Cluster training on hashed input (Vowpal Wabbit text) writes the same kind
# of model a single-node run does: `boar eval` takes it with the same data
# (the model remembers the input's hashing slots), and the worker's epoch
# lines carry the test metrics. Both broke when the worker built its model
# with a copy of the driver's code that forgot the slots and then dropped
# the evaluation error.
. net/tests/lib.sh

# a9a as VW text: "label |f idx:val ..." (labels +1/-1).
awk '{ printf "%s |f", $1; for (i = 2; i <= NF; i++) printf " %s", $i; print "" }' \
	"$A9A" >"$T/a9a.vw"
awk '{ printf "%s |f", $1; for (i = 2; i <= NF; i++) printf " %s", $i; print "" }' \
	"$A9AT" >"$T/a9a.t.vw"

"$BOAR" train $COMMON --quiet -m "$T/single.model" "$T/a9a.vw" ||
	fail "single-node training on VW text"
"$BOAR" eval --json -m "$T/single.model" "$T/a9a.t.vw" >"$T/se.json" ||
	fail "eval of the single-node model"
want=$(json_field "$T/se.json" test_accuracy)

serve 0 1 --staleness 1
s0=$SPID
"$BOAR" train $COMMON --json --ps "$(ps_list 1)" --worker 0/1 --sync-every 2000 \
	--shutdown-servers --test "$T/a9a.t.vw" -m "$T/c.model" "$T/a9a.vw" \
	>"$T/w0.out" 2>"$T/w0.err" &
w0=$!
PIDS="$PIDS $w0"
wait_ok $w0 "worker 0"
wait_ok $s0 "shard 0"

grep -q "\"epoch\": 10," "$T/w0.out" || { cat "$T/w0.out"; fail "no JSON line for epoch 10"; }
n=$(grep '"epoch"' "$T/w0.out" | grep -c '"test_accuracy"')
[ "$n" = 10 ] || { cat "$T/w0.out" "$T/w0.err"; fail "$n of 10 epoch lines have test metrics"; }
"$BOAR" eval --json -m "$T/c.model" "$T/a9a.t.vw" >"$T/ce.json" 2>"$T/ce.err" ||
	{ cat "$T/ce.err"; fail "boar eval refuses the cluster's model of VW data"; }
got=$(json_field "$T/ce.json" test_accuracy)
close_to "VW data over the cluster" "$got" "$want"
echo "VW over the cluster: accuracy $got, single node $want"
exit 0
