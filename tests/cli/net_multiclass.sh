#!/bin/sh
# A 3-class problem (softmax) over two shards and two workers: each feature
# owns K = 3 keys on the shards, and the gathered model predicts as well as
# the single-node run (within 0.5 points). The classes are made from a9a:
# the positive rows are class 1, the negative rows split into classes 2 and
# 3 by one of their features, so a linear model can learn them.
. net/tests/lib.sh

python3 - "$A9A" "$T/mc.train" "$A9AT" "$T/mc.test" <<'PY'
import sys
for src, dst in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    with open(src) as f, open(dst, "w") as g:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            feats = {p.split(":")[0] for p in parts[1:]}
            if parts[0] == "+1":
                c = 1
            else:
                c = 2 if "40" in feats else 3
            g.write("%d %s\n" % (c, " ".join(parts[1:])))
PY
OPTS="--threads 1 --epochs 10 --seed 7 --loss softmax"
"$BOAR" train $OPTS --quiet -m "$T/single.model" "$T/mc.train" ||
	fail "single-node softmax training"
"$BOAR" eval --json -m "$T/single.model" "$T/mc.test" >"$T/se.json" || fail "eval"
want=$(json_field "$T/se.json" test_accuracy)

serve 0 2 --staleness 1
s0=$SPID
serve 1 2 --staleness 1
s1=$SPID
"$BOAR" train $OPTS --ps "$(ps_list 2)" --worker 1/2 --sync-every 500 \
	"$T/mc.train" >"$T/w1.out" 2>"$T/w1.err" &
w1=$!
PIDS="$PIDS $w1"
"$BOAR" train $OPTS --ps "$(ps_list 2)" --worker 0/2 --sync-every 500 \
	--shutdown-servers -m "$T/mc.model" "$T/mc.train" >"$T/w0.out" 2>"$T/w0.err" &
w0=$!
PIDS="$PIDS $w0"
wait_ok $w0 "worker 0"
wait_ok $w1 "worker 1"
wait_ok $s0 "shard 0"
wait_ok $s1 "shard 1"
"$BOAR" eval --json -m "$T/mc.model" "$T/mc.test" >"$T/ce.json" || fail "eval of the gathered model"
got=$(json_field "$T/ce.json" test_accuracy)
close_to "softmax over the cluster" "$got" "$want"
at_most "max staleness served" "$(max_staleness "$T/s0.err" "$T/s1.err")" 1
echo "3-class softmax: cluster accuracy $got, single node $want"
exit 0
