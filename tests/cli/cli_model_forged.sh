#!/bin/sh
# Model files whose checksum is valid but whose contents lie (rewritten and
# re-checksummed by tests/cli/lib/forge_model.py) are refused by every
# command that loads a model, with one line naming the file and the field,
# exit 1 and no output: a NaN or infinite weight (eval once spun forever in
# the AUC), a duplicate class label, softmax on a binary model, an unknown
# loss code, a rank on a linear model, dims that disagree with the size.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to forge model files)"
FORGE="python3 tests/cli/lib/forge_model.py"

printf '+1 1:1 3:0.5\n-1 2:1\n+1 1:0.7 2:0.1\n-1 2:0.9 3:0.2\n' >"$T/bin.svm"
printf '1 1:1\n2 2:1\n3 3:1\n1 1:0.5 3:0.1\n' >"$T/mc.svm"
"$BOAR" train --quiet --epochs 2 -m "$T/bin.model" "$T/bin.svm" ||
	fail "training the binary model failed"
"$BOAR" train --quiet --epochs 2 -m "$T/mc.model" "$T/mc.svm" ||
	fail "training the multiclass model failed"

# refused NAME MODEL DATA FIELD-PATTERN: eval, predict and dump all refuse.
refused() {
	for cmd in eval predict; do
		expect_refused "$1 ($cmd)" timeout 30 "$BOAR" $cmd -m "$2" "$3"
		[ "$rc" = 1 ] || fail "$1 ($cmd): exit $rc, want 1"
		[ -s "$T/out" ] && fail "$1 ($cmd): wrote output before refusing"
		[ "$(wc -l <"$T/err")" = 1 ] || fail "$1 ($cmd): not one line"
		expect_message "$1 ($cmd)" "$2: corrupt model file: .*$4"
	done
	expect_refused "$1 (dump)" timeout 30 "$BOAR" dump -m "$2"
}

$FORGE "$T/bin.model" "$T/nan.model" 'w[1]=nan'
refused "NaN weight" "$T/nan.model" "$T/bin.svm" "field weights\[1\]"
$FORGE "$T/bin.model" "$T/inf.model" 'w[3]=-inf'
refused "infinite bias" "$T/inf.model" "$T/bin.svm" "field weights\[3\]"
$FORGE "$T/bin.model" "$T/smax.model" loss=3
refused "softmax on binary" "$T/smax.model" "$T/bin.svm" "field loss"
$FORGE "$T/bin.model" "$T/loss.model" loss=77
refused "unknown loss" "$T/loss.model" "$T/bin.svm" "field loss"
$FORGE "$T/bin.model" "$T/task.model" task=9
refused "unknown task" "$T/task.model" "$T/bin.svm" "field task"
$FORGE "$T/bin.model" "$T/rank.model" rank=8
refused "rank on linear" "$T/rank.model" "$T/bin.svm" "field rank"
$FORGE "$T/bin.model" "$T/dim.model" dim=1000
refused "dim vs size" "$T/dim.model" "$T/bin.svm" "size .* bytes"
$FORGE "$T/mc.model" "$T/dup.model" 'class[2]=2'
refused "duplicate class" "$T/dup.model" "$T/mc.svm" "field classes\[2\]"
$FORGE "$T/mc.model" "$T/nanc.model" 'class[0]=nan'
refused "NaN class" "$T/nanc.model" "$T/mc.svm" "field classes\[0\]"
$FORGE "$T/mc.model" "$T/k1.model" n_classes=1
refused "one class" "$T/k1.model" "$T/mc.svm" "field n_classes"

# A model too large for the machine (2 TiB of factors, a sparse file of
# the size its header implies) is refused with its size, before anything
# is allocated or read (it used to be left to the allocator: an OOM kill
# where overcommit let the allocation through).
printf '1 2 3\n2 1 4\n3 3 5\n' >"$T/r.txt"
"$BOAR" train --quiet --task mf --rank 4 --epochs 1 -m "$T/mf.model" "$T/r.txt" ||
	fail "training the MF model failed"
cp "$T/mf.model" "$T/huge.model"
# rank 64 at byte 28; users and items 2^32 at bytes 40 and 48 (model_io.c)
printf '\100\000\000\000' | dd of="$T/huge.model" bs=1 seek=28 conv=notrunc 2>/dev/null
printf '\000\000\000\000\001\000\000\000\000\000\000\000\001\000\000\000' |
	dd of="$T/huge.model" bs=1 seek=40 conv=notrunc 2>/dev/null
if truncate -s $((64 + (8589934592 * 64 + 8589934592) * 4 + 8)) "$T/huge.model" 2>/dev/null; then
	expect_refused "2 TiB model" timeout 30 "$BOAR" predict -m "$T/huge.model" "$T/r.txt"
	[ "$rc" = 1 ] || fail "2 TiB model: exit $rc, want 1"
	expect_message "2 TiB model" "huge.model: the model needs 2.0 TiB, over the memory limit"
	rm -f "$T/huge.model"
fi

# A warm start from a forged model is refused too, and writes nothing.
expect_refused "warm start" "$BOAR" train --quiet --init-model "$T/nan.model" \
	-m "$T/new.model" "$T/bin.svm"
[ -e "$T/new.model" ] && fail "warm start from a NaN model wrote a model"

# The untouched models still load.
"$BOAR" eval -m "$T/bin.model" "$T/bin.svm" >/dev/null ||
	fail "the genuine binary model was refused"
"$BOAR" eval -m "$T/mc.model" "$T/mc.svm" >/dev/null ||
	fail "the genuine multiclass model was refused"
exit 0
