#!/bin/sh
# roofline.sh - the engine's sweep rate over the bare loop's, side by side.
#
# For every shape (dimension 2^20 and 2^26, uniform and power-law ids) and
# thread count (1, 2, 4, ... up to the cores), runs bench/tools/roofline.c's
# bare loop and the engine (bench/engine_rate.c: every thread count and
# optimizer on one generated dataset), ROUNDS times, and, given a second
# build directory (e.g. main's), that build's engine in the same rounds.
# Prints each run's line as it comes, then per shape, threads and optimizer
# the median (min..max over the rounds) of: the bare loop's rate, each
# build's rate (M nnz-updates/s), the engine over the bare loop (round by
# round), and the optimizer over plain SGD (round by round, same build).
# Usage:
#   sh bench/roofline.sh [BUILD_DIR [BASE_BUILD_DIR]]
#   env: ROWS NNZ ROUNDS MODES OPTS (sgd,normalized,...) THREADS (1,2,4)
#        SHAPES ("20:0 26:1": log2 dim, skew) EPOCHS
set -eu
B=${1:-build}
BASE=${2:-}
ROWS=${ROWS:-1000000}
NNZ=${NNZ:-40}
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-racy}
OPTS=${OPTS:-sgd}
EPOCHS=${EPOCHS:-3}
SHAPES=${SHAPES:-20:0 20:1 26:0 26:1}
CORES=$(nproc)
if [ -z "${THREADS:-}" ]; then
	THREADS=1; t=2
	while [ "$t" -lt "$CORES" ]; do THREADS="$THREADS,$t"; t=$((t * 2)); done
	[ "$CORES" -gt 1 ] && THREADS="$THREADS,$CORES"
fi
RAW=$(mktemp); trap 'rm -f "$RAW"' EXIT

# raw lines: WHO ROUND DIMBITS SKEW MODE THREADS OPT RATE
engine() { # WHO BUILD round bits skew mode
	"$2/bench/engine_rate" "$ROWS" "$NNZ" $((1 << $4)) "$THREADS" "$6" "$5" \
		"$EPOCHS" "$OPTS" |
		tee /dev/stderr |
		sed -n "s/.*threads=\([0-9]*\) .*opt=\([a-z]*\): \([0-9.]*\) M.*/$1 $3 $4 $5 $6 \1 \2 \3/p" >>"$RAW"
}
for shape in $SHAPES; do
	bits=${shape%%:*}; skew=${shape#*:}
	for mode in $MODES; do
		rmode=$mode; [ "$mode" = atomic ] && rmode=cas
		for r in $(seq "$ROUNDS"); do
			for t in $(echo "$THREADS" | tr ',' ' '); do
				"$B/bench/roofline" "$ROWS" "$NNZ" $((1 << bits)) "$t" "$rmode" "$skew" |
					tee /dev/stderr |
					sed -n "s/.*: \([0-9.]*\) M nnz-updates.*/bare $r $bits $skew $mode $t - \1/p" >>"$RAW"
			done
			engine new "$B" "$r" "$bits" "$skew" "$mode"
			[ -n "$BASE" ] && engine base "$BASE" "$r" "$bits" "$skew" "$mode"
		done
	done
done 2>&1 | sed 's/^/# /'

awk -v opts="$OPTS" -v base="$BASE" '
function stat(key,   n, i, j, t, a) {
	n = split(V[key], a, " ")
	if (!n) return "-"
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return sprintf("%.3g (%.3g..%.3g)", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, a[1], a[n])
}
function add(key, v) { V[key] = V[key] " " v }
{ R[$1, $2, $3, $4, $5, $6, $7] = $8; S[$3 " " $4 " " $5 " " $6] = 1; N[$2] = 1 }
END {
	no = split(opts, O, ",")
	for (s in S) {
		split(s, k, " ")
		for (o = 1; o <= no; o++) for (r in N) {
			bare = R["bare", r, k[1], k[2], k[3], k[4], "-"]
			add(s " bare", bare)
			for (w = 1; w <= 2; w++) {
				who = w == 1 ? "new" : "base"
				v = R[who, r, k[1], k[2], k[3], k[4], O[o]]
				sg = R[who, r, k[1], k[2], k[3], k[4], "sgd"]
				if (v == "") continue
				add(s " " O[o] " " who, v)
				if (bare > 0) add(s " " O[o] " " who "/bare", v / bare)
				if (O[o] != "sgd" && sg > 0) add(s " " O[o] " " who "/sgd", v / sg)
			}
		}
	}
	printf "%-5s %-4s %-5s %-3s %-10s %-22s", "dim", "skew", "mode", "T", "opt", "bare"
	printf " %-22s %-22s %-22s", "new", "new/bare", "new/sgd"
	if (base != "") printf " %-22s %-22s %-22s", "base", "base/bare", "base/sgd"
	printf "\n"
	n = 0
	for (s in S) L[++n] = s
	for (i = 2; i <= n; i++) for (j = i; j > 1; j--) {
		split(L[j - 1], x, " "); split(L[j], y, " ")
		if (x[1] + 0 < y[1] + 0 || (x[1] == y[1] && (x[2] + 0 < y[2] + 0 || (x[2] == y[2] && (x[3] < y[3] || (x[3] == y[3] && x[4] + 0 <= y[4] + 0)))))) break
		t = L[j]; L[j] = L[j - 1]; L[j - 1] = t
	}
	for (i = 1; i <= n; i++) for (o = 1; o <= no; o++) {
		split(L[i], k, " ")
		printf "2^%-3s %-4s %-5s %-3s %-10s %-22s", k[1], k[2], k[3], k[4], O[o], stat(L[i] " bare")
		printf " %-22s %-22s %-22s", stat(L[i] " " O[o] " new"), stat(L[i] " " O[o] " new/bare"), stat(L[i] " " O[o] " new/sgd")
		if (base != "") printf " %-22s %-22s %-22s", stat(L[i] " " O[o] " base"), stat(L[i] " " O[o] " base/bare"), stat(L[i] " " O[o] " base/sgd")
		printf "\n"
	}
}' "$RAW"
