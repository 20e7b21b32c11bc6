#!/bin/sh
# run.sh SECONDS NAME... - runs each libFuzzer harness $BUILD/fuzz_NAME
# (built by `make fuzz`, which calls this) for SECONDS, one after the
# other, starting from the seeds in tests/fuzz/corpus/NAME/ (not those of
# tests/fuzz/open/NAME/, which break a promise today: libFuzzer would stop
# at the first).
#
# New interesting inputs go to $BUILD/corpus/NAME/ (libFuzzer writes to
# the first corpus directory it is given, so the committed seeds are only
# read); crashes, leaks, timeouts and out-of-memory inputs to
# $BUILD/crashes/NAME/. Each harness gets one line: its runs, coverage and
# what it found. Exit 1 when any harness found something; a finding is
# reproduced with `$BUILD/fuzz_NAME FILE`, minimized with
# `$BUILD/fuzz_NAME -minimize_crash=1 -runs=10000 FILE`, and added to the
# corpus only once it is fixed.
#
# Environment: BUILD (default build-fuzz), FUZZ_FLAGS (more libFuzzer
# flags, e.g. -jobs=2).
set -u
secs=${1:?usage: run.sh SECONDS NAME...}
shift
BUILD=${BUILD:-build-fuzz}
found=0
for name in "$@"; do
	bin=$BUILD/fuzz_$name
	seeds=tests/fuzz/corpus/$name
	work=$BUILD/corpus/$name
	crashes=$BUILD/crashes/$name
	log=$BUILD/fuzz_$name.log
	mkdir -p "$work" "$crashes"
	before=$(ls "$crashes" | wc -l)
	# -timeout: a hang is a finding; -rss_limit_mb: so is a load that
	# takes gigabytes from a few kilobytes of input.
	# shellcheck disable=SC2086
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$crashes/" ${FUZZ_FLAGS:-} \
		"$work" "$seeds" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	new=$(ls -t "$crashes" | head -n $(($(ls "$crashes" | wc -l) - before)))
	if [ "$rc" = 0 ] && [ -z "$new" ]; then
		echo "fuzz_$name: ${secs}s, ${runs:-?} runs, $cov, nothing found"
		continue
	fi
	found=$((found + 1))
	why=$(grep -m 1 -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: broken promise|.*runtime error)' "$log")
	echo "fuzz_$name: FOUND (exit $rc) ${why:-see $log}"
	for f in $new; do
		echo "    $crashes/$f"
	done
done
echo "fuzz: $# harnesses, $found found something"
[ "$found" = 0 ]
