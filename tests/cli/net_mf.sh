#!/bin/sh
# Matrix factorization in the cluster: 2 shards and 2 workers on loopback,
# each worker reading only its part of a ratings file (--read-part with
# --users/--items), train MF; the model worker 0 gathers is an ordinary MF
# model (boar eval, boar predict) whose test RMSE is within 15% (+0.005)
# of the single node's at the same options, as is worker 0's last
# per-epoch evaluation; the workers train in strata (2 x 2 cells in 2
# rounds: 8 clocks an epoch, whatever --sync-every says). The same with every worker reading the whole file
# and AdaGrad (its row sums sharded beside the factors).
# Bad input: a bad line in worker 1's part is named by the file's own line
# number; what cluster MF cannot do is refused by name; --read-part on
# ratings without the model's shape is a usage error.
. net/tests/lib.sh

B="$BOAR"
"$B" gen --task mf --rows 44000 --users 400 --items 300 --rank 6 \
	--noise 0.05 --seed 11 -q -o "$T/all.txt" || fail "boar gen"
head -40000 "$T/all.txt" >"$T/r.txt"
tail -4000 "$T/all.txt" >"$T/r.t"
MF="--threads 1 --epochs 6 --seed 7 --rank 6"

"$B" train $MF --early-stop 0 --quiet --json --test "$T/r.t" "$T/r.txt" \
	>"$T/single.json" || fail "single-node MF training failed"
want=$(json_field "$T/single.json" test_rmse)
[ -n "$want" ] || fail "no test_rmse from the single node"

# within TOL of the single node's RMSE
rmse_close() {
	awk -v g="$2" -v w="$3" 'BEGIN { exit !(g != "" && g + 0 <= w * 1.15 + 0.005) }' ||
		fail "$1: test RMSE $2 is not within 15% (+0.005) of the single node's $3"
}

# mf_cluster NAME EXTRA...: 2 shards, 2 workers, model in $T/NAME.model
mf_cluster() {
	_name=$1
	shift
	new_cluster
	serve 0 2 --staleness 1
	_s0=$SPID
	serve 1 2 --staleness 1
	_s1=$SPID
	"$B" train $MF --ps "$(ps_list 2)" --worker 1/2 --sync-every 4000 \
		"$@" "$T/r.txt" >"$T/w1.out" 2>"$T/w1.err" &
	_w1=$!
	PIDS="$PIDS $_w1"
	"$B" train $MF --ps "$(ps_list 2)" --worker 0/2 --sync-every 4000 \
		--shutdown-servers --json --test "$T/r.t" -m "$T/$_name.model" \
		"$@" "$T/r.txt" >"$T/w0.out" 2>"$T/w0.err" &
	_w0=$!
	PIDS="$PIDS $_w0"
	wait_ok $_w0 "$_name: worker 0"
	wait_ok $_w1 "$_name: worker 1"
	wait_ok $_s0 "$_name: shard 0"
	wait_ok $_s1 "$_name: shard 1"
}

mf_cluster part --read-part --users 400 --items 300
grep -q "parsed .* rows, bytes" "$T/w1.err" || fail "worker 1 did not read a part"
"$B" eval --json -m "$T/part.model" "$T/r.t" >"$T/eval.json" ||
	fail "boar eval of the gathered MF model"
got=$(json_field "$T/eval.json" test_rmse)
rmse_close "read-part cluster (gathered model)" "$got" "$want"
last=$(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print([r for r in rows if "epoch" in r][-1]["test_rmse"])' "$T/w0.out")
rmse_close "read-part cluster (epoch 6 evaluation)" "$last" "$want"
clocks=$(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print([r for r in rows if "clocks" in r][-1]["clocks"])' "$T/w0.out")
[ "$clocks" = 48 ] || fail "read-part cluster: $clocks clocks, not 6 epochs x 4 strata cells x 2 rounds"
"$B" predict -m "$T/part.model" -o "$T/scores" "$T/r.t" ||
	fail "boar predict with the gathered MF model"
[ "$(wc -l <"$T/scores")" = 4000 ] || fail "predict: expected 4000 scores"
echo "read-part: RMSE $got (epoch 6: $last), single node $want"

"$B" train $MF --optimizer adagrad --early-stop 0 --quiet --json \
	--test "$T/r.t" "$T/r.txt" >"$T/single_ada.json" ||
	fail "single-node AdaGrad MF failed"
want_ada=$(json_field "$T/single_ada.json" test_rmse)
mf_cluster ada --optimizer adagrad
"$B" eval --json -m "$T/ada.model" "$T/r.t" >"$T/eval.json" ||
	fail "boar eval of the AdaGrad model"
got=$(json_field "$T/eval.json" test_rmse)
rmse_close "whole-file AdaGrad cluster" "$got" "$want_ada"
echo "adagrad: RMSE $got, single node $want_ada"

# A bad line in worker 1's part: the file's line, not the part's.
n=$(wc -l <"$T/r.txt")
head -36000 "$T/r.txt" >"$T/bad.txt"
echo "17 abc 3.0" >>"$T/bad.txt"
tail -n +36001 "$T/r.txt" >>"$T/bad.txt"
"$B" train $MF --ps 127.0.0.1:1 --worker 1/2 --read-part --users 400 \
	--items 300 "$T/bad.txt" 2>"$T/bad.err" && fail "a bad line was taken"
grep -q "bad.txt:36001: item id 'abc' is not a non-negative integer" \
	"$T/bad.err" || fail "bad line: unclear error: $(cat "$T/bad.err")"

# Refused by name, before any shard is asked (exit 1), or usage (exit 2).
refused() {
	_what=$1
	_code=$2
	shift 2
	"$B" train $MF --ps 127.0.0.1:1 --worker 0/2 "$@" "$T/r.txt" \
		2>"$T/ref.err"
	_rc=$?
	[ "$_rc" = "$_code" ] || fail "$*: exit $_rc, expected $_code"
	grep -q "$_what" "$T/ref.err" || fail "$*: unclear error: $(cat "$T/ref.err")"
}
refused "cluster training does not support early stopping" 1 --early-stop 2
refused "cluster training does not support non-negative factors" 1 --mf-nonneg
refused "cluster training does not support a warm start" 2 --init-model "$T/part.model"
refused "needs --users N and --items M" 2 --read-part
refused "user id 399, but --users says the ids are below 100" 1 \
	--users 100 --items 300
exit 0
