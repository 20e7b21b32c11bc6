#!/usr/bin/env python3
"""report.py - summary.md of a benchmark run: the machine, the commit, the
headline numbers and every experiment's section (bench/experiments/*.py
each leave OUT/NAME.md), in the order bench/run ran them.
"""
import csv
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

ORDER = ["scaling", "roofline", "peers", "mf", "staleness", "gpu"]


def sh(cmd):
    try:
        p = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True, cwd=bl.ROOT)
        return p.stdout.strip()
    except OSError:
        return ""


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = "%.1f GiB" % (kb / 1024 / 1024)
    except (OSError, ValueError, IndexError):
        pass
    os_name = ""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    rel = os.path.relpath(bl.BUILD, bl.ROOT)
    flags = sh("make -n -B BUILD=%s %s/src/engine.o 2>/dev/null | grep -m1 -- ' -c src/engine/engine.c'"
               % (rel, rel))
    flags = flags.split(" -c ")[0] if flags else "(make -n gave nothing)"
    commit = sh("git rev-parse HEAD") or "(not a git checkout)"
    dirty = sh("git status --porcelain --untracked-files=no")
    started, commit_at_start = "", ""
    p = os.path.join(bl.OUT, "started.txt")
    if os.path.exists(p):
        with open(p) as f:
            for line in f.read().splitlines():
                if line.startswith("commit "):
                    commit_at_start = line[7:]
                else:
                    started += ("; " if started else "") + line
    try:
        with open("/proc/loadavg") as f:
            load_end = " ".join(f.read().split()[:3])
    except OSError:
        load_end = ""
    return [
        ("date", "%s (%s)" % (started, "finished " + time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                                  time.gmtime()))),
        ("mode", bl.mode() + ", %d repeats per timing" % bl.REPEATS),
        ("host", platform.node()),
        ("CPU", "%s, %d cores (os.cpu_count)" % (cpu, bl.CORES)),
        ("memory", mem),
        ("OS, kernel", "%s, Linux %s" % (os_name, platform.release())),
        ("compiler", sh("cc --version | head -n 1")),
        ("flags", "`%s`" % flags),
        ("commit", (commit_at_start + " at the start; " if commit_at_start and
                    not commit_at_start.startswith(commit) else "") +
         commit + (" (tree dirty: uncommitted changes to tracked files)" if dirty
                   else " (clean tree)") + "; the binaries in %s are what ran" % rel),
        ("load average", "at start: %s; at end: %s (other work on the machine makes timings "
                         "noisy: see the spreads)" % (started.split("loadavg ")[-1] if started
                                                      else "?", load_end)),
        ("tools", "; ".join(x for x in [
            sh("dpkg-query -W -f='liblinear ${Version}' liblinear-tools 2>/dev/null"),
            sh("dpkg-query -W -f='scikit-learn ${Version}' python3-sklearn 2>/dev/null"),
            sh("gnuplot --version")] if x)),
    ]


def read_csv(name):
    p = os.path.join(bl.OUT, name)
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return list(csv.DictReader(f))


def headlines():
    """A few lines that answer the questions people ask first."""
    out = []
    sc = read_csv("scaling_summary.csv")
    if sc:
        tN = max(int(r["threads"]) for r in sc)
        parts = []
        for r in sc:
            if r["method"] == "boar-racy" and int(r["threads"]) == tN and tN > 1:
                parts.append("%s %.2fx" % (r["dataset"].split(" (")[0], float(r["speedup_median"])))
        if parts:
            out.append("- Hogwild! (boar, racy) speedup at %d threads over 1: %s." %
                       (tN, ", ".join(parts)))
        lock = []
        for r in sc:
            if int(r["threads"]) == tN and r["method"] in ("aig", "rr"):
                racy = next((x for x in sc if x["dataset"] == r["dataset"] and
                             x["threads"] == r["threads"] and x["method"] == "boar-racy"), None)
                if racy and float(r["rate_M_median"]) > 0:
                    lock.append((r["dataset"].split(" (")[0], r["method"],
                                 float(racy["rate_M_median"]) / float(r["rate_M_median"])))
        if lock:
            out.append("- boar-racy's rate over the locking baselines at %d threads: %s." %
                       (tN, ", ".join("%s/%s %.1fx" % x for x in lock)))
    rf = read_csv("roofline.csv")
    if rf:
        groups = {}
        for r in rf:
            groups.setdefault((r["dim"], r["skew"], r["threads"], r["mode"]), []).append(
                float(r["ratio"]))
        meds = {k: bl.med(v) for k, v in groups.items()}
        lo = min(meds.items(), key=lambda kv: kv[1])
        out.append("- Engine rate / bare loop rate: %.2f..%.2f over %d shapes and thread counts "
                   "(lowest: dim %s, skew %s, %s threads, %s)." %
                   (lo[1], max(meds.values()), len(meds), lo[0][0], lo[0][1], lo[0][2],
                    lo[0][3]))
    ps = read_csv("peers_summary.csv")
    if ps:
        by = {}
        for r in ps:
            by.setdefault(r["dataset"], {})[r["tool"]] = r
        for d, tools in by.items():
            b = tools.get("boar")
            bt = tools.get("boar eta-tuned")
            ll = max((t for k, t in tools.items() if k.startswith("liblinear")),
                     key=lambda t: float(t["best_accuracy"]), default=None)
            if not b:
                continue
            s = "- %s: boar best test accuracy %.4f" % (d, float(b["best_accuracy"]))
            if ll:
                s += " vs LIBLINEAR %.4f (%+.2f points)" % (
                    float(ll["best_accuracy"]),
                    100 * (float(b["best_accuracy"]) - float(ll["best_accuracy"])))
                tb = b["wall_to_liblinear_best_minus_0.3pt_median"]
                tl = [t["wall_to_liblinear_best_minus_0.3pt_median"] for k, t in tools.items()
                      if k.startswith("liblinear") and t["wall_to_liblinear_best_minus_0.3pt_median"]]
                if tb and tl:
                    s += "; time to within 0.3 points of LIBLINEAR's best: boar %.3g s, " \
                         "LIBLINEAR %.3g s" % (float(tb), min(float(x) for x in tl))
            if bt:
                s += "; boar with eta tuned on the training file: %.4f" % float(bt["best_accuracy"])
                if bt["wall_to_liblinear_best_minus_0.3pt_median"]:
                    s += " (within 0.3 points in %.3g s)" % float(
                        bt["wall_to_liblinear_best_minus_0.3pt_median"])
            out.append(s + ".")
    mf = read_csv("mf_summary.csv")
    if mf:
        for r in mf:
            out.append("- MF %s, %s threads: final test RMSE %.4f, %.3g s of training (%.3g s "
                       "wall)." % (r["dataset"], r["threads"], float(r["final_test_rmse"]),
                                   float(r["sweep_s_median"]), float(r["wall_s_median"])))
    return out


def main():
    lines = ["# boar benchmark results\n",
             "Written by `make bench` (bench/run). Every timing is the median of "
             "repeated runs with the spread (min..max); ratios are taken pair by pair "
             "within one repeat. CSVs with every run and the gnuplot scripts are in "
             "this folder.\n", "## Machine and build\n",
             "| | |\n|---|---|"]
    for k, v in machine():
        lines.append("| %s | %s |" % (k, str(v).replace("|", "\\|")))
    h = headlines()
    if h:
        lines += ["", "## Headlines\n"] + h
    names = [n for n in ORDER if os.path.exists(os.path.join(bl.OUT, n + ".md"))]
    names += sorted(f[:-3] for f in os.listdir(bl.OUT)
                    if f.endswith(".md") and f[:-3] not in ORDER and f != "summary.md")
    for n in names:
        with open(os.path.join(bl.OUT, n + ".md")) as f:
            lines += ["", f.read().rstrip()]
    with open(os.path.join(bl.OUT, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
