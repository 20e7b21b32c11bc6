#!/bin/bash
# e2e_device.sh - one call on the lent GPU host: build a base tree and this
# tree (lib, CLI, the GPU tests named in TESTS), compare their whole
# `boar train --device gpu` runs (e2e_compare.sh), then run the GPU tests
# and compute-sanitizer on this tree. Logs go to $OUT.
#
#   BASE_DIR=../gpu3-base DEBS=debs bench/gpu/e2e_device.sh [ROUNDS]
set -u
export PATH=/usr/local/cuda/bin:$PATH
ROUNDS=${1:-5}
for f in ${DEBS:-none}/*.deb; do [ -f "$f" ] && dpkg -i "$f" >/dev/null 2>&1; done
T0=$(date +%s)
TESTS=${TESTS:-unit/test_gpu_preload unit/test_rows_ready unit/test_engine_warm unit/test_gpu_cpu_agree unit/test_gpu_linear unit/test_gpu_errors unit/test_gpu_partial unit/test_gpu_perm unit/test_gpu_mf unit/test_gpu_mf_loss cli/gpu_train}
BINS=$(for t in $TESTS; do case $t in unit/*) echo build/tests/${t#unit/};; esac; done)
(cd "$BASE_DIR" && make -j8 CUDA_ARCHS=90 lib cli >$OUT/build-base.log 2>&1) &
make -j10 CUDA_ARCHS=90 lib cli $BINS >$OUT/build-new.log 2>&1 ||
	{ tail -30 $OUT/build-new.log; exit 1; }
wait
[ -x "$BASE_DIR/build/boar" ] || { tail -30 $OUT/build-base.log; exit 1; }
echo "built in $(($(date +%s) - T0)) s"
OUT=$OUT/runs bash bench/gpu/e2e_compare.sh "$BASE_DIR/build/boar" \
	build/boar $ROUNDS 2>&1 | tee $OUT/e2e.txt
tar -czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
echo "== GPU tests ($(($(date +%s) - T0)) s)"
export BUILD=build
TEST_TIMEOUT=150 TESTS="$TESTS" JOBS=3 tests/run-tests 2>&1 |
	grep -E '^(PASS|FAIL|SKIP)|passed|^ +\|' | tee $OUT/tests.txt
echo "== compute-sanitizer ($(($(date +%s) - T0)) s)"
timeout 120 compute-sanitizer --tool memcheck --leak-check full \
	build/tests/test_gpu_preload >$OUT/memcheck.txt 2>&1
grep -E 'ERROR SUMMARY|LEAK SUMMARY|FAIL' $OUT/memcheck.txt | head
echo "done in $(($(date +%s) - T0)) s"
