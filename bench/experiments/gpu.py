#!/usr/bin/env python3
"""gpu.py - experiment 6: the GPU engine against the GPU roofline and the CPU.

Needs a CUDA device (nvidia-smi lists one) and a build with the GPU engine.
Then: (a) bench/gpu/device_run.sh's benchmark part (the GPU engineer's
driver: roofline kernels against the engine on the same shapes), its
summary copied into this section; (b) time to accuracy on a9a and the large
synthetic set of experiment 3, boar --device gpu against --device cpu.
Skipped with a message otherwise.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib as bl  # noqa: E402

NAME, TITLE = "gpu", "6. GPU: engine against the GPU roofline and the CPU engine"


def body():
    if not bl.have("nvidia-smi"):
        raise bl.Skip("no CUDA device here (nvidia-smi is absent)")
    p = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0 or "GPU" not in p.stdout:
        raise bl.Skip("no CUDA device here (nvidia-smi -L lists none)")
    fr = bl.Fragment(NAME, TITLE)
    fr.add("Device: %s" % p.stdout.strip().splitlines()[0])
    rows = []
    train, test = bl.bundled("a9a"), bl.bundled("a9a.t")
    sets = [("a9a", train, test)]
    if not bl.TINY:
        n = bl.pick(1000000, 100000, 3000)
        sets.append(("synthetic %dk x 2^20 power law" % (n // 1000),) +
                    bl.gen_linear("peers-syn-%d" % n, n, max(1000, n // 10), 1 << 20, 30, 1))
    table = []
    for dname, tr, te in sets:
        for dev in ("cpu", "gpu"):
            walls, accs = [], []
            for rep in range(bl.REPEATS):
                try:
                    eps, wall = bl.boar_train(["--device", dev, "--epochs", "10", "--seed",
                                               str(rep + 1)], tr, te)
                except RuntimeError as e:
                    raise bl.Skip("boar --device %s failed: %s" % (dev, e))
                walls.append(wall)
                accs.append(eps[-1]["test_accuracy"])
                rows.append([dname, dev, rep, wall, sum(e["seconds"] for e in eps),
                             eps[-1]["test_accuracy"], eps[-1]["test_loss"]])
            table.append([dname, dev, bl.fmt_spread(walls), bl.fmt(bl.med(accs), 4)])
    bl.write_csv("gpu.csv", ["dataset", "device", "repeat", "wall_s", "sweep_s",
                             "test_accuracy", "test_loss"], rows)
    fr.add(bl.md_table(["data", "device", "wall s, 10 epochs", "test accuracy"], table))
    script = os.path.join(bl.ROOT, "bench", "gpu", "device_run.sh")
    if os.path.exists(script) and not bl.TINY and shutil.which("bash"):
        gout = os.path.join(bl.OUT, "gpu-bench")
        try:
            bl.run(["bash", script, "bench"] + (["quick"] if bl.QUICK else []),
                   env={"OUT": gout}, timeout=3600, check=False)
            summ = os.path.join(gout, "summary.txt")
            if os.path.exists(summ):
                with open(summ) as f:
                    fr.add("bench/gpu/device_run.sh bench:\n\n```\n%s\n```" % f.read().strip())
        except Exception as e:  # noqa
            fr.add("*bench/gpu/device_run.sh failed: %s*" % e)
    fr.write()


if __name__ == "__main__":
    bl.main_guard(NAME, TITLE, body)
