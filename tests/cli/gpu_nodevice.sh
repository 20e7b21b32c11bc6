#!/bin/sh
# --device gpu on a machine without a usable GPU (or a build without CUDA)
# is refused cleanly: non-zero exit below 128, a "boar: ..." message that
# says there is no GPU support in this build or no usable device, and no
# model file left behind. Skipped where a GPU is present (gpu_train.sh
# covers that case).
. tests/cli/lib/common.sh

"$BOAR" train --device gpu --epochs 1 -m "$T/m" datasets/a9a >"$T/out" 2>"$T/err"
if [ $? = 0 ]; then
	skip "a usable GPU is present; gpu_train.sh tests training on it"
fi
expect_refused "train --device gpu without a GPU" \
	"$BOAR" train --device gpu --epochs 1 -m "$T/m" datasets/a9a
expect_message "no-GPU message" "no GPU support|no usable GPU|GPU"
[ -e "$T/m" ] && fail "a model file was left behind after the refusal"
expect_refused "gpu id out of range" \
	"$BOAR" train --device gpu --gpu 7 --epochs 1 -m "$T/m" datasets/a9a
[ -e "$T/m" ] && fail "a model file was left behind after the refusal"
echo "ok: $(grep "^boar:" "$T/err" | tail -n 1)"
exit 0
