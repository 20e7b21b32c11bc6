#!/usr/bin/env python3
"""Round-trip time of one TCP connection: N one-byte ping-pongs (TCP_NODELAY)
after a few to warm up; prints "rtt_us min median p90 max" on one line.
Checks the latency that bench/net/delay_link.sh adds (no ping binary needed).

  tcp_rtt.py serve ADDR PORT          (answers one connection, then exits)
  tcp_rtt.py ping ADDR PORT [N]       (default N 200)
"""
import socket
import sys
import time


def serve(addr, port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    print("ready", flush=True)
    c, _ = ls.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        b = c.recv(1)
        if not b:
            return
        c.sendall(b)


def ping(addr, port, n):
    s = None
    for _ in range(100):  # the server may still be starting
        try:
            s = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            time.sleep(0.05)
    if s is None:
        sys.exit("tcp_rtt.py: cannot connect to %s:%d" % (addr, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    for i in range(n + 10):
        t0 = time.perf_counter_ns()
        s.sendall(b"x")
        if s.recv(1) != b"x":
            sys.exit("tcp_rtt.py: the server went away")
        if i >= 10:
            times.append((time.perf_counter_ns() - t0) / 1e3)
    s.close()
    times.sort()
    print("rtt_us %.1f %.1f %.1f %.1f" % (times[0], times[len(times) // 2],
                                          times[len(times) * 9 // 10], times[-1]))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "ping":
        ping(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 200)
    else:
        sys.exit(__doc__)
