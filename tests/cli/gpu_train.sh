#!/bin/sh
# Training on the GPU gives the CPU engine's accuracy on the same data and
# epochs (within noise), for every loss and both optimizers, resident and
# streamed; a model trained on the GPU evaluates on the CPU to the same
# numbers; matrix factorization reaches the CPU's test RMSE. Skipped where
# no GPU is usable (gpu_nodevice.sh covers that case).
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to parse JSON)"

A=datasets/a9a
AT=datasets/a9a.t
if ! "$BOAR" train --device gpu --epochs 1 -m "$T/probe" "$A" >/dev/null 2>"$T/err"; then
	skip "no usable GPU: $(tail -n 1 "$T/err")"
fi

# same_acc NAME KEY OPTIONS...: CPU and GPU agree on a9a's test KEY
# (test_accuracy: not lower than the CPU's beyond noise; test_rmse: not
# higher), and neither is implausibly better.
same_acc() {
	name=$1
	key=$2
	shift 2
	"$BOAR" train --threads 2 --epochs 10 --json --test "$AT" "$@" -m "$T/cpu" "$A" \
		>"$T/cpu.json" 2>"$T/err" || { cat "$T/err"; fail "$name: cpu train"; }
	"$BOAR" train --device gpu --epochs 10 --json --test "$AT" "$@" \
		-m "$T/gpu" "$A" >"$T/gpu.json" 2>"$T/err" ||
		{ cat "$T/err"; fail "$name: gpu train"; }
	ca=$(json_field "$T/cpu.json" $key)
	ga=$(json_field "$T/gpu.json" $key)
	echo "$name: $key cpu $ca gpu $ga"
	if [ $key = test_rmse ]; then
		awk -v a="$ca" -v b="$ga" 'BEGIN { exit !(a != "" && b <= a * 1.02 && b >= a * 0.9) }' ||
			fail "$name: expected gpu $key within +2%/-10% of cpu $ca, got $ga"
	else
		awk -v a="$ca" -v b="$ga" 'BEGIN { exit !(a != "" && b >= a - 0.006 && b <= a + 0.03) }' ||
			fail "$name: expected gpu $key within -0.006/+0.03 of cpu $ca, got $ga"
	fi
}

# (AdaGrad named: the CPU's default for linear models is normalized, which
# the GPU engine does not have; its auto is AdaGrad, checked below)
same_acc "logistic adagrad" test_accuracy --loss logistic --optimizer adagrad
at_least "logistic adagrad gpu accuracy" "$ga" 0.845
same_acc "logistic sgd" test_accuracy --loss logistic --optimizer sgd
same_acc "hinge" test_accuracy --loss hinge --optimizer sgd --eta 0.05
same_acc "squared" test_rmse --loss squared --optimizer sgd --eta 0.01
same_acc "logistic l2 atomic" test_accuracy --l2 1e-5 --update atomic --optimizer adagrad
export BOAR_GPU_CHUNK_BYTES=65536 # streamed in small chunks
same_acc "logistic streamed" test_accuracy --streams 3 --optimizer adagrad
unset BOAR_GPU_CHUNK_BYTES

# The GPU's default linear optimizer is AdaGrad (help says so); normalized
# is refused there by name.
# (the step of the first epoch is AdaGrad's default eta, not normalized's)
"$BOAR" train --device gpu --epochs 1 --json "$A" >"$T/auto.json" ||
	fail "gpu train at the defaults"
"$BOAR" train --device gpu --epochs 1 --json --optimizer adagrad "$A" >"$T/ada.json" ||
	fail "gpu train, adagrad"
[ -n "$(json_field "$T/ada.json" eta)" ] &&
	[ "$(json_field "$T/auto.json" eta)" = "$(json_field "$T/ada.json" eta)" ] ||
	fail "gpu defaults: eta $(json_field "$T/auto.json" eta), adagrad's is $(json_field "$T/ada.json" eta)"
expect_refused "normalized on the gpu" "$BOAR" train --device gpu --optimizer normalized "$A"
expect_message "normalized on the gpu" "normalized"

# The GPU model is an ordinary model: the CPU evaluates it to the numbers
# the GPU run reported for its last epoch (the streamed logistic run).
"$BOAR" eval --json -m "$T/gpu" "$AT" >"$T/eval.json" || fail "eval of the gpu model"
ea=$(json_field "$T/eval.json" test_accuracy)
awk -v a="$ea" -v b="$ga" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-9) }' ||
	fail "cpu eval of the gpu model: expected accuracy $ga, got $ea"

# Matrix factorization: MovieLens when the shared data is there, else
# synthetic low-rank ratings.
R=$SHARED/datasets/movielens-small/ratings.csv
if [ -f "$R" ]; then
	tail -n +2 "$R" | awk -F, 'NR % 10 != 0 { print $1, $2, $3 }' >"$T/r.train"
	tail -n +2 "$R" | awk -F, 'NR % 10 == 0 { print $1, $2, $3 }' >"$T/r.test"
else
	awk 'BEGIN { srand(3); for (u = 0; u < 400; u++) for (k = 0; k < 3; k++) U[u,k] = rand() - 0.5;
		for (i = 0; i < 300; i++) for (k = 0; k < 3; k++) I[i,k] = rand() - 0.5;
		for (n = 0; n < 60000; n++) { u = int(rand() * 400); i = int(rand() * 300); r = 3;
			for (k = 0; k < 3; k++) r += 3 * U[u,k] * I[i,k];
			printf "%d %d %.3f\n", u + 1, i + 1, r + 0.2 * (rand() - 0.5) } }' >"$T/r.txt"
	head -n 54000 "$T/r.txt" >"$T/r.train"
	tail -n 6000 "$T/r.txt" >"$T/r.test"
fi
for dev in cpu gpu; do
	"$BOAR" train --threads 2 --task mf --device $dev --rank 32 --epochs 20 --json \
		--test "$T/r.test" -m "$T/mf.$dev" "$T/r.train" >"$T/mf.$dev.json" 2>"$T/err" ||
		{ cat "$T/err"; fail "mf train on $dev"; }
done
cr=$(json_field "$T/mf.cpu.json" test_rmse)
gr=$(json_field "$T/mf.gpu.json" test_rmse)
echo "mf rank 32: test rmse cpu $cr gpu $gr"
awk -v a="$cr" -v b="$gr" 'BEGIN { exit !(b <= a * 1.02 + 0.005) }' ||
	fail "mf: expected gpu test rmse within 2% of cpu $cr, got $gr"
exit 0
