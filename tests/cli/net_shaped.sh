#!/bin/sh
# The plumbing of bench/net/shaped.sh at its smallest: two "machines"
# (network namespaces, one core each) on a bridge over veth links shaped
# with tbf, 2 shards + 1 worker, a few thousand generated rows. The run
# completes, its traffic went through the shaped links (the tbf counters
# moved), and its final test loss is the one the same cluster gets on
# loopback (one worker thread: the answer does not depend on the network).
# Needs root, ip, tc and namespaces; skipped otherwise.
. tests/cli/lib/common.sh

[ "$(id -u)" = 0 ] || skip "needs root for ip netns"
for t in ip tc taskset; do
	command -v $t >/dev/null 2>&1 || skip "$t not found"
done

O=$T/shaped
export CORES=2 M=2 ROWS=6000 TEST_ROWS=1000 FEATURES=4096 NNZ=10 EPOCHS=2 \
	REPEAT=1 SYNC=1000 STALENESS=1 PARTS=strong STRONG=1 RATES=1gbit \
	DELAY=100us RUN_TIMEOUT=30
sh bench/net/shaped.sh "$BOAR" "$O" >"$T/out.csv" 2>"$T/err"
rc=$?
[ $rc = 77 ] && skip "$(tail -1 "$T/err")"
[ $rc = 0 ] || { cat "$T/err"; tail -5 "$O/worker.err"; fail "shaped.sh exited $rc"; }
row=$(grep '^strong,1gbit,6000,1,' "$T/out.csv") ||
	{ cat "$T/out.csv"; fail "no strong-scaling row"; }
shaped_loss=$(echo "$row" | cut -d, -f10)

# Every link carried traffic through its tbf.
grep -q 'qdisc tbf' "$O/tc.log" || fail "no tbf on the links"
sent=$(awk '/qdisc tbf/ { t = 1; next } t && /Sent/ { s += $2; t = 0 }
	END { print s + 0 }' "$O/tc.log")
at_least "bytes through the shaped links" "$sent" 100000

# The same cluster on loopback, same files and options.
D=$O/data
for i in 0 1; do
	"$BOAR" serve --shard $i/2 --listen 127.0.0.1:0 --staleness 1 \
		--threads 1 2>"$T/s$i.err" &
	eval "s$i=\$!"
done
trap 'kill $s0 $s1 2>/dev/null; rm -rf "$T"' EXIT
ports=""
for i in 0 1; do
	end=$(($(date +%s) + 10))
	until grep -q "listening on" "$T/s$i.err"; do
		[ "$(date +%s)" -lt "$end" ] || fail "shard $i is not listening"
		sleep 0.05
	done
	p=$(sed -n 's/.*listening on [^ ]*:\([0-9]*\),.*/\1/p' "$T/s$i.err" | head -1)
	ports="$ports${ports:+,}127.0.0.1:$p"
done
"$BOAR" train --ps "$ports" --worker 0/1 --read-part --threads 1 \
	--epochs 2 --sync-every 1000 --features 4096 -q --shutdown-servers \
	--json --test "$D/test.svm" "$D/train-6000.svm" >"$T/lo.json" ||
	fail "the loopback run failed"
wait $s0 $s1
lo_loss=$(awk '{ if (match($0, /"test_loss": [-0-9.e+]*/))
	l = substr($0, RSTART + 13, RLENGTH - 13) } END { printf "%.4f", l }' "$T/lo.json")
[ "$shaped_loss" = "$lo_loss" ] ||
	fail "final test loss: $shaped_loss over the shaped links, $lo_loss on loopback"
echo "shaped links: $(sed -n 's/.*netem: //p' "$T/err"); $sent bytes through tbf; test loss $shaped_loss both ways"
exit 0
