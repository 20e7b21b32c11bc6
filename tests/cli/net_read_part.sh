#!/bin/sh
# Workers that read only their part (--read-part): worker r of W parses
# only the lines that start in its 1/W of the file's bytes, so each holds
# about 1/W of the rows, the parts add up to the file exactly, and the
# gathered model is as accurate as the single-node run (and so as the
# full-read cluster run, which net_loopback.sh holds to the same bar).
# Worker 0 says where its time went (keys, pull, ..., sweep, ... refresh,
# and reading its part, the gather).
# Also: a part reader refuses gzip input and ids beyond --features, and
# names a bad line by the file's own number.
. net/tests/lib.sh

want=$(single_accuracy)
total=$(grep -c . "$A9A")
# --features: every worker must build the whole file's model size.
feat=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, ":");
	if (kv[1] + 0 > m) m = kv[1] + 0 } } END { print m + 1 }' "$A9A")

parsed_rows() {
	sed -n 's/.*parsed \([0-9]*\) rows.*/\1/p' "$1"
}

for W in 2 3; do
	new_cluster
	serve 0 2 --staleness 2
	s0=$SPID
	serve 1 2 --staleness 2
	s1=$SPID
	pids=""
	for r in $(seq 1 $((W - 1))); do
		worker $r $W 2 --sync-every 500 --read-part --features $feat
		pids="$pids $WPID"
	done
	worker 0 $W 2 --sync-every 500 --read-part --features $feat --json \
		--shutdown-servers -m "$T/m$W.model"
	wait_ok $WPID "worker 0 of $W"
	for p in $pids; do wait_ok $p "a worker of $W"; done
	wait_ok $s0 "shard 0 (W=$W)"
	wait_ok $s1 "shard 1 (W=$W)"
	sum=0
	for r in $(seq 0 $((W - 1))); do
		n=$(parsed_rows "$T/w$r.err")
		[ -n "$n" ] || fail "W=$W: worker $r did not report the rows it parsed"
		# each part is ~1/W of the rows: within 5% of total/W
		awk -v n="$n" -v t="$total" -v w="$W" \
			'BEGIN { d = n - t / w; if (d < 0) d = -d; exit !(d < 0.05 * t / w) }' ||
			fail "W=$W: worker $r parsed $n rows, expected about $total/$W"
		sum=$((sum + n))
	done
	[ "$sum" = "$total" ] || fail "W=$W: the parts hold $sum rows, the file $total"
	[ "$(json_field "$T/w0.out" rows_parsed)" = "$(parsed_rows "$T/w0.err")" ] ||
		fail "W=$W: rows_parsed in the JSON differs from the summary line"
	[ -n "$(json_field "$T/w0.out" sweep_s)" ] &&
		grep -q "seconds in keys .*, sweep .*, refresh" "$T/w0.err" ||
		fail "W=$W: worker 0 did not say where its time went"
	# and its fixed costs: reading its part and the test set, the gather
	awk -v l="$(json_field "$T/w0.out" load_s)" \
		-v g="$(json_field "$T/w0.out" gather_s)" \
		'BEGIN { exit !(l != "" && g != "" && l > 0 && g > 0) }' ||
		fail "W=$W: no load_s or gather_s in worker 0's JSON"
	got=$(model_accuracy "$T/m$W.model")
	close_to "W=$W read-part" "$got" "$want"
	echo "W=$W: parts of $total rows OK, accuracy $got (single node $want)"
done

# Bad input: gzip cannot be entered mid-stream; ids beyond --features.
gzip -c "$A9A" >"$T/a9a.gz"
"$BOAR" train $COMMON --ps 127.0.0.1:1 --worker 0/2 --read-part \
	--features $feat "$T/a9a.gz" 2>"$T/gz.err" && fail "gzip input was read in parts"
grep -q "gzip input cannot be read in parts" "$T/gz.err" ||
	fail "gzip: unclear error: $(cat "$T/gz.err")"
"$BOAR" train $COMMON --ps 127.0.0.1:1 --worker 1/2 --read-part \
	--features 10 "$A9A" 2>"$T/feat.err" && fail "ids beyond --features were taken"
grep -q "features says the ids are below 10" "$T/feat.err" ||
	fail "--features: unclear error: $(cat "$T/feat.err")"

# A bad line deep in worker 1's part is named by the file's own line, in
# the words a single-node run on the whole file uses for it.
head -30000 "$A9A" >"$T/bad"
echo "1 3:1 abc:1" >>"$T/bad"
tail -n +30001 "$A9A" >>"$T/bad"
"$BOAR" train $COMMON --ps 127.0.0.1:1 --worker 1/2 --read-part \
	--features $feat "$T/bad" 2>"$T/bad.err" && fail "a bad line was taken"
whole="$T/bad:30001: bad index in 'abc:1': expected a positive integer before ':'"
[ "$(cat "$T/bad.err")" = "boar: $whole" ] ||
	fail "bad line in part 1: unclear error: $(cat "$T/bad.err")"
"$BOAR" train $COMMON "$T/bad" 2>"$T/single.err" && fail "single node took it"
grep -qF "boar: $whole" "$T/single.err" ||
	fail "the single node says otherwise: $(cat "$T/single.err")"
# A CSV part's first line is where its layout is read: a bad one there is
# the file's line too.
awk 'BEGIN { for (i = 0; i < 2000; i++) print i % 2 "," i "," 2 * i }' >"$T/c.csv"
size=$(wc -c <"$T/c.csv")
first=$(awk -v cut=$((size / 2)) '{ if (at >= cut) { print NR; exit } at += length($0) + 1 }' "$T/c.csv")
sed -i "${first}s/^./\"/" "$T/c.csv"
"$BOAR" train $COMMON --format csv --ps 127.0.0.1:1 --worker 1/2 --read-part \
	--features 10 "$T/c.csv" 2>"$T/csv.err" && fail "a bad CSV line was taken"
"$BOAR" train $COMMON --format csv "$T/c.csv" 2>"$T/csv1.err" && fail "single node took it"
grep -q "c.csv:$first: field 1: unterminated quote" "$T/csv.err" &&
	cmp -s "$T/csv.err" "$T/csv1.err" ||
	fail "bad CSV line $first in part 1: $(cat "$T/csv.err") (single node: $(cat "$T/csv1.err"))"
exit 0
