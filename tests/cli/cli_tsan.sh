#!/bin/sh
# A loaded model shared by many threads, under ThreadSanitizer: builds
# libboar with -fsanitize=thread (in $BUILD-tsan) and tests/tsan/
# predict_shared.c against it, trains a binary, a one-vs-rest and a softmax
# model with the ordinary CLI, and has 4 threads predict the same rows of
# each at once (boar_model_predict_row and boar_model_predict_scores).
# Fails on any ThreadSanitizer report or any answer unlike the
# single-threaded one; skips when this compiler has no working TSAN.
. tests/cli/lib/common.sh

CC=${CC:-cc}
TB=$BUILD-tsan

# Does TSAN work here at all (compiler, runtime, address-space layout)?
cat >"$T/probe.c" <<'EOF'
#include <pthread.h>
static void *run(void *p) { return p; }
int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); return pthread_join(t, 0); }
EOF
"$CC" -fsanitize=thread -pthread -o "$T/probe" "$T/probe.c" >"$T/probe.log" 2>&1 ||
	{ cat "$T/probe.log"; skip "no ThreadSanitizer in $CC (libtsan missing?)"; }
"$T/probe" >"$T/probe.log" 2>&1 ||
	{ cat "$T/probe.log"; skip "ThreadSanitizer programs do not run here (see above)"; }

make -s BUILD="$TB" CUDA=0 OPT=-O1 EXTRA_CFLAGS=-fsanitize=thread \
	LDFLAGS=-fsanitize=thread "$TB/libboar.a" >"$T/make.log" 2>&1 ||
	{ tail -n 30 "$T/make.log"; fail "building libboar with -fsanitize=thread failed"; }
"$CC" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=thread -pthread -Isrc/include \
	-o "$T/predict_shared" tests/tsan/predict_shared.c "$TB/libboar.a" \
	-fopenmp -luring -lz -lsodium -lcrypto -lm >"$T/cc.log" 2>&1 ||
	{ cat "$T/cc.log"; fail "building tests/tsan/predict_shared.c failed"; }

# The models, from the ordinary build.
A=datasets/a9a
"$BOAR" train --quiet --epochs 2 -m "$T/bin.model" "$A" || fail "train a9a exited $?"
awk 'BEGIN { srand(12); for (i = 0; i < 2000; i++) { c = 1 + int(rand() * 4)
	print c, c ":1", 5 + int(rand() * 30) ":" rand() } }' >"$T/c4"
"$BOAR" train --quiet --epochs 2 --loss hinge -m "$T/ovr.model" "$T/c4" ||
	fail "train one-vs-rest exited $?"
"$BOAR" train --quiet --epochs 2 --loss softmax -m "$T/smx.model" "$T/c4" ||
	fail "train softmax exited $?"

# halt_on_error: the first report ends the run with TSAN's exit code.
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" \
	"$T/predict_shared" "$T/bin.model" "$A" "$T/ovr.model" "$T/c4" \
	"$T/smx.model" "$T/c4" >"$T/out" 2>&1
rc=$?
cat "$T/out"
if grep -q 'ThreadSanitizer' "$T/out"; then
	fail "ThreadSanitizer reported a problem (exit $rc)"
fi
[ "$rc" = 0 ] || fail "predict_shared exited $rc"
[ "$(grep -c 'all equal' "$T/out")" = 3 ] || fail "expected 3 'all equal' lines"
exit 0
