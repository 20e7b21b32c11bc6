#!/bin/sh
# Builds bench_net into BUILD (a build folder, relative to TREE, with
# libboar-net.a and libboar-internal.a) from the sources of TREE (default:
# the tree this script is in).
#   bench/net/build_bench_net.sh BUILD [TREE]
set -eu
cd "${2:-$(dirname "$0")/../..}"
cc -std=c11 -D_GNU_SOURCE -O2 -fopenmp -I. -Isrc -Isrc/include \
	bench/net/bench_net.c bench/net/blocking_server.c \
	"$1/libboar-net.a" "$1/libboar-internal.a" -luring -lz -lsodium -lcrypto -lm -ldl -lpthread \
	-o "$1/bench_net"
