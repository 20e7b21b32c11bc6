#!/bin/bash
# multi_device.sh - the --gpus N work that needs a host with two GPUs, in
# one call: build, the GPU unit tests (the new test_gpu_multi and
# test_gpu_grid among them) and tests/cli/gpu_multi.sh, compute-sanitizer
# memcheck of test_gpu_multi, then bench/gpu/multi_run.sh (1 vs 2 GPUs at
# ranks 128 and 32). Logs to $OUT (or /tmp/multi-out).
#
#   bench/gpu/multi_device.sh [build] [tests] [sanitize] [bench]
#
# (no argument: all four). DEBS=dir: Debian packages of the core's
# libraries to install first (a bare device image lacks them).
set -u
OUT=${OUT:-/tmp/multi-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
WHAT=${*:-build tests sanitize bench}
has() { case " $WHAT " in *" $1 "*) return 0;; esac; return 1; }
log() { echo "== $*" | tee -a "$OUT/steps.log"; }
[ -n "${DEBS:-}" ] && dpkg -i "$DEBS"/*.deb >/dev/null 2>&1
nvidia-smi -L | tee -a "$OUT/steps.log"
# Binaries built elsewhere (same CUDA) are used when they run here.
if ! has build && ! ./build/tests/test_gpu_grid >/dev/null 2>&1; then
	log "carried binaries do not run here: building"
	WHAT="build $WHAT"
fi
if has build; then
	t0=$(date +%s)
	make -j32 CUDA_ARCHS=90 lib cli test-bin >"$OUT/build.log" 2>&1 ||
		{ log "build FAILED"; tail -n 30 "$OUT/build.log"; exit 1; }
	log "build: $(( $(date +%s) - t0 )) s"
fi
if has tests; then
	t0=$(date +%s)
	./build/tests/test_gpu_multi >"$OUT/test_gpu_multi.log" 2>&1
	log "test_gpu_multi: exit $? ($(( $(date +%s) - t0 )) s)"
	cat "$OUT/test_gpu_multi.log"
	TEST_TIMEOUT=150 TESTS=${TESTS:-'test_gpu_grid test_gpu_mf test_gpu_linear test_gpu_partial test_gpu_errors test_gpu_perm cli/gpu_*'} \
		JOBS=1 tests/run-tests >"$OUT/tests.log" 2>&1
	log "tests: $(tail -n 1 "$OUT/tests.log") ($(( $(date +%s) - t0 )) s)"
	grep -E '^(PASS|FAIL|SKIP)' "$OUT/tests.log" | tee -a "$OUT/steps.log"
fi
if has bench; then
	OUT=$OUT BOAR=build/boar bench/gpu/multi_run.sh ${RATINGS:-25000000} >"$OUT/bench.log" 2>&1
	log "bench: exit $?"
fi
if has sanitize; then
	t0=$(date +%s)
	timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool memcheck --leak-check full \
		./build/tests/test_gpu_multi quick >"$OUT/sanitize.log" 2>&1
	log "memcheck test_gpu_multi quick: exit $? ($(( $(date +%s) - t0 )) s): $(grep -E 'ERROR SUMMARY' "$OUT/sanitize.log" | tail -n 1)"
	grep -m 12 -A 3 '^========= [A-Z]' "$OUT/sanitize.log" | head -n 40
fi
# At most 8 files come back from the device tool: one archive of the logs.
tar -C "$OUT" -czf /tmp/multi-logs.tar.gz . && mv /tmp/multi-logs.tar.gz "$OUT/logs.tar.gz"
cp "$OUT/steps.log" "$OUT/steps.txt" 2>/dev/null
