#!/bin/sh
# Added latency on a namespace's link where the kernel has no netem (and no
# fq for earliest-departure-time pacing): every packet coming in on DEV is
# queued (iptables NFQUEUE, raw PREROUTING) to nfq_delay, which accepts it
# DELAY_US later. Delaying each machine's input by D adds 2 D to a round
# trip between two machines. Needs root, iptables (legacy or nft) and
# CONFIG_NETFILTER_NETLINK_QUEUE.
#
#   bench/net/delay_link.sh start NS DELAY_US NFQ_DELAY LOG [DEV]
#   bench/net/delay_link.sh stop NS LOG
#
# start returns once the rule is in (exit 77 with a reason when this host
# cannot: no iptables, no NFQUEUE); stop removes the rule and ends the
# daemon, whose counters (packets, lateness) go to LOG.
set -u
IPT=${IPTABLES:-}
if [ -z "$IPT" ]; then
	for t in iptables-legacy iptables; do
		command -v $t >/dev/null && { IPT=$t; break; }
	done
fi
[ -n "$IPT" ] || { echo "delay_link.sh: no iptables" >&2; exit 77; }
# ready NS LOG: the daemon's pid, written once its queue is bound
ready() { echo "$(dirname "$2")/nfq_delay-$1.pid"; }

case "${1:-}" in
start)
	[ $# -ge 5 ] || { echo "usage: delay_link.sh start NS DELAY_US NFQ_DELAY LOG [DEV]" >&2; exit 2; }
	ns=$2 us=$3 nfq=$4 log=$5 dev=${6:-eth0}
	r=$(ready "$ns" "$log")
	rm -f "$r"
	ip netns exec "$ns" "$nfq" -r "$r" ${NFQ_SPIN_US:+-s "$NFQ_SPIN_US"} "$us" 2>>"$log" &
	n=0
	while [ ! -s "$r" ]; do
		kill -0 $! 2>/dev/null || { echo "delay_link.sh: nfq_delay did not start in $ns (see $log)" >&2; exit 77; }
		n=$((n + 1))
		[ $n -lt 100 ] || { kill $!; echo "delay_link.sh: nfq_delay not ready in $ns" >&2; exit 1; }
		sleep 0.05
	done
	ip netns exec "$ns" "$IPT" -t raw -A PREROUTING -i "$dev" \
		-j NFQUEUE --queue-num 0 2>>"$log" || {
		kill "$(cat "$r")"
		echo "delay_link.sh: iptables cannot queue to NFQUEUE in $ns (see $log)" >&2
		exit 77
	}
	;;
stop)
	[ $# -ge 3 ] || { echo "usage: delay_link.sh stop NS LOG" >&2; exit 2; }
	ns=$2 r=$(ready "$2" "$3")
	ip netns exec "$ns" "$IPT" -t raw -F PREROUTING 2>/dev/null
	[ -s "$r" ] && kill "$(cat "$r")" 2>/dev/null
	rm -f "$r"
	;;
*)
	echo "usage: delay_link.sh start|stop NS ..." >&2
	exit 2
	;;
esac
