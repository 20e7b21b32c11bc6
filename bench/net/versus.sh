#!/bin/sh
# Before and after on one host, in one go: builds two source trees
# (CUDA=0), then runs scale16.sh (cluster against one process, time to
# the single-node loss) with each and dense8.sh (8-client dense push and
# pull, io_uring shard against the blocking baseline) with both bench_net
# binaries interleaved. Logs and CSV in OUTDIR.
#
#   bench/net/versus.sh BASE_TREE NEW_TREE OUTDIR
#
# LAYOUTS_BASE / LAYOUTS: scale16 layouts of each (see scale16.sh);
# ROUNDS: dense8 rounds (3; 0: none).
set -u
base=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
out=$3
mkdir -p "$out"
out=$(cd "$out" && pwd)
# logs (many files) in a scratch folder, packed into OUTDIR/logs.tgz
work=${WORK:-/tmp/boar-versus}
mkdir -p "$work"
j=$(( $(nproc) / 2 ))
for t in "$base" "$new"; do
	(cd "$t" && make -j"$j" CUDA=0 lib cli >"$work/build-$(basename "$t").log" 2>&1 &&
		sh "$new/bench/net/build_bench_net.sh" build "$t") &
done
wait
for t in "$base" "$new"; do
	[ -x "$t/build/boar" ] && [ -x "$t/build/bench_net" ] ||
		{ echo "build of $t failed"; tail -20 "$work/build-$(basename "$t").log"; exit 1; }
	cat "$t/COMMIT" 2>/dev/null || (cd "$t" && git log -1 --format='%h %s')
done
if [ "${ROUNDS:-3}" != 0 ]; then
	echo "== dense, 8 clients (A: base, B: new; round, mode, op, keys, clients, ...)"
	sh "$new/bench/net/dense8.sh" "$base/build/bench_net" \
		"$new/build/bench_net" "${ROUNDS:-3}" | tee "$out/dense8.csv"
fi
echo "== base: $base"
DATA=$work/data LAYOUTS=${LAYOUTS_BASE:-"2 2 2 6 10000"} \
	sh "$new/bench/net/scale16.sh" "$base/build/boar" "$work/base" |
	tee "$out/scale16-base.csv"
echo "== new: $new"
DATA=$work/data sh "$new/bench/net/scale16.sh" "$new/build/boar" "$work/new" |
	tee "$out/scale16-new.csv"
(cd "$work" && tar czf "$out/logs.tgz" build-*.log base new)
