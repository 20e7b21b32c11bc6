#!/bin/sh
# Builds the libFuzzer harness with clang-14 and fuzzes the frame decoder for
# SECONDS (default 60), starting from tests/fuzz/corpus. New interesting
# inputs land in a scratch corpus; copy the small ones you want to keep.
set -eu
secs=${1:-60}
out=${BUILD:-build}/fuzz
mkdir -p "$out/corpus"
clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -I. -Isrc -Isrc/include \
	tests/fuzz/fuzz_wire.c net/wire.c -o "$out/fuzz_wire"
"$out/fuzz_wire" -max_total_time="$secs" -max_len=4096 "$out/corpus" tests/fuzz/corpus
