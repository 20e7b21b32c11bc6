#!/bin/bash
# mc_device.sh - one call on the lent GPU host for K-class models: build,
# the multiclass tests first, the CPU-against-GPU benchmark (mc_bench.c,
# K = 10, 100 and 300), compute-sanitizer memcheck of test_gpu_multiclass
# quick, then every GPU test. Logs go to $OUT.
#
#   DEBS=dir [BENCH_K='10 100'] bench/gpu/mc_device.sh [build] [mc] [bench]
#       [sanitize] [tests]
set -u
export PATH=/usr/local/cuda/bin:$PATH
STEPS=${*:-build mc bench sanitize tests}
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
for f in ${DEBS:-none}/*.deb; do [ -f "$f" ] && dpkg -i "$f" >/dev/null 2>&1; done
T0=$(date +%s)
stamp() { echo "== $1 ($(($(date +%s) - T0)) s)"; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
export BUILD=build
if has build; then
	make -j16 CUDA_ARCHS=90 lib cli test-bin build/bench/gpu/mc_bench \
		>$OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
	stamp built
fi
if has mc; then
	# the unit tests directly, so that their numbers are kept
	for t in test_gpu_multiclass test_gpu_cpu_agree; do
		timeout 200 build/tests/$t >$OUT/$t.txt 2>&1
		echo "$t: exit $? ($(grep -c FAIL $OUT/$t.txt) FAIL lines)"
	done
	TEST_TIMEOUT=200 TESTS='cli/gpu_multiclass' tests/run-tests \
		>$OUT/mc-cli.txt 2>&1
	grep -E '^(PASS|FAIL|SKIP)|passed|FAIL' $OUT/mc-cli.txt | head -20
	stamp "multiclass tests"
fi
if has bench; then
	for K in ${BENCH_K:-10 100}; do
		E=$((K > 10 ? 3 : 5))
		timeout 120 build/bench/gpu/mc_bench 1000000 20 30 $K --epochs $E
		timeout 60 build/bench/gpu/mc_bench 1000000 20 30 $K --epochs $E \
			--device gpu --rows-per-block 2048
	done 2>&1 | tee $OUT/bench.txt
	timeout 90 build/bench/gpu/mc_bench 200000 20 30 300 --epochs 2 2>&1 |
		tee -a $OUT/bench.txt
	stamp bench
fi
if has sanitize; then
	timeout 150 compute-sanitizer --tool memcheck --leak-check full \
		build/tests/test_gpu_multiclass quick >$OUT/memcheck.txt 2>&1
	grep -E 'ERROR SUMMARY|LEAK SUMMARY|FAIL' $OUT/memcheck.txt | head
	stamp sanitizer
fi
if has tests; then
	TEST_TIMEOUT=200 TESTS='unit/test_gpu_* cli/gpu_* cli/net_gpu unit/test_engine_warm unit/test_rows_ready' \
		JOBS=4 tests/run-tests >$OUT/gpu-tests.txt 2>&1
	grep -E '^(PASS|FAIL|SKIP)|passed' $OUT/gpu-tests.txt
	stamp "GPU tests"
fi
