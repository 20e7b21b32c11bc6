#!/bin/sh
# bench/net/shaped.sh's weak part at its smallest: two "machines" over
# tbf-shaped veth links, one worker on 1x rows against two workers on 2x
# rows over the same model ("fixed") and over 2x the features
# ("scaled", Gustafson's weak scaling), and the one worker again beside
# a copy of its job on the other machine ("loaded"), timed in rounds. The
# CSV has the four layouts with their models' sizes, a loss per epoch and
# one timed run per round (the loaded run's losses the lone one's: the
# copy shares no shard with it, and one thread trains the same way); the scaled set has twice the rows and ids, and the same
# occurrences per feature (bench/net/feature_counts.py); the report
# prints the per-round table and draws the loss curves.
# Needs root, ip, tc, namespaces and python3; skipped otherwise.
. tests/cli/lib/common.sh

[ "$(id -u)" = 0 ] || skip "needs root for ip netns"
for t in ip tc taskset python3; do
	command -v $t >/dev/null 2>&1 || skip "$t not found"
done

O=$T/weak
export CORES=2 M=2 ROWS=6000 TEST_ROWS=1000 FEATURES=4096 NNZ=10 EPOCHS=2 \
	REPEAT=2 SYNC=1000 STALENESS=1 PARTS=weak WEAK=2 WEAK_SAME=0 \
	RATES=1gbit DELAY=100us RUN_TIMEOUT=30
sh bench/net/shaped.sh "$BOAR" "$O" >"$T/out.csv" 2>"$T/err"
rc=$?
[ $rc = 77 ] && skip "$(tail -1 "$T/err")"
[ $rc = 0 ] || { cat "$T/err"; tail -5 "$O/worker.err"; fail "shaped.sh exited $rc"; }

# col NAME ROW: the column NAME of a CSV row
col() {
	awk -F, -v name="$1" -v row="$2" 'NR == 1 { for (i = 1; i <= NF; i++)
		if ($i == name) c = i; next }
		$0 == row { print $c }' "$T/out.csv"
}
for part in weak_base:6000:4096 weak_scaled:12000:8192 weak:12000:4096 \
	weak_loaded:6000:4096; do
	p=${part%%:*} rest=${part#*:}
	row=$(grep "^$p,1gbit,${rest%%:*}," "$T/out.csv") ||
		{ cat "$T/out.csv"; fail "no $p row of ${rest%%:*} rows"; }
	[ "$(col features "$row")" = "${rest#*:}" ] ||
		fail "$p: features $(col features "$row"), not ${rest#*:}"
	n=$(col losses "$row" | tr ';' '\n' | grep -c .)
	[ "$n" = 2 ] || fail "$p: $n losses for 2 epochs"
	runs=$(col runs "$row")
	if [ "$(col epoch_reached "$row")" = - ]; then
		[ "$runs" = - ] || fail "$p: timed runs ($runs) without a target reached"
	else
		[ "$(echo "$runs" | tr ';' '\n' | grep -c .)" = 2 ] ||
			fail "$p: runs '$runs', not one per round"
	fi
done
grep -q '^single,-,12000,1,2,.*,8192,' "$T/out.csv" || fail "no single node on the scaled set"
lone=$(col losses "$(grep '^weak_base,' "$T/out.csv")")
beside=$(col losses "$(grep '^weak_loaded,' "$T/out.csv")")
[ "$lone" = "$beside" ] ||
	fail "the one worker's losses: $lone alone, $beside beside its copy"

# The scaled set: twice the rows, ids up to twice as far, its own test
# set, and the same occurrences per feature.
S=$O/data/scaled-2
[ "$(wc -l <"$S/train-12000.svm")" = 12000 ] || fail "scaled set: not 12000 rows"
[ "$(wc -l <"$S/test.svm")" = 1000 ] || fail "scaled test set: not 1000 rows"
max=$(tr ' ' '\n' <"$S/train-12000.svm" | sed -n 's/:.*//p' | sort -n | tail -1)
[ "$max" -gt 4096 ] && [ "$max" -le 8192 ] || fail "scaled ids reach $max"
python3 bench/net/feature_counts.py "$O/data/train-6000.svm:4096" \
	"$S/train-12000.svm:8192" >"$T/counts.md" || fail "feature_counts.py failed"
# columns 5 and 9 of the first table: the mean and the median count
for c in 5 9; do
	n=$(awk -F'|' -v c=$c '/^$/ { exit } /svm \|/ { print $c }' "$T/counts.md" |
		sort -u | wc -l)
	[ "$n" = 1 ] || { cat "$T/counts.md"; fail "occurrences per feature differ (column $c)"; }
done

# The report: the rounds table and the loss-curve plot.
python3 bench/net/shaped_report.py "$T/out.csv" "$T/plots" >"$T/report.md" ||
	fail "shaped_report.py failed"
grep -q 'Weak scaling, in rounds' "$T/report.md" || fail "no rounds table"
grep -q 'Wx rows, Wx features' "$T/report.md" || fail "no scaled row in the report"
grep -q 'beside W-1 copies' "$T/report.md" || fail "no loaded row in the report"
grep -q '<polyline' "$T/plots/shaped-weak-curves.svg" || fail "no loss curves drawn"
echo "weak part: $(grep -c '^weak' "$T/out.csv") layouts, scaled ids up to $max"
exit 0
