#!/bin/sh
# roofline.sh - the engine's sweep rate over the bare loop's, side by side.
#
# For every shape (dimension 2^20 and 2^26, uniform and power-law ids) and
# thread count (1 .. cores), runs bench/tools/roofline.c's loop and the
# engine (bench/engine_rate.c) back to back, ROUNDS times, and prints the
# median ratio engine/roofline with its spread. Usage:
#   sh bench/roofline.sh [BUILD_DIR]    (ROWS, NNZ, ROUNDS, MODES env)
set -eu
B=${1:-build}
ROWS=${ROWS:-2000000}
NNZ=${NNZ:-40}
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-racy}
CORES=$(nproc)
rate() { sed -n 's/.*: \([0-9.]*\) M nnz-updates.*/\1/p'; }
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f (%.3f..%.3f)", m, a[1], a[NR]}'; }

printf '%-8s %-5s %-7s %-6s %12s %12s %s\n' dim skew threads mode roofline engine "ratio median (min..max)"
for bits in 20 26; do
	dim=$((1 << bits))
	for skew in 0 1; do
		t=1
		while [ "$t" -le "$CORES" ]; do
			for mode in $MODES; do
				rmode=$mode; [ "$mode" = atomic ] && rmode=cas
				ratios=""; rl=0; en=0
				for _ in $(seq "$ROUNDS"); do
					rl=$("$B/bench/roofline" "$ROWS" "$NNZ" "$dim" "$t" "$rmode" "$skew" | rate)
					en=$("$B/bench/engine_rate" "$ROWS" "$NNZ" "$dim" "$t" "$mode" "$skew" | rate)
					ratios="$ratios $(echo "$en $rl" | awk '{printf "%.4f", $1/$2}')"
				done
				printf '%-8s %-5s %-7s %-6s %12s %12s %s\n' "2^$bits" "$skew" "$t" "$mode" "$rl" "$en" \
					"$(echo $ratios | tr ' ' '\n' | median)"
			done
			t=$((t * 2)); [ "$t" -gt "$CORES" ] && [ "$t" -lt $((CORES * 2)) ] && t=$CORES
		done
	done
done
