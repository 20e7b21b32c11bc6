#!/bin/sh
# defaults_panel.sh - a new user's defaults against a tuned LIBLINEAR -s 0.
#
# Issue 12 judges boar's defaults (no option but the files) by test log loss
# and accuracy on data the project has never seen, against LIBLINEAR -s 0
# tuned over C. That data cannot be downloaded here, so this panel stands in
# for it with sets of the same kinds: raw term counts (20 Newsgroups as two
# binary problems), TF-IDF text (the RCV1 sample), one-hot census data
# (a9a), Criteo's raw unscaled integer columns beside one-hot categoricals
# (an 80/20 split of the tiny sample: its test file has no labels), and two
# sets from `boar gen`: w8a-like sparse binary rows, and the same kind of
# rows as raw counts whose columns differ in scale by up to 1000x.
#
# For each set: boar with each configuration of CONFIGS, and LIBLINEAR -s 0
# with C picked from a grid by 3-fold cross-validated log loss on the
# training rows, then refit on all of them (the usual tuned baseline). Log loss comes from
# liblinear-predict -b 1. Without liblinear-train on PATH its column says so.
#
# Usage: sh bench/defaults_panel.sh [OUT.md]   (prints a Markdown table)
# Environment:
#   BUILD     directory with boar (default: build)
#   DATA      where converted sets are kept (default: bench/results/defaults)
#   DATASETS  the shared data sets (default: ../shared/datasets)
#   SETS      which sets (default: all, see below)
#   THREADS   boar's --threads (default: 1, reproducible)
#   CONFIGS   "name=options;..." boar runs (default: old defaults, new
#             defaults, adagrad); the new defaults' options are empty
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
BOAR=$(cd "$BUILD" && pwd)/boar
DATA=${DATA:-bench/results/defaults}
DATASETS=${DATASETS:-../shared/datasets}
SETS=${SETS:-news20-space news20-comp-rec rcv1 a9a criteo w8a-gen counts-gen}
THREADS=${THREADS:-1}
OLD="--optimizer adagrad --eta 0.3 --eta-decay 0.9 --l2 0 --epochs 10"
CONFIGS=${CONFIGS:-"old defaults=$OLD;new defaults=;adagrad=--optimizer adagrad"}
CGRID="0.01 0.03 0.1 0.3 1 3 10 30 100 300"
mkdir -p "$DATA" || exit 1

# Every line of a file to $2 (80%) or $3 (20%), by a fixed draw.
split_80_20()
{
	awk -v a="$2" -v b="$3" 'BEGIN { srand(12) }
		{ if (rand() < 0.8) print > a; else print > b }' "$1"
}

# 20 Newsgroups term counts with labels mapped by awk program $1.
news20()
{
	for part in train test; do
		awk "$1" "$DATASETS/news20/news20_bow.$part.libsvm" \
			> "$DATA/$2.$part"
	done
}

# Criteo: Label,I1..I13 (raw integers, empty = missing),C1..C26 (one-hot
# ids in order of first appearance over both parts) as LIBSVM.
criteo()
{
	split_80_20 "$DATASETS/criteo-tiny/train.tiny.csv" "$DATA/c.a" "$DATA/c.b"
	awk -F, -v tr="$DATA/criteo.train" -v te="$DATA/criteo.test" '
		FNR == 1 && /^Id/ { next }
		{
			out = ($2 == 1 ? "+1" : "-1")
			for (i = 3; i <= 15; i++)
				if ($i != "" && $i != 0)
					out = out " " (i - 2) ":" $i
			n = 0
			for (i = 16; i <= 41; i++) {
				if ($i == "")
					continue
				key = i "=" $i
				if (!(key in id))
					id[key] = 14 + next_id++
				ids[++n] = id[key]
			}
			# LIBSVM wants ascending ids
			for (a = 2; a <= n; a++)
				for (b = a; b > 1 && ids[b - 1] > ids[b]; b--) {
					t = ids[b]; ids[b] = ids[b - 1]; ids[b - 1] = t
				}
			for (a = 1; a <= n; a++)
				out = out " " ids[a] ":1"
			print out > (FILENAME ~ /c\.a$/ ? tr : te)
		}' "$DATA/c.a" "$DATA/c.b"
	rm -f "$DATA/c.a" "$DATA/c.b"
}

# A generated set, 80/20: w8a-like (300 features, ~12 per row, values 1) or
# raw counts: each value a count 1..8 drawn from (row, feature), times a
# column scale of 1, 10, 100 or 1000 (by feature id mod 4).
gen()
{
	"$BOAR" gen --rows 40000 --features "$2" --nnz "$3" --skew 1 \
		--noise 0.05 --seed 3 -q -o "$DATA/g.svm" || return 1
	awk -v kind="$1" '
		{
			out = $1
			for (i = 2; i <= NF; i++) {
				split($i, p, ":")
				v = 1
				if (kind == "counts") {
					h = (NR * 7919 + p[1] * 104729) % 9973
					v = (1 + h % 8) * 10 ^ (p[1] % 4)
				}
				out = out " " p[1] ":" v
			}
			print out
		}' "$DATA/g.svm" > "$DATA/g2.svm"
	split_80_20 "$DATA/g2.svm" "$DATA/$1-gen.train" "$DATA/$1-gen.test"
	rm -f "$DATA/g.svm" "$DATA/g2.svm"
}

prepare()
{
	[ -s "$DATA/$1.train" ] && [ -s "$DATA/$1.test" ] && return 0
	case $1 in
	news20-space) # sci.space (15) against the other 19 groups
		news20 '{ $1 = ($1 == 15) ? 1 : -1; print }' "$1" ;;
	news20-comp-rec) # comp.* (2-6) against rec.* (8-11)
		news20 '$1 >= 2 && $1 <= 6 { $1 = 1; print }
			$1 >= 8 && $1 <= 11 { $1 = -1; print }' "$1" ;;
	rcv1)
		cp "$DATASETS/rcv1-sample/rcv1_small.libsvm" "$DATA/rcv1.train" &&
		cp "$DATASETS/rcv1-sample/rcv1_small_test.libsvm" "$DATA/rcv1.test" ;;
	a9a)
		cp "$DATASETS/libsvm/a9a" "$DATA/a9a.train" &&
		cp "$DATASETS/libsvm/a9a.t" "$DATA/a9a.test" ;;
	criteo) criteo ;;
	w8a-gen) gen w8a 300 12 ;;
	counts-gen) gen counts 2000 20 ;;
	*) echo "unknown set $1" >&2; return 1 ;;
	esac
}

# Mean log loss and accuracy of liblinear-predict -b 1 output $1 against
# the labels of LIBSVM file $2.
ll_score()
{
	awk 'NR == FNR { y[FNR] = $1 + 0; next }
	     FNR == 1 { for (i = 2; i <= NF; i++) lab[i] = $i + 0; next }
	     { t = y[FNR - 1]; p = 0
	       for (i = 2; i <= NF; i++) if (lab[i] == t) p = $i
	       if (p < 1e-15) p = 1e-15
	       s -= log(p); n++; if ($1 + 0 == t) c++ }
	     END { printf "%.4f %.4f", s / n, c / n }' "$2" "$1"
}

liblinear()
{
	if ! command -v liblinear-train > /dev/null 2>&1; then
		echo "- (liblinear-train not on PATH)"
		return
	fi
	tr=$DATA/$1.train te=$DATA/$1.test t=$DATA/ll.$$
	# 3 folds by a fixed draw; C by the folds' mean held-out log loss
	awk -v t="$t" 'BEGIN { srand(5) } { print > (t ".f" int(rand() * 3)) }' "$tr"
	best=1 best_ll=
	for C in $CGRID; do
		sum=0
		for k in 0 1 2; do
			cat $(for j in 0 1 2; do [ $j = $k ] || echo "$t.f$j"; done) > "$t.fit"
			liblinear-train -q -s 0 -c "$C" "$t.fit" "$t.m" > /dev/null &&
			liblinear-predict -b 1 "$t.f$k" "$t.m" "$t.p" > /dev/null || continue 2
			set -- $(ll_score "$t.p" "$t.f$k")
			sum=$(awk -v a="$sum" -v b="$1" 'BEGIN { print a + b }')
		done
		if [ -z "$best_ll" ] || awk "BEGIN { exit !($sum < $best_ll) }"; then
			best=$C best_ll=$sum
		fi
	done
	liblinear-train -q -s 0 -c "$best" "$tr" "$t.m" > /dev/null &&
	liblinear-predict -b 1 "$te" "$t.m" "$t.p" > /dev/null &&
	echo "$(ll_score "$t.p" "$te") C=$best"
	rm -f "$t.f0" "$t.f1" "$t.f2" "$t.fit" "$t.m" "$t.p"
}

# boar with options $2 on set $1: "logloss accuracy"
boar_run()
{
	# shellcheck disable=SC2086
	"$BOAR" train $2 --threads "$THREADS" -q -m "$DATA/m.$$" \
		"$DATA/$1.train" > /dev/null 2>&1 || { echo "- -"; return; }
	"$BOAR" eval -m "$DATA/m.$$" "$DATA/$1.test" 2>&1 |
		awk '/accuracy/ { for (i = 1; i < NF; i++) {
			if ($i == "accuracy") a = $(i + 1)
			if ($i == "loss") l = $(i + 1) } }
		     END { printf "%s %s", l, a }'
	rm -f "$DATA/m.$$"
}

out=${1:-/dev/stdout}
{
	echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo '+changes'); boar --threads $THREADS"
	echo
	printf '| set | rows train/test |'
	echo "$CONFIGS" | tr ';' '\n' | while IFS= read -r c; do
		printf ' %s |' "${c%%=*}"
	done
	echo " LIBLINEAR -s 0, C tuned |"
	printf '| --- | --- |'
	echo "$CONFIGS" | tr ';' '\n' | while IFS= read -r c; do printf ' --- |'; done
	echo " --- |"
	for s in $SETS; do
		prepare "$s" || continue
		printf '| %s | %s/%s |' "$s" "$(wc -l < "$DATA/$s.train")" \
			"$(wc -l < "$DATA/$s.test")"
		echo "$CONFIGS" | tr ';' '\n' | while IFS= read -r c; do
			printf ' %s |' "$(boar_run "$s" "${c#*=}")"
		done
		echo " $(liblinear "$s") |"
	done
	echo
	echo "Each cell: test log loss, then accuracy."
} > "$out"
