#!/bin/sh
# bench/net/delay_link.sh and nfq_delay add latency without netem: two
# network namespaces over a veth, each machine's input delayed 2 ms by
# nfq_delay (iptables NFQUEUE). No round trip may come back sooner than the
# 4 ms added (the daemon never releases a packet early: a bound, not a
# timing); the daemon counts the packets it held; once stopped, the link
# carries traffic again undelayed. Bad arguments exit 2.
# Needs root, ip, iptables, python3 and NFQUEUE; skipped otherwise.
. tests/cli/lib/common.sh

NFQ=$BUILD/bench/nfq_delay
[ -x "$NFQ" ] || fail "no $NFQ (make bench-bin)"
"$NFQ" >/dev/null 2>&1
[ $? = 2 ] || fail "nfq_delay without a delay: expected exit 2"
"$NFQ" -q 70000 5 >/dev/null 2>&1
[ $? = 2 ] || fail "nfq_delay -q 70000: expected exit 2"
"$NFQ" -- -5 >/dev/null 2>&1
[ $? = 2 ] || fail "nfq_delay with a negative delay: expected exit 2"

[ "$(id -u)" = 0 ] || skip "needs root for ip netns and iptables"
for t in ip python3; do
	command -v $t >/dev/null 2>&1 || skip "$t not found"
done
command -v iptables-legacy >/dev/null 2>&1 || command -v iptables >/dev/null 2>&1 ||
	skip "iptables not found"

A=nfqa$$ B=nfqb$$
cleanup() {
	for n in $A $B; do
		for p in $(ip netns pids $n 2>/dev/null); do kill $p 2>/dev/null; done
	done
	sleep 0.1
	ip netns del $A 2>/dev/null
	ip netns del $B 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ip netns add $A 2>/dev/null && ip netns add $B &&
	ip link add eth0 netns $A type veth peer name eth0 netns $B &&
	ip -n $A addr add 10.97.0.1/24 dev eth0 && ip -n $B addr add 10.97.0.2/24 dev eth0 &&
	ip -n $A link set eth0 up && ip -n $B link set eth0 up ||
	skip "cannot build two namespaces joined by a veth"

# rtt: "min median p90 max" (us) of 30 TCP round trips from A to B
port=17000
rtt() {
	port=$((port + 1))
	ip netns exec $B python3 bench/net/tcp_rtt.py serve 10.97.0.2 $port >/dev/null &
	r=$(ip netns exec $A python3 bench/net/tcp_rtt.py ping 10.97.0.2 $port 30) ||
		fail "no round trips over the veth"
	wait
	echo "$r" | cut -d' ' -f2-
}

L=$T/delay.log
for n in $A $B; do
	sh bench/net/delay_link.sh start $n 2000 "$NFQ" "$L"
	rc=$?
	[ $rc = 77 ] && skip "this host cannot queue to NFQUEUE ($(tail -1 "$L" 2>/dev/null))"
	[ $rc = 0 ] || { cat "$L"; fail "delay_link.sh start $n exited $rc"; }
done
delayed=$(rtt)
min=${delayed%% *}
awk "BEGIN { exit !($min >= 4000) }" ||
	fail "round trip $min us with 2 ms added on each side (rtt $delayed)"

for n in $A $B; do
	sh bench/net/delay_link.sh stop $n "$L" || fail "delay_link.sh stop $n"
done
sleep 0.2
grep -q 'delay 2000.0 us: [1-9][0-9]* packets' "$L" ||
	{ cat "$L"; fail "nfq_delay did not report the packets it held"; }
[ "$(grep -c 'packets' "$L")" = 2 ] || { cat "$L"; fail "expected both daemons' counters"; }
undelayed=$(rtt)
min=${undelayed%% *}
awk "BEGIN { exit !($min < 4000) }" ||
	fail "round trip $min us after the delay was removed"
exit 0
