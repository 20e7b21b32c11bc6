#!/bin/bash
# multi_run.sh - --gpus 2 against one GPU on the same host, same files, one
# call (issue 11: at least 1.7x one GPU at rank 128):
#
#   BOAR=build/boar OUT=/tmp/multi bench/gpu/multi_run.sh [RATINGS]
#
# Data: Netflix-shaped synthetic ratings as in cumf_compare.sh
# (netflix_data.sh: 480189 users x 17770 items, hidden rank 16, noise
# 0.05, +SHIFT, default 3), RATINGS (default 25M) for training and 1% more
# held out. For each rank in
# RANKS (128 32) boar trains 20 epochs with --gpus 1 and --gpus 2 (defaults
# otherwise, --early-stop 0, --cache, --json --test) and prints, per run,
# the median epoch's rate and the curve epoch:cumulative sweep
# seconds:test RMSE. The measure is time to a fixed test RMSE: the targets
# are the one-GPU run's test RMSE after epochs 3 and 10, each plus 0.5%
# (fixed before the two-GPU run is read); for each, the sweep seconds each
# run needs to reach it and their ratio. Sweep seconds are the epochs'
# `seconds` (the engine's epoch, every GPU's sub-epochs and the item
# blocks' moves included; the per-epoch test scoring is outside).
set -u
OUT=${OUT:-/tmp/multi-out}
N=${1:-25000000}
BOAR=${BOAR:-build/boar}
DATA=${DATA:-/tmp/mfdata-multi}
RANKS=${RANKS:-128 32}
EPOCHS=${EPOCHS:-20}
SUM=$OUT/multi-summary.txt
mkdir -p "$OUT" "$DATA"
note() { echo "$*" | tee -a "$SUM"; }
note "devices: $(nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | paste -sd';')"
note "link: $(nvidia-smi topo -m 2>/dev/null | sed -n 2p | tr -s ' \t' ' ')"
note "commit: $(cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null)"
[ -x "$BOAR" ] || { note "no boar at $BOAR"; exit 1; }

. "$(dirname "$0")/netflix_data.sh"
netflix_data $N $DATA ${SHIFT:-3} || exit 1

run() { # tag options...
	local tag=$1; shift
	local t0=$(date +%s.%N)
	$BOAR train --device gpu --epochs $EPOCHS --early-stop 0 --cache --json \
		--test $DATA/te.txt "$@" $DATA/tr.txt >"$OUT/$tag.json" 2>"$OUT/$tag.err" ||
		{ note "$tag: failed: $(tail -n 2 "$OUT/$tag.err")"; return 1; }
	note "$tag: whole command $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN { printf "%.2f", b - a }') s"
}

for k in $RANKS; do
	run r${k}_g1 --rank $k --gpus 1 && run r${k}_g2 --rank $k --gpus 2
	python3 - "$OUT/r${k}_g1.json" "$OUT/r${k}_g2.json" "$k" <<'PY' | tee -a "$SUM"
import json, sys
def load(p):
    try:
        return [json.loads(l) for l in open(p) if '"epoch"' in l]
    except OSError:
        return []
one, two, k = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
def cum(rows):
    s, out = 0.0, []
    for r in rows:
        s += r['seconds']; out.append(s)
    return out
for tag, rows in (('1 GPU', one), ('2 GPUs', two)):
    if not rows:
        print(f"rank {k} {tag}: no epochs"); continue
    rates = sorted(r['updates_per_sec'] for r in rows[1:] or rows)
    print(f"rank {k} {tag}: median {rates[len(rates)//2]/1e9:.3f} G ratings/s; "
          "epoch:cum_sweep_s:test_rmse " +
          ' '.join(f"{i+1}:{c:.4f}:{r['test_rmse']:.4f}" for i, (c, r) in enumerate(zip(cum(rows), rows))))
if len(one) >= 10 and two:
    for e in (3, 10):
        target = one[e - 1]['test_rmse'] * 1.005
        hit = []
        for rows in (one, two):
            t = next(((i + 1, c) for i, (c, r) in enumerate(zip(cum(rows), rows))
                      if r['test_rmse'] <= target), None)
            hit.append(t)
        if all(hit):
            print(f"rank {k}: to test RMSE {target:.4f} (1 GPU's epoch {e} + 0.5%): "
                  f"1 GPU epoch {hit[0][0]} {hit[0][1]:.4f} s, 2 GPUs epoch {hit[1][0]} "
                  f"{hit[1][1]:.4f} s: {hit[0][1] / hit[1][1]:.2f}x")
        else:
            print(f"rank {k}: target {target:.4f}: reached by 1 GPU {hit[0]}, 2 GPUs {hit[1]}")
PY
done
