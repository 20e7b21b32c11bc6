#!/bin/sh
# Shards and workers in separate network namespaces joined by veth pairs,
# the shards listening on 0.0.0.0 (so a shared secret is required), one
# worker's link slowed with tc netem delay (or, where the kernel lacks
# netem, a tbf rate limit): training finishes, no pull is served staler
# than s = 1, and the accuracy is within 0.5 points of the single-node run.
# Needs root and `ip`; skipped otherwise.
. net/tests/lib.sh

[ "$(id -u)" = 0 ] || skip "needs root for ip netns"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) not found"
command -v tc >/dev/null 2>&1 || skip "tc (iproute2) not found"

n=bn$$
ps=${n}p
wa=${n}a
wb=${n}b
NETNS_CLEANUP="ip netns del $ps 2>/dev/null; ip netns del $wa 2>/dev/null; ip netns del $wb 2>/dev/null"
ip netns add $ps || skip "cannot create network namespaces here"
ip netns add $wa && ip netns add $wb || fail "ip netns add"
for ns in $ps $wa $wb; do ip -n $ns link set lo up; done
# ps <-> wa on 10.77.1.0/24, ps <-> wb on 10.77.2.0/24
ip link add ${n}pa type veth peer name ${n}ap || skip "no veth support"
ip link add ${n}pb type veth peer name ${n}bp || fail "veth"
ip link set ${n}pa netns $ps
ip link set ${n}pb netns $ps
ip link set ${n}ap netns $wa
ip link set ${n}bp netns $wb
ip -n $ps addr add 10.77.1.1/24 dev ${n}pa
ip -n $ps addr add 10.77.2.1/24 dev ${n}pb
ip -n $wa addr add 10.77.1.2/24 dev ${n}ap
ip -n $wb addr add 10.77.2.2/24 dev ${n}bp
for pair in "$ps ${n}pa" "$ps ${n}pb" "$wa ${n}ap" "$wb ${n}bp"; do
	set -- $pair
	ip -n $1 link set $2 up
done

# The straggler's link, both directions.
slow=""
for dev in "$wb ${n}bp" "$ps ${n}pb"; do
	set -- $dev
	if ip netns exec $1 tc qdisc add dev $2 root netem delay 20ms 2>/dev/null; then
		slow="netem delay 20ms"
	elif ip netns exec $1 tc qdisc add dev $2 root tbf rate 400kbit burst 4kb latency 2s 2>/dev/null; then
		slow="tbf 400kbit (no netem in this kernel)"
	fi
done
[ -n "$slow" ] || slow="none available: --throttle-ms 10"

# A refused connection proves the link carries packets (no ping needed).
ip netns exec $wa python3 -c '
import socket, sys
try:
    socket.create_connection(("10.77.1.1", 9), 3)
except ConnectionRefusedError:
    sys.exit(0)
except OSError:
    sys.exit(1)
' || fail "the veth link does not carry packets"

printf 'a shared secret of the namespaced cluster\n' >"$T/secret"
want=$(single_accuracy)

for i in 0 1; do
	ip netns exec $ps "$BOAR" serve --shard $i/2 --listen "0.0.0.0:$((PORT + i))" \
		--staleness 1 --secret-file "$T/secret" >"$T/s$i.out" 2>"$T/s$i.err" &
	eval "s$i=\$!"
	PIDS="$PIDS $!"
done
sleep 0.5
throttle=""
case $slow in none*) throttle="--throttle-ms 10" ;; esac
ip netns exec $wb "$BOAR" train $COMMON --sync-every 500 $throttle \
	--ps "10.77.2.1:$PORT,10.77.2.1:$((PORT + 1))" --worker 1/2 \
	--secret-file "$T/secret" "$A9A" >"$T/w1.out" 2>"$T/w1.err" &
w1=$!
PIDS="$PIDS $w1"
ip netns exec $wa "$BOAR" train $COMMON --sync-every 500 \
	--ps "10.77.1.1:$PORT,10.77.1.1:$((PORT + 1))" --worker 0/2 \
	--secret-file "$T/secret" --shutdown-servers -m "$T/ns.model" "$A9A" \
	>"$T/w0.out" 2>"$T/w0.err" &
w0=$!
PIDS="$PIDS $w0"
wait_ok $w0 "worker 0 (namespace $wa)"
wait_ok $w1 "worker 1 (namespace $wb, slowed)"
wait_ok $s0 "shard 0"
wait_ok $s1 "shard 1"
grep -q "from 10.77.2.2" "$T/s0.err" || { cat "$T/s0.err"; fail "worker 1 did not come over the veth link"; }
st=$(max_staleness "$T/s0.err" "$T/s1.err")
at_most "namespaces: max staleness served" "$st" 1
got=$(model_accuracy "$T/ns.model")
close_to "namespaces" "$got" "$want"
echo "namespaces, straggler link: $slow; accuracy $got, max staleness served $st"
exit 0
