#!/bin/sh
# `boar help train` shows the defaults the code uses (issue 12's third
# trap): the step each task and optimizer starts from, as printed, is the
# eta that training reports in its first epoch; --eta-decay is described
# as decaying every optimizer's step, as it does (AdaGrad's second epoch
# runs at eta * decay).
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read --json)"

"$BOAR" help train >"$T/help" || fail "help exited $?"
tr '\n' ' ' <"$T/help" | tr -s ' ' >"$T/flat"
# eta's default as printed: "auto: linear A (OPT), B (OPT2), C (OPT3); mf
# D (OPT), E (OPT2)", the first of each list the task's default optimizer
# (linear models take three, MF two: normalized is for linear models).
num='([0-9.e-]+)'
lpat="default: auto: linear $num \\(([a-z]+)\\), $num \\(([a-z]+)\\), $num \\(([a-z]+)\\);"
mpat="; mf $num \\(([a-z]+)\\), $num \\(([a-z]+)\\)\\)"
grep -Eq "$lpat" "$T/flat" && grep -Eq "$mpat" "$T/flat" ||
	{ grep -A3 -- '--eta ' "$T/help"; fail "help does not print eta's defaults per task and optimizer"; }
set -- $(grep -Eo "$lpat" "$T/flat" | sed -E "s/$lpat/\\1 \\2 \\3 \\4 \\5 \\6/") \
	$(grep -Eo "$mpat" "$T/flat" | sed -E "s/$mpat/\\1 \\2 \\3 \\4/")
echo "help: eta linear $1 ($2), $3 ($4), $5 ($6); mf $7 ($8), $9 (${10})"
lin=$1 lin_opt=$2 lin2=$3 lin_opt2=$4 lin3=$5 lin_opt3=$6
mf=$7 mf_opt=$8 mf2=$9 mf_opt2=${10}

eta_of() { # EPOCH ARGS...: the eta training reports for that epoch
	e=$1
	shift
	"$BOAR" train --quiet --json --threads 1 "$@" >"$T/j" || fail "train $* exited $?"
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j["epoch"] == int(sys.argv[2]):
        print("%g" % j["eta"])
' "$T/j" "$e"
}
same() { awk -v a="$2" -v b="$3" 'BEGIN { exit !(a + 0 == b + 0) }' || fail "$1: help says $3, training uses $2"; }

same "linear, default optimizer" "$(eta_of 1 --epochs 1 datasets/a9a)" "$lin"
same "linear, $lin_opt" "$(eta_of 1 --epochs 1 --optimizer "$lin_opt" datasets/a9a)" "$lin"
same "linear, $lin_opt2" "$(eta_of 1 --epochs 1 --optimizer "$lin_opt2" datasets/a9a)" "$lin2"
same "linear, $lin_opt3" "$(eta_of 1 --epochs 1 --optimizer "$lin_opt3" datasets/a9a)" "$lin3"
awk 'BEGIN { for (u = 0; u < 40; u++) for (i = 0; i < 30; i++) if ((u * 7 + i) % 3 == 0) print u, i, (u + i) % 5 + 1 }' >"$T/r.txt"
# MF's SGD step is printed for ratings of standard deviation 1; training
# divides it by the ratings' (issue 11).
sd=$(awk '{ s += $3; q += $3 * $3; n++ } END { printf "%.9g", sqrt(q / n - (s / n) ^ 2) }' "$T/r.txt")
mf_eta=$(eta_of 1 --epochs 1 "$T/r.txt")
awk -v a="$mf_eta" -v s="$sd" -v b="$mf" 'BEGIN { d = a * s - b; exit !(d < 1e-4 * b && d > -1e-4 * b) }' ||
	fail "mf, default optimizer: help says $mf, training uses $mf_eta for ratings of stddev $sd"
same "mf, $mf_opt2" "$(eta_of 1 --epochs 1 --optimizer "$mf_opt2" "$T/r.txt")" "$mf2"

# --eta-decay: AdaGrad's second epoch runs at eta * decay, and help says so.
eta_a=$(eta_of 1 --epochs 1 --optimizer adagrad datasets/a9a)
same "adagrad epoch 2" "$(eta_of 2 --epochs 2 --optimizer adagrad --eta-decay 0.5 datasets/a9a)" \
	"$(awk -v a="$eta_a" 'BEGIN { print a * 0.5 }')"
grep -A3 -- '--eta-decay' "$T/help" | tr '\n' ' ' | grep -qi 'adagrad' ||
	fail "help does not say --eta-decay decays AdaGrad's step too"
grep -A2 -- '--eta-decay' "$T/help" | grep -q 'sgd: step' &&
	fail "help still describes --eta-decay as SGD-only"
# l2 per task, and the optimizer per task, are printed from the library.
grep -Eq 'default: auto: linear [0-9.e-]+; mf [0-9.e-]+\)' "$T/flat" ||
	fail "help does not print l2's defaults per task"
# (the GPU's linear default, where it differs, in parentheses)
grep -Eq "default: auto: linear $lin_opt( \(adagrad on the gpu\))?; mf $mf_opt\)" "$T/flat" ||
	fail "help does not print the optimizer per task"
echo "ok"
