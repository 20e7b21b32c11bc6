#!/bin/sh
# K-class models on the GPU: `boar train --device gpu` on a 5-class LIBSVM
# file reaches the CPU engine's held-out accuracy and loss (within noise)
# for softmax and one-vs-rest logistic and hinge, resident and streamed;
# the GPU's model evaluates on the CPU to the numbers the run reported;
# what the GPU engine lacks is refused by name. Skipped where no GPU is
# usable (gpu_nodevice.sh covers that case).
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to parse JSON)"

# 4000 rows of 6 of 120 features, labelled 0..4 by the argmax of a hidden
# 5-class model plus noise: 3000 to train, 1000 to test. (Each feature is
# in ~150 rows: none is replicated per block, so streamed chunks train as
# resident data does; test_gpu_multiclass covers the replicas.)
awk -v tr="$T/train" -v te="$T/test" 'BEGIN { srand(5); K = 5; D = 120
	for (j = 1; j <= D; j++) for (c = 0; c < K; c++) W[j, c] = 2 * rand() - 1
	for (r = 0; r < 4000; r++) {
		line = ""
		for (c = 0; c < K; c++) m[c] = 0
		for (k = 0; k < 6; k++) {
			j = k * 20 + 1 + int(rand() * 20); x = 2 * rand() - 1
			line = line " " j ":" sprintf("%.4f", x)
			for (c = 0; c < K; c++) m[c] += W[j, c] * x
		}
		y = 0
		for (c = 0; c < K; c++) { m[c] += 0.2 * (2 * rand() - 1); if (m[c] > m[y]) y = c }
		print y line > (r < 3000 ? tr : te)
	} }'

if ! "$BOAR" train --device gpu --loss softmax --epochs 1 -m "$T/probe" "$T/train" \
	>/dev/null 2>"$T/err"; then
	grep -q "multiclass" "$T/err" && { cat "$T/err"; fail "softmax refused on the GPU"; }
	skip "no usable GPU: $(tail -n 1 "$T/err")"
fi

# same NAME OPTIONS...: CPU (one thread) and GPU agree on the held-out
# accuracy (within 0.02) and loss (within 5%).
same() {
	name=$1
	shift
	"$BOAR" train --threads 1 --epochs 10 --json --test "$T/test" "$@" \
		-m "$T/cpu" "$T/train" >"$T/cpu.json" 2>"$T/err" ||
		{ cat "$T/err"; fail "$name: cpu train"; }
	"$BOAR" train --device gpu --epochs 10 --json --test "$T/test" "$@" \
		-m "$T/gpu" "$T/train" >"$T/gpu.json" 2>"$T/err" ||
		{ cat "$T/err"; fail "$name: gpu train"; }
	grep -q "5 classes" "$T/err" || { cat "$T/err"; fail "$name: not a 5-class model"; }
	ca=$(json_field "$T/cpu.json" test_accuracy)
	ga=$(json_field "$T/gpu.json" test_accuracy)
	cl=$(json_field "$T/cpu.json" test_loss)
	gl=$(json_field "$T/gpu.json" test_loss)
	echo "$name: accuracy cpu $ca gpu $ga, loss cpu $cl gpu $gl"
	awk -v a="$ca" -v b="$ga" -v x="$cl" -v y="$gl" 'BEGIN {
		d = a - b; if (d < 0) d = -d; e = x - y; if (e < 0) e = -e
		exit !(a != "" && b != "" && d <= 0.02 && e <= 0.05 * x) }' ||
		fail "$name: gpu accuracy $ga loss $gl, cpu $ca $cl"
}

same "softmax adagrad" --loss softmax --optimizer adagrad
at_least "softmax gpu accuracy" "$ga" 0.8
same "softmax sgd l2" --loss softmax --optimizer sgd --eta 0.05 --l2 1e-4
same "logistic one-vs-rest" --loss logistic --optimizer adagrad
same "hinge one-vs-rest" --loss hinge --optimizer sgd --eta 0.05
export BOAR_GPU_CHUNK_BYTES=16384 # streamed in small chunks
same "softmax streamed" --loss softmax --optimizer adagrad --streams 3
unset BOAR_GPU_CHUNK_BYTES

# The GPU's model is an ordinary K-class model: the CPU evaluates it to
# the numbers the run reported for its last epoch.
"$BOAR" eval --json -m "$T/gpu" "$T/test" >"$T/eval.json" || fail "eval of the gpu model"
ea=$(json_field "$T/eval.json" test_accuracy)
awk -v a="$ea" -v b="$ga" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d < 1e-9) }' ||
	fail "cpu eval of the gpu model: expected accuracy $ga, got $ea"

# Refused by name, not trained wrongly.
expect_refused "deterministic softmax on the gpu" "$BOAR" train --device gpu \
	--loss softmax --deterministic -m "$T/x" "$T/train"
expect_message "deterministic softmax on the gpu" "deterministic"
expect_refused "normalized softmax on the gpu" "$BOAR" train --device gpu \
	--loss softmax --optimizer normalized -m "$T/x" "$T/train"
expect_message "normalized softmax on the gpu" "normalized"
[ -e "$T/x" ] && fail "a model file was left behind after a refusal"
echo "ok"
exit 0
