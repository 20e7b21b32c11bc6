#!/bin/sh
# cores_peers.sh - boar against the Hogwild! peers on many cores, same files.
#
# usage: sh bench/cores_peers.sh TRAIN.svm TEST.svm [BUILD_DIR]
#   THREADS (default: all cores), EPOCHS (5), ETA (0.1: the plain-SGD step
#   of every tool), WORK (scratch folder for converted files)
#
# Trains logistic regression (boar, DimmWitted) or a hinge-loss SVM (the
# HOGWILD! and Hogwild++ codes) on the same LIBSVM files (labels +1/-1),
# EPOCHS passes at THREADS threads, and prints one line per tool: the
# training seconds as the tool itself reports them (parsing and scoring
# excluded), then its test accuracy and, where it computes one, its test
# log loss. The peers are never part of boar: each runs only when found,
# by variable or on PATH, and a line says which were not found:
#   DW_LR_TRAIN, DW_LR_TEST   DimmWitted's dw-lr-train and dw-lr-test
#                             (application/ of HazyResearch/dimmwitted;
#                             its training uses every core of the host)
#   HOGWILD_SVM               the original HOGWILD! svm (bin/svm of
#                             huanzhang12/hogwildpp, HOGWILD! v03a unchanged)
#   HOGWILDPP_SVM             Hogwild++ (bin/numasvm of the same repository)
#   HOGWILD_CONVERT           its bin/convert (TSV to binary), for both
#   XLEARN_TRAIN              xLearn's xlearn_train (aksnzhy/xlearn; linear
#                             model, its own optimizer and step, lock-free
#                             threads; its per-epoch time includes scoring
#                             the test set, so train_s is an upper bound)
#   LIBLINEAR_TRAIN, LIBLINEAR_PREDICT  LIBLINEAR's train and predict
#                             (cjlin1/liblinear, or Debian's liblinear-train
#                             and liblinear-predict): -s 0, one thread, to
#                             convergence (stopped after LL_LIMIT seconds,
#                             1800); train_s is the whole run's wall time,
#                             reading the file included
#   VW                        Vowpal Wabbit's vw (one learning thread):
#                             EPOCHS passes, wall time with reading
set -eu
TRAIN=$1 TEST=$2 B=${3:-build}
THREADS=${THREADS:-$(nproc)}
EPOCHS=${EPOCHS:-5}
ETA=${ETA:-0.1}
WORK=${WORK:-${TMPDIR:-/tmp}/boar-cores-peers}
mkdir -p "$WORK"

find_tool() { # VAR NAME: the variable's value, else NAME on PATH, else ""
	eval "v=\${$1:-}"
	if [ -n "$v" ]; then echo "$v"; else command -v "$2" 2>/dev/null || true; fi
}
row() { printf '%-30s %8s %9s %9s\n' "$@"; }
row tool train_s test_acc test_loss

# boar: the sum of its epochs' seconds, the last epoch's test figures, and
# (into $WORK/curves) the seconds and test loss after every epoch, to hold
# against the peers' final test loss
boar_run() {
	name=$1
	shift
	"$B/boar" train --quiet --json --threads "$THREADS" --epochs "$EPOCHS" \
		--test "$TEST" "$@" "$TRAIN" | python3 -c '
import json, sys
e = [json.loads(l) for l in sys.stdin if l.startswith("{")]
t, curve = 0.0, []
for x in e:
    t += x["seconds"]
    curve.append("%.3fs:%.4f" % (t, x["test_loss"]))
with open(sys.argv[1], "a") as f:
    f.write("%s after each epoch (seconds:test loss): %s\n" % (sys.argv[2], " ".join(curve)))
print("%.3f %.4f %.4f" % (t, e[-1]["test_accuracy"], e[-1]["test_loss"]))' \
		"$WORK/curves" "$name" | { read -r s a l; row "$name" "$s" "$a" "$l"; }
}
: >"$WORK/curves"
"$B/boar" train --quiet --threads "$THREADS" --epochs 1 --cache "$TRAIN" >/dev/null 2>&1 || true
boar_run "boar defaults" --cache
boar_run "boar --optimizer sgd" --cache --optimizer sgd --eta "$ETA"

missing=""
DWT=$(find_tool DW_LR_TRAIN dw-lr-train)
DWE=$(find_tool DW_LR_TEST dw-lr-test)
if [ -n "$DWT" ] && [ -n "$DWE" ]; then
	cp "$TRAIN" "$WORK/dw.train"
	"$DWT" -s "$ETA" -e "$EPOCHS" -r 0 "$WORK/dw.train" >"$WORK/dw.log"
	s=$(sed -n 's/.*train_seconds [0-9.]* total \([0-9.]*\).*/\1/p' "$WORK/dw.log" | tail -n 1)
	[ -n "$s" ] || s="?(stock)" # stock dw-lr-train prints no time
	"$DWE" "$TEST" "$WORK/dw.train.model" "$WORK/dw.out" >"$WORK/dw-test.log"
	l=$(sed -n 's/.*Testing loss *= *\([0-9.]*\).*/\1/p' "$WORK/dw-test.log")
	row "DimmWitted" "$s" \
		"$(sed -n 's/.*Testing acc *= *\([0-9.]*\).*/\1/p' "$WORK/dw-test.log")" "$l"
	echo "DimmWitted at the end (seconds:test loss): ${s}s:$l" >>"$WORK/curves"
else
	missing="$missing DimmWitted(DW_LR_TRAIN/DW_LR_TEST)"
fi

HW=$(find_tool HOGWILD_SVM hogwild-svm)
HPP=$(find_tool HOGWILDPP_SVM hogwildpp-numasvm)
CONV=$(find_tool HOGWILD_CONVERT hogwild-convert)
if { [ -n "$HW" ] || [ -n "$HPP" ]; } && [ -n "$CONV" ]; then
	for f in train test; do
		src=$TRAIN
		[ $f = test ] && src=$TEST
		# TSV: "row -2 label", then "row column value", 0-based
		awk '{ r = NR - 1; printf "%d\t-2\t%s\n", r, $1
		       for (i = 2; i <= NF; i++) { split($i, p, ":")
		       printf "%d\t%d\t%s\n", r, p[1] - 1, p[2] } }' "$src" >"$WORK/hw.$f.tsv"
		"$CONV" "$WORK/hw.$f.tsv" "$WORK/hw.$f.bin" >/dev/null
		rm -f "$WORK/hw.$f.tsv"
	done
	for t in "HOGWILD! (svm):$HW" "Hogwild++ (numasvm):$HPP"; do
		name=${t%%:*} bin=${t#*:}
		[ -n "$bin" ] || continue
		"$bin" --epochs "$EPOCHS" --stepinitial "$ETA" --step_decay 0.9 \
			--splits "$THREADS" --binary 1 "$WORK/hw.train.bin" \
			"$WORK/hw.test.bin" >"$WORK/hw.log" 2>&1
		tail -n 1 "$WORK/hw.log" | sed -n 's/.*train_time: \([0-9.]*\).*test_acc: \([0-9.]*\).*/\1 \2/p' |
			{ read -r s a; row "$name" "$s" "$a" "-"; }
	done
fi
XL=$(find_tool XLEARN_TRAIN xlearn_train)
if [ -n "$XL" ]; then
	# per epoch: "[ pct ] epoch train_loss test_loss test_acc seconds"
	# (xLearn names its log files after $USER and aborts without one)
	USER=${USER:-bench} "$XL" "$TRAIN" -s 0 -v "$TEST" -x acc -e "$EPOCHS" --no-bin \
		-nthread "$THREADS" --dis-es -m "$WORK/xl.model" 2>&1 |
		sed 's/\x1b\[[0-9;]*m//g' >"$WORK/xl.log"
	awk '/^\[ *[0-9]+%/ { sub(/^\[[^]]*\]/, "")
		t += $5; loss = $3; acc = $4; n++; c = c sprintf(" %.3fs:%s", t, $3) }
		END { if (n) printf "%.3f %s %s\n%s\n", t, acc, loss, c }' "$WORK/xl.log" |
		{ read -r s a l; read -r c || c=; row "xLearn" "$s" "$a" "$l"
		  echo "xLearn after each epoch (seconds:test loss):$c" >>"$WORK/curves"; }
else
	missing="$missing xLearn(XLEARN_TRAIN)"
fi

LLT=$(find_tool LIBLINEAR_TRAIN liblinear-train)
LLP=$(find_tool LIBLINEAR_PREDICT liblinear-predict)
if [ -n "$LLT" ] && [ -n "$LLP" ]; then
	rm -f "$WORK/ll.model"
	s0=$(date +%s.%N)
	timeout "${LL_LIMIT:-1800}" "$LLT" -q -s 0 "$TRAIN" "$WORK/ll.model" ||
		echo "LIBLINEAR stopped after LL_LIMIT=${LL_LIMIT:-1800} s"
	s1=$(date +%s.%N)
	[ -f "$WORK/ll.model" ] && "$LLP" -b 1 "$TEST" "$WORK/ll.model" "$WORK/ll.out" >"$WORK/ll.log"
	# ll.out: "labels 1 -1" (or -1 1), then "label p(first) p(second)"
	loss=$(paste -d ' ' "$WORK/ll.out" "$TEST" | awk 'NR == 1 { pos = $2 == 1 ? 2 : 3; next }
		{ p = $pos; y = $4 > 0; p = p < 1e-15 ? 1e-15 : (p > 1 - 1e-15 ? 1 - 1e-15 : p)
		  s -= y ? log(p) : log(1 - p); n++ } END { printf "%.4f", s / n }')
	s=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')
	row "LIBLINEAR -s 0 (1 thread)" "$s" \
		"$(sed -n 's/.*= \([0-9.]*\)%.*/\1/p' "$WORK/ll.log" | awk '{ printf "%.4f", $1 / 100 }')" "$loss"
	echo "LIBLINEAR at the end (seconds:test loss): ${s}s:$loss" >>"$WORK/curves"
else
	missing="$missing LIBLINEAR(LIBLINEAR_TRAIN/LIBLINEAR_PREDICT)"
fi

VWB=$(find_tool VW vw)
if [ -n "$VWB" ]; then
	for f in train test; do
		src=$TRAIN
		[ $f = test ] && src=$TEST
		awk '{ l = $1 > 0 ? 1 : -1; $1 = ""; print l " |f" $0 }' "$src" >"$WORK/vw.$f"
	done
	s0=$(date +%s.%N)
	"$VWB" --quiet -d "$WORK/vw.train" --loss_function logistic -b 20 \
		--passes "$EPOCHS" -c -k --holdout_off -f "$WORK/vw.model"
	s1=$(date +%s.%N)
	"$VWB" --quiet -t -i "$WORK/vw.model" -d "$WORK/vw.test" -p "$WORK/vw.pred"
	# predictions are margins: the logistic loss and accuracy against the labels
	set -- $(paste -d ' ' "$WORK/vw.pred" "$WORK/vw.test" | awk '{ y = $2 > 0 ? 1 : -1; m = $1
		s += log(1 + exp(-y * m)); ok += (m > 0) == (y > 0); n++ }
		END { printf "%.4f %.4f", ok / n, s / n }')
	s=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')
	row "Vowpal Wabbit (1 thread)" "$s" "$1" "$2"
	echo "Vowpal Wabbit at the end (seconds:test loss): ${s}s:$2" >>"$WORK/curves"
	rm -f "$WORK/vw.train" "$WORK/vw.test" "$WORK/vw.train.cache"
else
	missing="$missing VowpalWabbit(VW)"
fi

[ -n "$HW" ] && [ -n "$CONV" ] || missing="$missing HOGWILD!(HOGWILD_SVM,HOGWILD_CONVERT)"
[ -n "$HPP" ] && [ -n "$CONV" ] || missing="$missing Hogwild++(HOGWILDPP_SVM,HOGWILD_CONVERT)"
[ -z "$missing" ] || echo "not found, not run:$missing"
cat "$WORK/curves"
# time to the same test loss: for every peer with a log loss, its final
# loss and time, and when each boar run first had that loss
python3 - "$WORK/curves" <<'EOF'
import sys
tools = []
for line in open(sys.argv[1]):
    name, _, pts = line.partition(" (seconds:test loss):")
    pts = [p.split("s:") for p in pts.split()]
    pts = [(float(s), float(l)) for s, l in pts if l]
    if pts:
        tools.append((name.replace(" after each epoch", "").replace(" at the end", ""), pts))
boars = [t for t in tools if t[0].startswith("boar")]
for name, p in tools:
    if name.startswith("boar"):
        continue
    s, l = p[-1]
    print("to %s's final test loss %.4f (%.3f s): %s" % (name, l, s, ", ".join(
        "%s %s" % (b, next(("%.3f s" % t for t, x in bp if x <= l), "not reached"))
        for b, bp in boars)))
EOF
