#!/bin/bash
# e2e_compare.sh - issue 11's whole-run measure for two builds side by side:
# `boar train --device gpu --epochs 5` on a 4M-row x 40-non-zero LIBSVM
# file (2^20 features), each run's wall time over the time to read the
# file from the page cache, rounds alternating between the builds, every
# stderr line stamped with the seconds since the run started.
#
#   OUT=dir bench/gpu/e2e_compare.sh BASE_BOAR NEW_BOAR [ROUNDS]
#
# The file is 500k generated rows written 8 times over (the parser and the
# engine see 4M rows either way). Page-cache read: `cat FILE > /dev/null`
# after two warm-up reads, timed in every round just before the runs, and
# the ratio is each run's wall over that round's read. Where the time goes:
# the load line (parse), the first epoch's line (engine open + what is
# left of the upload + epoch 1), "trained" (all epochs) and EXIT (process
# gone), all stamped.
set -u
BASE=$1
NEW=$2
ROUNDS=${3:-5}
OUT=${OUT:-/tmp/e2e-compare}
D=${DATA:-/tmp/e2edata}
mkdir -p "$OUT" "$D"
F=$D/e2e.svm
if [ ! -s $F ]; then
	$NEW gen --task linear --rows 500000 --nnz 40 -q -o $D/part.svm || exit 1
	for k in 1 2 3 4 5 6 7 8; do cat $D/part.svm; done >$F
	rm -f $D/part.svm
fi
echo "file: $(stat -c %s $F) bytes; $(nproc) cores; $(nvidia-smi -L | head -1)"
now() { date +%s.%N; }
since() { echo "$(now) $1" | awk '{ printf "%.3f", $1 - $2 }'; }
# stamp LOG CMD...: runs CMD, stderr lines stamped into LOG; prints wall
stamp() {
	local log=$1
	shift
	local t0=$(now)
	"$@" 2>&1 >/dev/null | while IFS= read -r l; do
		echo "$(since $t0) $l"
	done >"$log"
	echo "$(since $t0) EXIT" >>"$log"
	tail -n 1 "$log" | cut -d' ' -f1
}
cat $F >/dev/null
cat $F >/dev/null
for r in $(seq 1 $ROUNDS); do
	t0=$(now)
	cat $F >/dev/null
	read_s=$(since $t0)
	for which in base new; do
		B=$BASE
		[ $which = new ] && B=$NEW
		log=$OUT/$which-$r.log
		w=$(stamp $log $B train --device gpu --epochs 5 $F)
		load=$(grep -m1 ' train ' $log | cut -d' ' -f1)
		ep1=$(grep -m1 'epoch *1' $log | cut -d' ' -f1)
		trained=$(grep -m1 'trained' $log | cut -d' ' -f1)
		echo "round $r $which: read $read_s s wall $w s ratio $(awk -v w=$w -v r=$read_s 'BEGIN { printf "%.2f", w / r }')x load $load epoch1 $ep1 trained $trained exit $w"
	done
done
