#!/bin/bash
# multi_linear_run.sh - linear models with --gpus 2 against one GPU, same
# host, same files, one call:
#
#   BOAR=build/boar OUT=/tmp/multi-out bench/gpu/multi_linear_run.sh [ROWS]
#
# Data: `boar gen` sparse classification, ROWS (default 4M) training rows
# and 1/4 of that held out, 2^20 features, 40 non-zeros a row, skew 1.
# Each of 1 and 2 GPUs trains 10 epochs of AdaGrad (the GPU's default) and
# SGD with --json --test; the summary gives the median epoch's seconds
# (the merge of the replicas included) and the test loss and accuracy
# after every epoch.
set -u
OUT=${OUT:-/tmp/multi-out}
ROWS=${1:-4000000}
BOAR=${BOAR:-build/boar}
DATA=${DATA:-/tmp/lindata-multi}
SUM=$OUT/multi-linear-summary.txt
mkdir -p "$OUT" "$DATA"
note() { echo "$*" | tee -a "$SUM"; }
if [ ! -s $DATA/tr.svm ]; then
	$BOAR gen --task linear --rows $((ROWS + ROWS / 4)) --features 1048576 \
		--nnz 40 --skew 1 -q -o $DATA/all.svm || { note "gen failed"; exit 1; }
	head -n $ROWS $DATA/all.svm >$DATA/tr.svm
	tail -n +$((ROWS + 1)) $DATA/all.svm >$DATA/te.svm
	rm -f $DATA/all.svm
fi
for opt in adagrad sgd; do
	for g in 1 2; do
		$BOAR train --device gpu --gpus $g --optimizer $opt --epochs 10 --cache \
			--json --test $DATA/te.svm -m $DATA/m $DATA/tr.svm \
			>"$OUT/lin_${opt}_g$g.json" 2>"$OUT/lin_${opt}_g$g.err" ||
			{ note "$opt --gpus $g failed: $(tail -n 1 "$OUT/lin_${opt}_g$g.err")"; continue; }
		python3 - "$OUT/lin_${opt}_g$g.json" "$opt" "$g" <<'PY' | tee -a "$SUM"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"epoch"' in l]
secs = sorted(r['seconds'] for r in rows[1:] or rows)
print(f"linear {sys.argv[2]} --gpus {sys.argv[3]}: median epoch {secs[len(secs)//2]*1e3:.1f} ms; "
      "epoch:test_loss:accuracy " +
      ' '.join(f"{r['epoch']}:{r['test_loss']:.4f}:{r['test_accuracy']:.4f}" for r in rows))
PY
	done
done
