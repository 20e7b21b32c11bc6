#!/bin/sh
# rebench.sh - bench/RESULTS.md's speed figures for two builds, paired.
#
# On a machine shared with other work a figure drifts with the load, so the
# old and the new binaries are run in pairs, back to back, the order
# alternating (old-new, new-old, ...), PAIRS pairs per figure; each figure
# gets both medians (min..max) and the median of the per-pair ratios
# new/old. Times: a ratio above 1 is slower; rates (M/s): below 1 is slower.
#   sh bench/rebench.sh OLD_DIR NEW_DIR   (each holds boar, bench/engine_rate
#                                          and bench/roofline of a build)
#   PAIRS (default 5), DATA (default bench/results/data/targets: the files
#   of bench/targets.sh, generated there if missing), ROWS (engine_rate,
#   default 1000000), SHAPES ("bits:skew:threads:mode ..."), ONLY=parse
#   (only "parse + one pass", at THREADS_PARSE threads if set, else all)
set -eu
OLD=$1
NEW=$2
PAIRS=${PAIRS:-5}
DATA=${DATA:-bench/results/data/targets}
ROWS=${ROWS:-1000000}
SHAPES=${SHAPES:-"20:0:1:racy 20:0:2:racy 20:1:1:racy 20:1:2:racy 26:0:1:racy 26:1:2:racy 20:0:1:atomic 26:0:1:atomic"}
ACCURACY=${ACCURACY:-0.70131} # LIBLINEAR -s 0's test accuracy (RESULTS.md)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

[ -f "$DATA/linear-1M.svm" ] && [ -f "$DATA/mf-9M.txt" ] || {
	echo "rebench: run bench/targets.sh first (DATA=$DATA)" >&2
	exit 1
}
# Each build reads the data through its own directory, so that each keeps
# its own binary cache beside the file (their formats may differ).
for side in old new; do
	mkdir -p "$WORK/$side"
	for f in linear-1M.svm linear-test.svm mf-9M.txt mf-test.txt; do
		ln -s "$(cd "$DATA" && pwd)/$f" "$WORK/$side/$f"
	done
done

now() { date +%s.%N; }
TP=${THREADS_PARSE:+--threads $THREADS_PARSE}
# wall seconds of a command, its output discarded
wall() { s=$(now); "$@" >/dev/null 2>&1; e=$(now); echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }'; }
json_min_seconds() { python3 -c "import json,sys; print('%.4f' % min(json.loads(x)['seconds'] for x in sys.stdin))"; }
med() { sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.4g (%.4g..%.4g)", m, a[1], a[NR] }'; }
medonly() { sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f", m }'; }

# pair NAME UNIT CMD...: CMD is a shell function taking the side (old or
# new) and printing one number; run PAIRS pairs and print a table row.
pair() {
	name=$1 unit=$2
	shift 2
	: >"$WORK/o" && : >"$WORK/n" && : >"$WORK/r"
	for i in $(seq "$PAIRS"); do
		if [ $((i % 2)) = 1 ]; then
			o=$("$@" old) n=$("$@" new)
		else
			n=$("$@" new) o=$("$@" old)
		fi
		echo "$o" >>"$WORK/o"
		echo "$n" >>"$WORK/n"
		echo "$n $o" | awk '{ printf "%.4f\n", $1 / $2 }' >>"$WORK/r"
	done
	printf '| %s | %s | %s | %s | %s |\n' "$name" "$unit" "$(med <"$WORK/o")" \
		"$(med <"$WORK/n")" "$(med <"$WORK/r")"
}

bin() { if [ "$1" = old ]; then echo "$OLD"; else echo "$NEW"; fi; }
parse_pass() { wall "$(bin "$1")/boar" train --epochs 1 --optimizer sgd $TP -q "$WORK/$1/linear-1M.svm"; }
epoch_t() {
	"$(bin "$2")/boar" train --epochs 3 --optimizer sgd --threads "$1" --cache --json -q \
		"$WORK/$2/linear-1M.svm" | json_min_seconds
}
epoch_1() { epoch_t 1 "$1"; }
epoch_2() { epoch_t 2 "$1"; }
mf_20() { wall "$(bin "$1")/boar" train --task mf --rank 16 --epochs 20 --threads 2 --cache -q "$WORK/$1/mf-9M.txt"; }
to_liblinear() { wall "$(bin "$1")/boar" train --epochs "$EPOCHS_LL" --threads 2 -q "$WORK/$1/linear-1M.svm"; }
rate() { sed -n 's/.*: \([0-9.]*\) M nnz-updates.*/\1/p' | head -n 1; }
engine() { "$(bin "$1")/bench/engine_rate" "$ROWS" 40 "$DIM" "$THREADS" "$MODE" "$SKEW" | rate; }
bare() { rmode=$MODE; [ "$MODE" = atomic ] && rmode=cas; "$(bin "$1")/bench/roofline" "$ROWS" 40 "$DIM" "$THREADS" "$rmode" "$SKEW" | rate; }

if [ "${ONLY:-}" = parse ]; then
	cat "$DATA/linear-1M.svm" >/dev/null
	echo "| figure | unit | old, median (min..max) | new, median (min..max) | new/old, median of $PAIRS pairs |"
	echo "|---|---|---:|---:|---:|"
	pair "parse + one pass, 1M x 1M x 30 nnz${THREADS_PARSE:+, $THREADS_PARSE threads}" "s" parse_pass
	exit 0
fi
# Warm-up: each side writes its caches once (not timed).
for side in old new; do
	"$(bin $side)/boar" train --epochs 1 --threads 2 --cache -q "$WORK/$side/linear-1M.svm" >/dev/null
	"$(bin $side)/boar" train --task mf --epochs 1 --threads 2 --cache -q "$WORK/$side/mf-9M.txt" >/dev/null
done
# The epochs to LIBLINEAR's accuracy, each side's own count (they should agree).
reach() {
	"$(bin "$1")/boar" train --epochs 30 --threads 2 --test "$WORK/$1/linear-test.svm" --json -q \
		"$WORK/$1/linear-1M.svm" | python3 -c "
import json,sys
for x in sys.stdin:
    e=json.loads(x)
    if e['test_accuracy']>=$ACCURACY-0.0005:
        print(e['epoch'], '%.4f' % e['test_accuracy']); break
else: print(0, 0)"
}
mf_rmse() {
	"$(bin "$1")/boar" train --task mf --rank 16 --epochs 20 --threads 2 --cache --test "$WORK/$1/mf-test.txt" \
		--json -q "$WORK/$1/mf-9M.txt" | python3 -c "import json,sys; print('%.4f' % [json.loads(x) for x in sys.stdin][-1]['test_rmse'])"
}
ll_old=$(reach old) ll_new=$(reach new)
EPOCHS_LL=${ll_new% *}
echo "epochs to LIBLINEAR's accuracy: old $ll_old, new $ll_new (timed: $EPOCHS_LL epochs)"
echo "MF test RMSE after 20 epochs: old $(mf_rmse old), new $(mf_rmse new)"
echo
echo "| figure | unit | old, median (min..max) | new, median (min..max) | new/old, median of $PAIRS pairs |"
echo "|---|---|---:|---:|---:|"
pair "parse + one pass, 1M x 1M x 30 nnz" "s" parse_pass
pair "one epoch, 1 thread (cached)" "s" epoch_1
pair "one epoch, 2 threads (cached)" "s" epoch_2
pair "MF 9M ratings, rank 16, 20 epochs, 2 threads" "s" mf_20
pair "reach LIBLINEAR -s 0's accuracy ($EPOCHS_LL epochs, parse included)" "s" to_liblinear
for shape in $SHAPES; do
	IFS=: read -r bits SKEW THREADS MODE <<EOF
$shape
EOF
	DIM=$((1 << bits))
	sk=uniform; [ "$SKEW" = 1 ] && sk="power law"
	pair "engine rate, 2^$bits $sk, $THREADS thr, $MODE" "M/s" engine
	pair "bare loop (roofline.c), 2^$bits $sk, $THREADS thr, $MODE" "M/s" bare
done
