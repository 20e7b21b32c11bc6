#!/bin/bash
# mf_run.sh - issue 11's MF measurements that need the device, in one call:
#
#   bench/gpu/mf_run.sh [RATINGS]   (default 100M; logs and JSON in $OUT)
#
# 1. builds the tree (CUDA_ARCHS=90) and runs the GPU MF unit test;
# 2. Netflix-shaped synthetic ratings (480189 users x 17770 items, hidden
#    rank 16, noise 0.05; RATINGS for training and 1% more held out), and
#    `boar train --device gpu` at ranks 32 and 128 with fp32, f16 and bf16
#    factor storage: 20 epochs, ratings/s and test RMSE after every epoch
#    (--json), defaults otherwise; plus fp32 with plain stores and the old
#    defaults (step 0.02 x 0.9^epoch, L2 0.1) at rank 128;
# 3. the CPU defaults at 16 threads on the synthetic shapes of
#    bench/RESULTS.md's "MF defaults" table and MovieLens (when carried in
#    .gpu-carry/datasets), against the old defaults, and the epoch time of
#    the 9M-rating set at 1, 2, 4, 8 and 16 threads (the grid strata).
# A peer run (PEER=path/to/script) goes after step 2 with the same files
# ($DATA/tr.txt, $DATA/te.txt) when given. PARTS (default "test gpu cpu")
# picks the steps (plain: also plain-store kernels; olddefaults: the old
# step schedule at rank 128; THREADS: the thread counts of "scale"; "scale" alone runs only the thread scaling of step 3);
# SHIFT=X adds X to every synthetic rating (stars-like ratings for a peer
# without a global mean); BASE=DIR, another checkout (the code before a
# change), is built for the CPU and timed beside this one in "scale".
set -u
OUT=${OUT:-/tmp/mf-out}
mkdir -p "$OUT"
N=${1:-100000000}
PARTS=${PARTS:-test gpu plain olddefaults cpu scale}
THREADS=${THREADS:-1 2 4 8 16}
has() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
B=build-gpu
DATA=${DATA:-/tmp/mfdata}
mkdir -p "$DATA"
export PATH=/usr/local/cuda/bin:$PATH
SUM=$OUT/summary.txt
# Per-run logs go to $LOGS and come back as one archive (few files return).
export LOGS=/tmp/mf-logs
mkdir -p $LOGS
trap 'tar -czf "$OUT/logs.tgz" -C /tmp mf-logs 2>/dev/null' EXIT
: >"$SUM"
note() { echo "$*" | tee -a "$SUM"; }
note "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"
note "commit: $(cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null)"

MK=
if [ -d .gpu-carry/debs ]; then
	SR=/tmp/sysroot
	mkdir -p $SR
	for f in .gpu-carry/debs/*.deb; do dpkg -x "$f" $SR; done
	L=$SR/usr/lib/x86_64-linux-gnu:$SR/lib/x86_64-linux-gnu
	MK="EXTRA_CFLAGS=-I$SR/usr/include"
	export LIBRARY_PATH=$L LD_LIBRARY_PATH=$L
fi
if [ -n "${BASE:-}" ] && has scale; then
	(make -C "$BASE" BUILD=build-cpu CUDA=0 -j8 $MK cli >$LOGS/base-make.log 2>&1 &)
fi
t0=$(date +%s)
make BUILD=$B CUDA_ARCHS=90 -j16 $MK lib cli $B/tests/test_gpu_mf \
	>"$LOGS/make.log" 2>&1 || { note "build failed"; tail -40 "$LOGS/make.log"; exit 1; }
note "build: $(( $(date +%s) - t0 )) s"
BOAR=$B/boar
if has test; then
	timeout 300 $B/tests/test_gpu_mf >"$LOGS/test_gpu_mf.log" 2>&1
	note "test_gpu_mf: rc=$?"
	cat "$LOGS/test_gpu_mf.log" | tee -a "$SUM"
fi

# -- 2. GPU: storage x rank --
if has gpu; then
t0=$(date +%s)
$BOAR gen --task mf --rows $((N + N / 100)) --users 480189 --items 17770 \
	--rank 16 --noise 0.05 -q -o $DATA/all.txt || { note "gen failed"; exit 1; }
if [ -n "${SHIFT:-}" ]; then
	awk -v s=$SHIFT '{ print $1, $2, $3 + s }' $DATA/all.txt >$DATA/all2.txt
	mv $DATA/all2.txt $DATA/all.txt
fi
head -n $N $DATA/all.txt >$DATA/tr.txt
tail -n $((N / 100)) $DATA/all.txt >$DATA/te.txt
rm -f $DATA/all.txt
note "data: $N + $((N / 100)) ratings, $(( $(date +%s) - t0 )) s"
gpu_run() { # tag options...
	local tag=$1; shift
	local t1=$(date +%s.%N)
	$BOAR train --device gpu --epochs 20 --early-stop 0 --cache --json \
		--test $DATA/te.txt "$@" $DATA/tr.txt >"$LOGS/gpu_$tag.json" 2>"$LOGS/gpu_$tag.err"
	local rc=$?
	python3 - "$LOGS/gpu_$tag.json" "$tag" "$rc" "$t1" <<'PY' | tee -a "$SUM"
import json, sys, time
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
if not rows:
    print(f"gpu {sys.argv[2]}: rc={sys.argv[3]} no epochs"); sys.exit()
rate = sorted(r['updates_per_sec'] for r in rows[1:] or rows)[len(rows[1:] or rows) // 2]
sw = 0; cum = []
for r in rows:
    sw += r['seconds']; cum.append(sw)
print(f"gpu {sys.argv[2]}: rc={sys.argv[3]} median {rate/1e9:.3f} G ratings/s, "
      f"20 epochs {sw:.3f} s of sweeps, run {time.time()-float(sys.argv[4]):.1f} s; "
      f"test RMSE by epoch: " + ' '.join('%.4f' % r['test_rmse'] for r in rows))
PY
}
for k in 32 128; do
	for s in f32 f16 bf16; do
		gpu_run r${k}_$s --rank $k --mf-storage $s
	done
	has plain || continue
	for s in f32 f16; do
		BOAR_GPU_RACY=1 gpu_run r${k}_${s}_plain --rank $k --mf-storage $s
	done
done
has olddefaults &&
	gpu_run r128_f32_olddefaults --rank 128 --eta 0.02 --eta-decay 0.9 --l2 0.1
[ -n "${PEER:-}" ] && DATA=$DATA bash "$PEER" 2>&1 | tee -a "$SUM"
rm -f $DATA/tr.txt*
fi

# Epoch time of the 9M-rating set by thread count (the grid strata), this
# build and BASE's, alternating on the same file.
scaling() {
	local bins="$BOAR" th b
	[ -n "${BASE:-}" ] && { while pgrep -f "make -C $BASE" >/dev/null; do sleep 1; done
		[ -x "$BASE/build-cpu/boar" ] && bins="$bins $BASE/build-cpu/boar"; }
	for th in $THREADS; do
		for b in $bins; do
			$b train --rank 16 --epochs 5 --threads $th --early-stop 0 --json \
				--eta 0.02 $DATA/syn9m.tr 2>/dev/null | python3 -c "
import json, sys
r = [json.loads(l) for l in sys.stdin if l.startswith('{')]
s = sorted(x['seconds'] for x in r[1:])
print('cpu scaling syn9m threads $th ($b): median epoch %.4f s, %.1f M ratings/s' % (s[len(s)//2], 9e6/s[len(s)//2]/1e6))" | tee -a "$SUM"
		done
	done
}

# -- 3. CPU defaults at 16 threads --
gen() { $BOAR gen --task mf -q --rank 16 --noise 0.05 "$@"; }
if has scale && ! has cpu; then
	gen --rows 10000000 --users 20000 --items 10000 -o $DATA/syn9m.txt
	awk -v f=$DATA/syn9m 'NR % 10 == 0 { print > (f ".te"); next } { print > (f ".tr") }' $DATA/syn9m.txt
fi
has cpu || { has scale && scaling; note "done"; exit 0; }
gen --rows 2200000 --users 20000 --items 10000 -o $DATA/sq.txt
gen --rows 2200000 --users 60000 --items 3000 -o $DATA/tall.txt
gen --rows 2200000 --users 100000 --items 40000 -o $DATA/sparse.txt
gen --rows 2200000 --users 50000 --items 20000 --skew 1 -o $DATA/skew.txt
gen --rows 10000000 --users 20000 --items 10000 -o $DATA/syn9m.txt
sets="sq tall sparse skew syn9m"
R=.gpu-carry/datasets/movielens-small/ratings.csv
if [ -f $R ]; then
	tail -n +2 $R | cut -d, -f1-3 >$DATA/ml.txt
	sets="$sets ml"
fi
for f in $sets; do
	awk -v f=$DATA/$f 'NR % 10 == 0 { print > (f ".te"); next } { print > (f ".tr") }' $DATA/$f.txt
done
cpu_eval() { # set threads options... -> test RMSE of the saved model, seconds
	local f=$1 th=$2; shift 2
	local t1=$(date +%s.%N)
	$BOAR train --rank 16 --epochs 20 --threads $th -q -m $DATA/m "$@" $DATA/$f.tr
	local t2=$(date +%s.%N)
	$BOAR eval --json -m $DATA/m $DATA/$f.te | python3 -c "import json,sys; print('%.4f' % json.loads(sys.stdin.read().splitlines()[-1])['test_rmse'])"
	echo "$t1 $t2" | awk '{ printf "%.2f s\n", $2 - $1 }'
}
for f in $sets; do
	new=$(cpu_eval $f 16 | paste -sd' ')
	old=$(cpu_eval $f 16 --eta 0.02 --eta-decay 0.9 --l2 0.1 --early-stop 0 | paste -sd' ')
	note "cpu16 $f: defaults (holdout early stop) RMSE/time $new | old defaults $old"
done
scaling
note "done"
