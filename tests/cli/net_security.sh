#!/bin/sh
# Security and hostile peers:
#  - a shard refuses to listen beyond loopback without --secret-file;
#  - with a secret, a worker holding another secret, and one holding none,
#    are refused with an authentication error (exit 1, no crash);
#  - a peer sending garbage, one sending an oversized frame and one that
#    connects and says nothing are all dropped, while a real worker pair
#    trains next to them and reaches the single-node accuracy.
. net/tests/lib.sh

printf 'a shared secret of the cluster\n' >"$T/secret"
printf 'some other secret, not the one\n' >"$T/wrong"

expect_refused "non-loopback without a secret" \
	"$BOAR" serve --shard 0/1 --listen "0.0.0.0:$PORT"
expect_message "non-loopback without a secret" "secret-file"

printf 'short\n' >"$T/short"
expect_refused "too short a secret" \
	"$BOAR" serve --shard 0/1 --listen "127.0.0.1:$PORT" --secret-file "$T/short"
expect_message "too short a secret" "16 bytes"

want=$(single_accuracy)
serve 0 1 --staleness 1 --secret-file "$T/secret"
s0=$SPID

expect_refused "wrong secret" "$BOAR" train $COMMON --ps "127.0.0.1:$PORT_0" \
	--worker 0/2 --secret-file "$T/wrong" --reconnect-timeout 2 "$A9A"
expect_message "wrong secret" "secret|authenticat"
expect_refused "no secret" "$BOAR" train $COMMON --ps "127.0.0.1:$PORT_0" \
	--worker 0/2 --reconnect-timeout 2 "$A9A"
expect_message "no secret" "secret|authenticat"

# Hostile peers, kept connected while the real workers train.
python3 - "$PORT_0" >"$T/hostile.out" 2>&1 <<'PY' &
import socket, struct, sys, time
port = int(sys.argv[1])
def peer(data):
    s = socket.create_connection(("127.0.0.1", port))
    if data:
        s.sendall(data)
    return s
garbage = peer(b"GET / HTTP/1.1\r\nHost: boar\r\n\r\n" * 4)
# a valid header announcing a 1 GiB HELLO
huge = peer(struct.pack("<IBBHI", 0x52414F42, 1, 1, 0, 1 << 30) + b"x" * 100)
idle = peer(b"")
# half a header, then nothing
slow = peer(struct.pack("<IB", 0x52414F42, 1))
dropped = {}
end = time.time() + 12
while time.time() < end and len(dropped) < 4:
    for name, s in (("garbage", garbage), ("huge", huge), ("idle", idle), ("slow", slow)):
        if name in dropped:
            continue
        s.settimeout(0.05)
        try:
            d = s.recv(4096)
            while d:
                d = s.recv(4096)
            dropped[name] = time.time()
        except socket.timeout:
            pass
        except OSError:
            dropped[name] = time.time()
print("dropped:", " ".join(sorted(dropped)))
PY
hostile=$!
PIDS="$PIDS $hostile"

worker 1 2 1 --sync-every 500 --secret-file "$T/secret"
w1=$WPID
worker 0 2 1 --sync-every 500 --secret-file "$T/secret" -m "$T/auth.model"
w0=$WPID
wait_ok $w0 "authenticated worker 0"
wait_ok $w1 "authenticated worker 1"
wait $hostile
grep -q "dropped: garbage huge idle slow" "$T/hostile.out" ||
	{ cat "$T/hostile.out"; cat "$T/s0.err"; fail "not every hostile peer was dropped"; }
kill -TERM $s0
wait_ok $s0 "shard after SIGTERM"
grep -q "max_staleness_served=" "$T/s0.err" || fail "no statistics on SIGTERM"
at_most "authenticated run: max staleness served" "$(max_staleness "$T/s0.err")" 1
got=$(model_accuracy "$T/auth.model")
close_to "authenticated run next to hostile peers" "$got" "$want"
echo "authenticated run next to hostile peers: accuracy $got"
exit 0
