#!/bin/bash
# cumf_compare.sh - issue 11's time-to-RMSE comparison with cuMF_SGD on one
# GPU, same card, same files, one run each:
#
#   BOAR=build-gpu/boar [CUMF=path/to/cumf_sgd] bench/gpu/cumf_compare.sh [RATINGS]
#
# Data: Netflix-shaped synthetic ratings (480189 users x 17770 items, hidden
# rank 16, noise 0.05, every rating +SHIFT (default 3) so they look like
# stars; SHIFT=0 keeps them centred, which suits a peer without biases), RATINGS
# (default 50M) for training and 1% more held out. boar trains 20 epochs at
# ranks 128 and 32 with fp32, f16 and bf16 factor storage (defaults
# otherwise) and prints the test RMSE and the cumulative sweep seconds after
# every epoch (--json). The peer, when given (CUMF, or cumf_sgd on PATH),
# runs its Netflix settings (-l 0.05 -a 0.08 -b 0.3 -s 4224 -t 20; its only
# kernel is rank 128) on the same ratings as binary records
# (bench/gpu/ratings_bin.c): once as it is, for its kernel time and update
# rate, and once with CUMF_EVAL=test file, which a locally patched peer
# reads to print "EVAL iter N cum_kernel_s S test_rmse R" after every
# iteration (the patch is never committed). The summary then gives, per
# boar run, the sweep seconds boar needs to reach the peer's 20-iteration
# test RMSE and the ratio to the peer's 20 iterations. Without a peer the
# boar runs alone are reported, and the script says so.
set -u
OUT=${OUT:-/tmp/cumf-out}
mkdir -p "$OUT"
N=${1:-50000000}
BOAR=${BOAR:-build-gpu/boar}
DATA=${DATA:-/tmp/mfdata}
RANKS=${RANKS:-128 32}
STORAGES=${STORAGES:-f32 f16 bf16}
SHIFT=${SHIFT:-3}
CUMF=${CUMF:-$(command -v cumf_sgd 2>/dev/null)}
SUM=$OUT/cumf-summary.txt
LOGS=${LOGS:-$OUT}
mkdir -p "$DATA" "$LOGS"
note() { echo "$*" | tee -a "$SUM"; }
note "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"
note "commit: $(cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null)"
[ -x "$BOAR" ] || { note "no boar at $BOAR"; exit 1; }

. "$(dirname "$0")/netflix_data.sh"
netflix_data $N $DATA $SHIFT || exit 1

# One boar run: 20 epochs; prints "boar TAG: ... curve" and keeps the JSON.
boar_run() { # tag options...
	local tag=$1; shift
	$BOAR train --device gpu --epochs 20 --early-stop 0 --cache --json \
		--test $DATA/te.txt "$@" $DATA/tr.txt >"$LOGS/boar_$tag.json" 2>"$LOGS/boar_$tag.err"
	python3 - "$LOGS/boar_$tag.json" "$tag" <<'PY' | tee -a "$SUM"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
if not rows:
    print(f"boar {sys.argv[2]}: no epochs"); sys.exit()
rates = sorted(r['updates_per_sec'] for r in rows[1:] or rows)
cum, s = [], 0.0
for r in rows:
    s += r['seconds']; cum.append(s)
print(f"boar {sys.argv[2]}: median {rates[len(rates)//2]/1e9:.3f} G ratings/s; "
      "epoch:cum_sweep_s:test_rmse " +
      ' '.join(f"{i+1}:{c:.4f}:{r['test_rmse']:.4f}" for i, (c, r) in enumerate(zip(cum, rows))))
PY
}
for k in $RANKS; do
	for s in $STORAGES; do
		boar_run r${k}_$s --rank $k --mf-storage $s
	done
done

if [ -z "$CUMF" ] || [ ! -x "$CUMF" ]; then
	note "no cuMF_SGD peer (set CUMF=path/to/cumf_sgd or put cumf_sgd on PATH): boar only"
	exit 0
fi
cc -O2 -o $DATA/ratings_bin bench/gpu/ratings_bin.c && $DATA/ratings_bin $DATA/tr.txt $DATA/tr.bin ||
	{ note "ratings_bin failed"; exit 1; }
P="-g 0 -l 0.05 -a 0.08 -b 0.3 -u 1 -v 1 -x 1 -y 1 -s 4224 -k 128 -t 20"
(cd $DATA && "$CUMF" $P tr.bin cumf.model >"$LOGS/cumf_plain.log" 2>&1)
note "cumf_sgd $P: $(grep -E 'WALL|update_per_sec' "$LOGS/cumf_plain.log" | paste -sd' ')"
(cd $DATA && CUMF_EVAL=$DATA/te.txt "$CUMF" $P tr.bin cumf.model >"$LOGS/cumf_eval.log" 2>&1)
grep -q '^EVAL iter' "$LOGS/cumf_eval.log" || { note "cumf_sgd prints no EVAL lines (not the patched build): no RMSE curve"; exit 0; }
note "cumf_sgd curve iter:cum_kernel_s:test_rmse $(awk '/^EVAL iter/ { printf "%s:%s:%s ", $3, $5, $7 }' "$LOGS/cumf_eval.log")"
python3 - "$LOGS" "$LOGS/cumf_plain.log" "$LOGS/cumf_eval.log" <<'PY' | tee -a "$SUM"
import glob, json, re, sys
logs, plain, ev = sys.argv[1:4]
wall = [float(m.group(1)) for m in re.finditer(r'WALL kernel_s ([0-9.]+)', open(plain).read())]
curve = [(int(a), float(b), float(c)) for a, b, c in
         re.findall(r'^EVAL iter (\d+) cum_kernel_s ([0-9.]+) test_rmse ([0-9.]+)', open(ev).read(), re.M)]
target = curve[-1][2]
t_peer = wall[0] if wall else curve[-1][1]
print(f"target: cuMF_SGD's test RMSE after {curve[-1][0]} iterations = {target:.4f}; "
      f"its 20 iterations take {t_peer:.4f} s of kernel (one launch)")
for f in sorted(glob.glob(logs + '/boar_*.json')):
    rows = [json.loads(l) for l in open(f) if l.startswith('{')]
    s, hit = 0.0, None
    for i, r in enumerate(rows):
        s += r['seconds']
        if r['test_rmse'] <= target:
            hit = (i + 1, s); break
    tag = f.split('boar_')[-1][:-5]
    if hit:
        print(f"{tag}: reaches {target:.4f} at epoch {hit[0]} after {hit[1]:.4f} s of sweeps: "
              f"{t_peer / hit[1]:.2f}x faster than cuMF_SGD")
    else:
        print(f"{tag}: does not reach {target:.4f} in {len(rows)} epochs")
PY
