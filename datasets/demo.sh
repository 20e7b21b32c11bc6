#!/bin/sh
# demo.sh BOAR_BINARY - what `make demo` shows: logistic regression on the
# bundled a9a data (UCI Adult, CC BY 4.0), tested on a9a.t after every epoch
# with a live progress line, the model saved next to the binary (build/),
# then `boar eval` on the saved model: test accuracy, AUC and log loss.
set -eu

BOAR=${1:-build/boar}
cd "$(dirname "$0")/.."
[ -x "$BOAR" ] || { echo "demo: no boar binary at $BOAR (run make first)" >&2; exit 1; }
model=$(dirname "$BOAR")/a9a.model

echo "== boar train: logistic regression on datasets/a9a, 10 epochs, tested on a9a.t"
"$BOAR" train --loss logistic --epochs 10 --test datasets/a9a.t \
	-m "$model" datasets/a9a
echo
echo "== boar eval -m $model datasets/a9a.t"
"$BOAR" eval -m "$model" datasets/a9a.t
