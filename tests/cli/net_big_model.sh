#!/bin/sh
# A model larger than any process may hold: a9a hashed into 2^32 weights
# (16 GiB of floats) trained by 2 shards + 2 workers, every process under
# `ulimit -v` of 2 GiB. Workers hold only the weights of the features their
# rows use (data/feature_map.h), shards only the keys pushed (a sparse
# store, net/shard_w.h); the model is too large to gather, so worker 0's
# -m writes a sharded-model file and the shards keep running. Then:
# - one process at --hash-bits 32 is refused under the same limit;
# - the cluster's test accuracy is within noise of the single node's at
#   --hash-bits 18 (where collisions do not matter);
# - `boar eval --ps` through the shards gives exactly worker 0's last
#   evaluation (staleness 0: its last pull waits for every worker's last
#   push, so it saw the final model), and `boar predict --ps` scores
#   agree with it;
# - the shards checkpoint their sparse stores on SIGTERM, and restarted
#   from them answer the same;
# - the sharded-model file without --ps is refused by name.
. net/tests/lib.sh

LIMIT_KB=2097152 # 2 GiB: an eighth of the model
COMMON="--threads 1 --epochs 5 --seed 7"

"$BOAR" train $COMMON --hash-bits 18 --quiet --json --test "$A9AT" "$A9A" \
	>"$T/single.json" || fail "single-node training at --hash-bits 18"
want=$(json_field "$T/single.json" test_accuracy)

ulimit -v $LIMIT_KB || skip "ulimit -v is not available"

# One process cannot hold it.
"$BOAR" train $COMMON --hash-bits 32 --quiet "$A9A" 2>"$T/one.err" &&
	fail "one process trained 2^32 weights under ulimit -v $LIMIT_KB KiB"
echo "single process at 2^32: $(tail -1 "$T/one.err")"

serve 0 2 --staleness 0 --checkpoint "$T/ck" --checkpoint-every 3600
s0=$SPID
serve 1 2 --staleness 0 --checkpoint "$T/ck" --checkpoint-every 3600
s1=$SPID
worker 1 2 2 --hash-bits 32 --sync-every 500
w1=$WPID
worker 0 2 2 --hash-bits 32 --sync-every 500 --json --test "$A9AT" \
	-m "$T/big.model"
wait_ok $WPID "worker 0"
wait_ok $w1 "worker 1"
for i in 0 1; do
	grep -q "in a sparse (only keys pushed) store" "$T/s$i.err" ||
		fail "shard $i did not choose the sparse store: $(cat "$T/s$i.err")"
done
[ "$(json_field "$T/w0.out" model_sharded)" = 1 ] ||
	fail "worker 0 did not leave the model in the shards"
grep -q "too large to gather: it stays in the 2 shards" "$T/w0.err" ||
	fail "worker 0 did not say where the model is"
kill -0 $s0 && kill -0 $s1 || fail "a shard stopped with the model in it"

loss=$(json_field "$T/w0.out" test_loss)
acc=$(json_field "$T/w0.out" test_accuracy)
close_to "2^32 weights on 2 shards + 2 workers" "$acc" "$want"

"$BOAR" eval --json --ps "$(ps_list 2)" -m "$T/big.model" "$A9AT" \
	>"$T/e.json" 2>"$T/e.err" || fail "eval --ps: $(cat "$T/e.err")"
[ "$(json_field "$T/e.json" test_loss)" = "$loss" ] &&
	[ "$(json_field "$T/e.json" test_accuracy)" = "$acc" ] ||
	fail "eval --ps: $(cat "$T/e.json"), worker 0 said loss $loss accuracy $acc"

"$BOAR" predict --ps "$(ps_list 2)" -m "$T/big.model" -o "$T/p.txt" "$A9AT" ||
	fail "predict --ps"
pacc=$(cut -d' ' -f1 "$A9AT" | paste -d' ' - "$T/p.txt" | awk '
	{ n++; if (($1 > 0) == ($2 > 0.5)) ok++ } END { printf "%.10g", ok / n }')
awk -v a="$pacc" -v b="$acc" 'BEGIN { d = a - b; exit !(d < 1e-9 && d > -1e-9) }' ||
	fail "predict --ps scores give accuracy $pacc, the evaluation $acc"

# The shards' sparse stores through a checkpoint and back.
kill -TERM $s0 $s1
wait $s0 $s1
ls "$T/ck"/shard-0-of-2.ckpt "$T/ck"/shard-1-of-2.ckpt >/dev/null ||
	fail "no checkpoints on SIGTERM"
head -c 8 "$T/ck/shard-0-of-2.ckpt" | grep -q BOARCKP3 ||
	fail "the checkpoint is not the sparse format"
serve 0 2 --staleness 0 --checkpoint "$T/ck" --checkpoint-every 3600
serve 1 2 --staleness 0 --checkpoint "$T/ck" --checkpoint-every 3600
"$BOAR" eval --json --ps "$(ps_list 2)" -m "$T/big.model" "$A9AT" \
	>"$T/e2.json" 2>"$T/e2.err" || fail "eval after restart: $(cat "$T/e2.err")"
[ "$(json_field "$T/e2.json" test_loss)" = "$loss" ] ||
	fail "after the checkpoint: $(cat "$T/e2.json"), before loss $loss"

"$BOAR" predict -m "$T/big.model" "$A9AT" >/dev/null 2>"$T/nops.err" &&
	fail "a sharded model was scored without --ps"
grep -q "is a model kept in the shards" "$T/nops.err" ||
	fail "unclear refusal: $(cat "$T/nops.err")"
echo "2^32 weights under ulimit -v $LIMIT_KB KiB: accuracy $acc (single node at 18 bits $want), eval/predict --ps agree"
exit 0
