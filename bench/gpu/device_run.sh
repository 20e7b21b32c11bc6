#!/bin/bash
# device_run.sh - everything the GPU engine needs a lent GPU for, in one call.
#
#   bench/gpu/device_run.sh [tests] [sanitize] [bench] [quick] [accuracy]
#                           [cluster]
#
# (no argument: the first three). `tests` includes the cluster test with GPU
# workers (tests/cli/net_gpu.sh); `cluster` adds compute-sanitizer memcheck
# of the epoch-slice and weights-by-key test (test_gpu_partial). Builds the engine alone (bench/gpu/build.sh) and,
# best effort, the whole tree with the Makefile; runs the GPU unit tests;
# compute-sanitizer memcheck and racecheck on small inputs; and the
# benchmarks: the roofline tool's kernels and the engine on the same shape
# (20M rows x 40 nnz, dims 2^20, 2^24, 2^28), update policies, AdaGrad/L2,
# skewed ids, resident vs streamed data, and MF on Netflix-shaped ratings at
# rank 32 and 128. Logs go to $OUT (or /tmp/gpu-out); a summary table last.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build-gpu
A=$B/alone
WHAT=${*:-tests sanitize bench}
has() { case " $WHAT " in *" $1 "*) return 0;; esac; return 1; }
SUM=$OUT/summary.txt
: > "$SUM"
note() { echo "$*" | tee -a "$SUM"; }

note "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader)"

t0=$(date +%s)
CUDA_ARCHS=90 B=$B sh bench/gpu/build.sh > "$OUT/build.log" 2>&1 || { note "build FAILED"; tail -30 "$OUT/build.log"; exit 1; }
# The device image lacks the core's -dev packages and cannot fetch them:
# Debian's .deb files carried in .gpu-carry/debs are unpacked into a
# private root (never into /) and named to the compiler and linker.
MK=
if [ -d .gpu-carry/debs ]; then
	SR=/tmp/sysroot
	mkdir -p $SR
	for f in .gpu-carry/debs/*.deb; do dpkg -x "$f" $SR; done
	L=$SR/usr/lib/x86_64-linux-gnu:$SR/lib/x86_64-linux-gnu
	MK="EXTRA_CFLAGS=-I$SR/usr/include"
	export LIBRARY_PATH=$L LD_LIBRARY_PATH=$L
fi
(make BUILD=$B CUDA_ARCHS=90 -j16 $MK lib cli > "$OUT/make.log" 2>&1 && note "make lib cli: ok") || note "make lib cli: failed (see make.log; others' files)"
note "build: $(( $(date +%s) - t0 )) s"

if has tests; then
	for t in $A/test_gpu_*; do
		n=$(basename $t)
		echo "== $n" >> "$OUT/tests.log"
		t1=$(date +%s)
		timeout 300 $t >> "$OUT/tests.log" 2>&1
		note "test $n: rc=$? ($(( $(date +%s) - t1 )) s)"
	done
	# The CLI tests need the whole tree; the shared MovieLens file travels
	# in .gpu-carry when the caller carried it.
	if [ -x $B/boar ]; then
		[ -d .gpu-carry ] && export BOAR_SHARED=.gpu-carry
		for t in tests/cli/gpu_*.sh tests/cli/net_gpu.sh; do
			echo "== $t" >> "$OUT/tests.log"
			t1=$(date +%s)
			BOAR=$B/boar BUILD=$B timeout 300 sh $t >> "$OUT/tests.log" 2>&1
			note "test $t: rc=$? ($(( $(date +%s) - t1 )) s)"
		done
	else
		note "CLI tests not run: the tree does not build (make.log)"
	fi
	cat "$OUT/tests.log"
fi

if has sanitize; then
	S="compute-sanitizer --error-exitcode 9"
	run_s() {
		local tag=$1; shift
		echo "== $tag: $*" >> "$OUT/sanitize.log"
		timeout 240 $S "$@" > /tmp/san.log 2>&1
		local rc=$?
		cat /tmp/san.log >> "$OUT/sanitize.log"
		note "sanitizer $tag: rc=$rc $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1)"
	}
	run_s memcheck_errors --tool memcheck --leak-check full $A/test_gpu_errors
	run_s memcheck_linear --tool memcheck $A/gpu_bench linear 20000 16 12 --epochs 2
	run_s memcheck_linear_ada --tool memcheck $A/gpu_bench linear 20000 16 12 --epochs 2 --opt adagrad --l2 1e-4 --l1 1e-5 --update racy
	run_s memcheck_linear_stream --tool memcheck $A/gpu_bench linear 20000 16 12 --epochs 2 --chunk 65536 --streams 3
	run_s memcheck_mf --tool memcheck $A/gpu_bench mf 50000 2000 1000 100 --epochs 2 --opt adagrad --update racy
	run_s memcheck_mf_stream --tool memcheck $A/gpu_bench mf 50000 2000 1000 128 --epochs 2 --chunk 100000 --streams 2
	run_s racecheck_linear --tool racecheck $A/gpu_bench linear 20000 16 12 --epochs 1
	run_s racecheck_mf --tool racecheck $A/gpu_bench mf 50000 2000 1000 64 --epochs 1
	run_s synccheck_linear --tool synccheck $A/gpu_bench linear 20000 16 12 --epochs 1
fi

if has cluster; then
	echo "== memcheck test_gpu_partial" >> "$OUT/sanitize.log"
	timeout 150 compute-sanitizer --error-exitcode 9 --tool memcheck \
		$A/test_gpu_partial > /tmp/san.log 2>&1
	rc=$?
	cat /tmp/san.log >> "$OUT/sanitize.log"
	note "sanitizer memcheck_partial: rc=$rc $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1)"
fi

if has bench || has quick; then
	nvcc -O3 -arch=sm_90 bench/tools/gpu_roofline.cu -o $A/gpu_roofline
	if has quick; then ROWS=2000000; NR=10000000; else ROWS=20000000; NR=100000000; fi
	timeout 200 $A/gpu_roofline $ROWS 40 > "$OUT/roofline.log" 2>&1
	note "$(cat "$OUT/roofline.log")"
	L="$A/gpu_bench linear $ROWS 40"
	bl() { timeout 200 "$@" 2>> "$OUT/bench_epochs.log" | tee -a "$OUT/bench.log" >> "$SUM"; }
	for d in 20 24 28; do bl $L $d; done
	for d in 20 24 28; do bl $L $d --update racy; done
	bl $L 24 --opt adagrad
	bl $L 24 --opt adagrad --l2 1e-6
	bl $L 24 --l2 1e-6 --l1 1e-8
	bl $L 20 --skew 1
	bl $L 20 --skew 3
	for s in 1 2 4; do bl $L 24 --chunk 268435456 --streams $s; done
	M="$A/gpu_bench mf $NR 480189 17770"
	bl $M 32 --update racy
	bl $M 128 --update racy
	bl $M 32 --update atomic
	bl $M 128 --update atomic
	bl $M 128 --update racy --opt adagrad --eta 0.05
	bl $M 256 --update racy
	bl $M 128 --update racy --chunk 268435456 --streams 4
fi
if has accuracy; then
	BOAR=$B/boar sh bench/gpu/accuracy_run.sh > "$OUT/accuracy.log" 2>&1
	note "accuracy run: rc=$?"
	cat "$OUT/accuracy.log" >> "$SUM"
fi
echo "==== summary"
cat "$SUM"
