#!/bin/sh
# Dense push and pull at 8 clients, io_uring shard against the blocking
# baseline, two bench_net binaries (tagged A and B) interleaved ROUNDS times (each row of
# each round is itself the median of 5 runs), so that a noisy shared
# machine weighs on both alike. Prints CSV rows tagged with the binary.
#
#   bench/net/dense8.sh BIN_A BIN_B [ROUNDS]   (e.g. before/after builds)
set -eu
rounds=${3:-3}
rows='io_uring,push,dense,8;io_uring-mt,push,dense,8;blocking,push,dense,8;io_uring,pull,dense,8;io_uring-mt,pull,dense,8;blocking,pull,dense,8'
for r in $(seq 1 "$rounds"); do
	for which in A B; do
		[ $which = A ] && bin=$1 || bin=$2
		BENCH_ONLY=$rows "$bin" | grep -v '^server\|^tags\|^loopback' |
			sed "s|^|$which,$r,|"
	done
done
