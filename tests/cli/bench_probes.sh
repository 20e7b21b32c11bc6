#!/bin/sh
# The many-core probes on tiny inputs (issue 9; no timing is asserted):
# bench/coherence_probe's loop variants are one algorithm at one thread
# (shared, private, prefetch-for-writing, delayed deltas, stale copies all
# train the same model there, so their progressive losses agree), its topo
# mode prints both matrices, a bad variant is refused; bench/engine_rate
# holds out a test set and prints its loss every epoch, and runs boar's
# defaults beside the eta-0.1 optimizers; bench/membw prints a row per
# number of busy cores and refuses what it cannot do.
. tests/cli/lib/common.sh

P=$BUILD/bench/coherence_probe
E=$BUILD/bench/engine_rate
[ -x "$P" ] && [ -x "$E" ] || fail "bench programs missing (make bench-bin)"

"$P" loop 3000 20 4096 0 1 shared,private,rfo,rfo1,delta:7,stale:3 >"$T/loop" ||
	fail "coherence_probe loop failed"
[ "$(grep -c 'threads=1 variant=' "$T/loop")" = 6 ] || { cat "$T/loop"; fail "not six variants"; }
n=$(sed -n 's/.*progressive loss \([0-9. ]*\)).*/\1/p' "$T/loop" | sort -u | wc -l)
[ "$n" = 1 ] || { cat "$T/loop"; fail "variants disagree at one thread"; }
sed -n 's/.*progressive loss \([0-9.]*\) \([0-9.]*\) \([0-9.]*\)).*/\1 \2 \3/p' "$T/loop" |
	head -1 | awk '{ exit !($1 > 0 && $3 < $1 && $1 < 0.7) }' ||
	{ cat "$T/loop"; fail "the loop does not learn"; }
# two threads run and stay near one thread's losses
"$P" loop 3000 20 4096 0 2 shared,delta:7 >"$T/loop2" || fail "coherence_probe at 2 threads"
grep -c 'threads=2 variant=' "$T/loop2" | grep -qx 2 || fail "no 2-thread lines"

"$P" loop 100 5 64 0 1 nope >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "unknown variant 'nope'" "$T/err" || fail "bad variant not refused"
"$P" topo >"$T/topo" || fail "coherence_probe topo failed"
ncpu=$(sed -n 's/^cpus://p' "$T/topo" | wc -w)
grep -q "^ports: adds/ns alone per CPU:" "$T/topo" && grep -q "^line latency" "$T/topo" &&
	[ "$ncpu" -ge 1 ] && [ "$(grep -Ec '^ *[0-9]+:' "$T/topo")" = $((2 * ncpu)) ] ||
	{ cat "$T/topo"; fail "topo output"; }

"$E" 4000 20 4096 1 racy 0 2 sgd,defaults 0.25 >"$T/rate" || fail "engine_rate failed"
grep -q "opt=sgd: .*test loss per epoch [0-9.]* [0-9.]*)" "$T/rate" &&
	grep -q "opt=defaults: .*test loss per epoch [0-9.]* [0-9.]*)" "$T/rate" ||
	{ cat "$T/rate"; fail "no test loss per epoch"; }
# the test rows are held out of training: fewer rows than generated
grep -q "rows=4000 " "$T/rate" && fail "test rows were trained on"
"$E" 4000 20 4096 1 racy 0 2 sgd 1.5 >/dev/null 2>&1
[ $? = 2 ] || fail "engine_rate accepted TEST_FRACTION 1.5"

# bench/membw: a row per number of busy cores (1, ... all); bad sizes and
# times refused before anything runs, a buffer it cannot have an error
# with nothing printed
B=$BUILD/bench/membw
"$B" 2 0.02 >"$T/bw" || { cat "$T/bw"; fail "membw failed"; }
rows=$(grep -c '^[0-9][0-9]*,' "$T/bw")
[ "$rows" -ge 1 ] && grep -q '^1,[0-9.]*,[0-9.]*,1.000,' "$T/bw" ||
	{ cat "$T/bw"; fail "membw output"; }
for bad in "0" "2x" "2 0" "2 -1" "2 0.1 3"; do
	"$B" $bad >/dev/null 2>&1
	[ $? = 2 ] || fail "membw accepted '$bad'"
done
"$B" 99999999999 0.01 >"$T/bw_big" 2>"$T/bw_big.err"
[ $? = 1 ] && [ ! -s "$T/bw_big" ] && grep -q "cannot" "$T/bw_big.err" ||
	fail "membw with buffers it cannot have: not a clean error"
echo "bench probes ok"
exit 0
