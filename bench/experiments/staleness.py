#!/usr/bin/env python3
"""staleness.py - experiment 5: bounded staleness on the parameter server.

On loopback, one shard (boar serve) and W workers (boar train --ps ...
--worker R/W, one thread each) train logistic regression on a9a:

 (a) loss against clock: s = 0 (bulk synchronous), 1, 3, 10 and inf (fully
     asynchronous), plain SGD (eta 0.1: the shard adds up the workers'
     pushed updates, so W workers step about W times as far as one), test log loss of worker 0's model after every epoch.
 (b) a straggler: worker 1 sleeps --throttle-ms after every clock; boar's
     default optimizer (AdaGrad); time to a target test loss (1% above the
     single-node run's best) for BSP (s=0)
     against SSP (s=3) and async, each worker 0's epochs timestamped as
     its JSON lines arrive.

Skipped with a message when this build's CLI has no `serve` command.
"""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib as bl  # noqa: E402

NAME, TITLE = "staleness", "5. Staleness: SSP on the parameter server"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_listen(port, secs=10):
    end = time.time() + secs
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def cluster_run(train, test, workers, staleness, epochs, extra, straggle_ms=0, sync=200):
    """One run; returns worker 0's epochs as (wall seconds since start, object)."""
    port = free_port()
    srv = subprocess.Popen([bl.BOAR, "serve", "--shard", "0/1", "--listen",
                            "127.0.0.1:%d" % port, "--staleness", str(staleness), "-q"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [srv]
    errs = []
    try:
        if not wait_listen(port):
            raise RuntimeError("boar serve did not listen")
        t0 = time.monotonic()
        common = ["--threads", "1", "--epochs", str(epochs), "--seed", "7", "--sync-every",
                  str(sync), "--ps", "127.0.0.1:%d" % port] + extra
        for r in range(workers - 1, -1, -1):
            args = [bl.BOAR, "train", "-q"] + common + ["--worker", "%d/%d" % (r, workers)]
            if r == 1 and straggle_ms:
                args += ["--throttle-ms", str(straggle_ms)]
            if r == 0:
                # Not --shutdown-servers: worker 0 would stop the shard
                # while a straggler still has its last push to make.
                args += ["--json", "--test", test]
            args.append(train)
            errs.append(open(os.path.join(bl.OUT, "staleness-w%d.err" % r), "w+"))
            procs.append(subprocess.Popen(args, stdout=subprocess.PIPE if r == 0 else
                                          subprocess.DEVNULL, stderr=errs[-1],
                                          universal_newlines=True))
        w0 = procs[-1]
        eps = []
        for line in w0.stdout:
            if line.startswith("{") and '"epoch"' in line:
                import json
                eps.append((time.monotonic() - t0, json.loads(line)))
        for p, f in zip(procs[1:], errs):
            if p.wait(timeout=600) != 0:
                f.seek(0)
                raise RuntimeError("a worker exited %d (s=%s): %s" % (
                    p.returncode, staleness, f.read().strip()[-500:]))
        srv.terminate()
        srv.wait(timeout=60)
        return eps
    finally:
        for f in errs:
            f.close()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def body():
    out, _, _ = bl.run([bl.BOAR, "--help"])
    if "serve" not in out:
        raise bl.Skip("the cluster is not built yet (boar has no `serve` command)")
    train, test = bl.bundled("a9a"), bl.bundled("a9a.t")
    if bl.TINY:
        train = bl.subsample(train, os.path.join(bl.DATA, "a9a-3000"), 3000)
        test = bl.subsample(test, os.path.join(bl.DATA, "a9a.t-1000"), 1000)
    epochs = bl.pick(10, 5, 2)
    workers = bl.pick(4, 4, 2)
    sgd = ["--optimizer", "sgd", "--eta", "0.1", "--eta-decay", "0.9", "--l2", "0"]
    fr = bl.Fragment(NAME, TITLE)
    rows = []
    # single node reference
    single, _ = bl.boar_train(["--epochs", str(epochs), "--seed", "7"] + sgd, train, test, 1)
    ada, _ = bl.boar_train(["--epochs", str(epochs), "--seed", "7"], train, test, 1)
    target = 1.01 * min(e["test_loss"] for e in ada)
    fr.add("a9a, one shard and %d workers of one thread each on loopback (this "
           "machine has %d cores, so workers share them), sync every 200 rows, "
           "%d epochs. Test log loss of worker 0's model after each epoch; median "
           "of %d repeats (min..max). (a) plain SGD, eta 0.1 (decay 0.9): single "
           "node, 1 thread, final test loss %.4f. (b) boar's defaults (AdaGrad): "
           "single node final test loss %.4f; target %.4f (1%% above its best)." %
           (workers, bl.CORES, epochs, bl.REPEATS, single[-1]["test_loss"],
            ada[-1]["test_loss"], target))
    svals = ["0", "1", "3", "10", "inf"]
    res = {}
    for s in svals:
        for rep in range(bl.REPEATS):
            eps = cluster_run(train, test, workers, s, epochs, sgd)
            res[(s, rep)] = eps
            for wall, e in eps:
                rows.append(["clock", s, 0, rep, e["epoch"], wall, e["test_loss"],
                             e.get("test_accuracy")])
    head = ["epoch"] + ["s=%s" % s for s in svals]
    table = []
    for ep in range(epochs):
        table.append([ep + 1] + [bl.fmt_spread([res[(s, r)][ep][1]["test_loss"]
                                                for r in range(bl.REPEATS)
                                                if len(res[(s, r)]) > ep], 4)
                                 for s in svals])
    fr.add("### (a) Test loss per epoch against the staleness bound\n\n" +
           bl.md_table(head, table))
    # straggler
    ms = bl.pick(20, 20, 5)
    table = []
    for s in ("0", "3", "inf"):
        tt, fin = [], []
        for rep in range(bl.REPEATS):
            eps = cluster_run(train, test, workers, s, epochs, [], straggle_ms=ms)
            for wall, e in eps:
                rows.append(["straggler", s, ms, rep, e["epoch"], wall, e["test_loss"],
                             e.get("test_accuracy")])
            hit = next((w for w, e in eps if e["test_loss"] <= target), None)
            tt.append(hit)
            fin.append(eps[-1][0] if eps else None)
        reached = [x for x in tt if x is not None]
        table.append(["BSP (s=0)" if s == "0" else ("SSP (s=3)" if s == "3" else "async"),
                      bl.fmt_spread(reached) + ("" if len(reached) == len(tt) else
                                                " [%d/%d reached]" % (len(reached), len(tt))),
                      bl.fmt_spread([x for x in fin if x is not None])])
    fr.add("### (b) One straggler (worker 1 sleeps %d ms per clock)\n\n%s" % (
        ms, bl.md_table(["mode", "wall s to target loss", "wall s for all epochs"], table)))
    bl.write_csv("staleness.csv", ["part", "staleness", "straggler_ms", "repeat", "epoch",
                                   "wall_s", "test_loss", "test_accuracy"], rows)
    for s in svals:
        bl.write_dat("staleness_%s.csv" % s, [[e["epoch"], e["test_loss"]]
                                              for _, e in res[(s, 0)]])
    parts = ["'plotdata/staleness_%s.csv' using 1:2 with linespoints pt 7 ps 0.6 title 's=%s'" %
             (s, s) for s in svals]
    if bl.gnuplot("staleness", "set title 'Test log loss per epoch, %d workers, SGD eta 0.1, "
                  "repeat 1'\nset xlabel 'epoch'\nset ylabel 'test log loss'\nplot %s, %f with "
                  "lines dt 2 lc 'grey' title 'single node'\n" %
                  (workers, ", ".join(parts), single[-1]["test_loss"])):
        fr.plot("staleness.png", "loss per epoch by staleness")
    fr.write()


if __name__ == "__main__":
    bl.main_guard(NAME, TITLE, body)
