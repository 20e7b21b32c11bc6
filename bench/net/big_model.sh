#!/bin/sh
# big_model.sh BASE_BOAR NEW_BOAR OUTDIR [ROWS]: memory and wall time of
# 2 shards + 2 workers (one thread each, --read-part, staleness 1, 3
# epochs, 10000 rows per clock) on `boar gen` data (ROWS + 10% test rows,
# 2^20 power-law ids, 30 non-zeros) hashed into 2^B weights, for the base
# build (dense workers and shards) and the new one (workers hold their
# features, shards a sparse store past 2^28 keys): B = 20 three times
# each, alternating (the wall-time ratio), B = 24 once each, and B = 32
# with the new build only (the base would need 16 GiB per shard and 64
# GiB per worker). Prints one line per run: build, B, wall seconds, test
# loss, the max RSS (MiB) of shard 0, shard 1, worker 0, worker 1.
set -e
BASE=$1
NEW=$2
OUT=$3
ROWS=${4:-200000}
mkdir -p "$OUT"
TEST=$((ROWS / 10))
if [ ! -s "$OUT/data.svm" ]; then
	"$NEW" gen --rows $((ROWS + TEST)) --features 1048576 --nnz 30 \
		--skew 1 -q -o "$OUT/all.svm"
	head -n "$ROWS" "$OUT/all.svm" >"$OUT/data.svm"
	tail -n "$TEST" "$OUT/all.svm" >"$OUT/test.svm"
fi

port() { sed -n 's/.*listening on [^ ]*:\([0-9]*\),.*/\1/p' "$1"; }
rss() { sed -n 's/^rss=//p' "$1" | awk '{ printf "%.0f", $1 / 1024 }'; }

run() { # run BOAR TAG BITS
	b=$1 tag=$2 bits=$3 d="$OUT/$2-$3"
	mkdir -p "$d"
	t0=$(date +%s.%N)
	spids=""
	for i in 0 1; do
		/usr/bin/time -f "rss=%M" "$b" serve --shard $i/2 \
			--listen 127.0.0.1:0 --staleness 1 --threads 1 \
			2>"$d/s$i.err" &
		spids="$spids $!"
	done
	while [ -z "$(port "$d/s0.err")" ] || [ -z "$(port "$d/s1.err")" ]; do
		sleep 0.05
	done
	ps="127.0.0.1:$(port "$d/s0.err"),127.0.0.1:$(port "$d/s1.err")"
	common="--hash-bits $bits --threads 1 --epochs 3 --seed 7 --ps $ps \
		--sync-every 10000 --read-part"
	/usr/bin/time -f "rss=%M" "$b" train $common --worker 1/2 \
		"$OUT/data.svm" >/dev/null 2>"$d/w1.err" &
	wpid=$!
	/usr/bin/time -f "rss=%M" "$b" train $common --worker 0/2 \
		--shutdown-servers --json --test "$OUT/test.svm" \
		"$OUT/data.svm" >"$d/w0.out" 2>"$d/w0.err"
	t1=$(date +%s.%N)
	wait $wpid
	if [ "$bits" = 32 ]; then # the model stays in the shards: stop them
		for p in $spids; do pkill -TERM -P "$p" || true; done
	fi
	wait $spids
	loss=$(sed -n 's/.*"model_sharded".*"test_loss": \([0-9.]*\).*/\1/p; s/^{"worker".*"test_loss": \([0-9.]*\).*/\1/p' "$d/w0.out" | tail -1)
	echo "$tag $bits $(echo "$t1 - $t0" | bc) $loss $(rss "$d/s0.err") $(rss "$d/s1.err") $(rss "$d/w0.err") $(rss "$d/w1.err")"
}

echo "build bits wall_s test_loss rss_shard0_MiB rss_shard1_MiB rss_worker0_MiB rss_worker1_MiB"
for k in 1 2 3; do
	run "$BASE" base 20
	run "$NEW" new 20
done
run "$BASE" base 24
run "$NEW" new 24
run "$NEW" new 32
