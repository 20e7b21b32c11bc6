#!/usr/bin/env python3
"""mf.py - experiment 4: matrix factorization, test RMSE against time and epochs.

MovieLens (the small ratings file, split 90/10 by line: every 10th rating
is held out) and synthetic low-rank ratings (boar gen --task mf: full mode
9M ratings, 20000 users x 10000 items, rank 16, the shape LIBMF's 5.0 s on
2 threads was measured on), rank 16, at 1..N threads, REPEATS times each:
boar train --task mf with its defaults (optimizer, step, biases, l2) but
--early-stop 0 (with --test the default early stopping would watch the
test set and end the curve), evaluating the test ratings after every epoch
(untimed). The measure is time to RMSE: seconds of sweeps until the test
RMSE is first within 10% of the best any run reached on that set (the
CLI's --target-rmse reports the same for one run). LIBMF runs at the
same rank, epochs and threads when `mf-train` is installed (Debian 12 has
no LIBMF package: skipped with a message otherwise).

Writes mf.csv (every epoch of every run) and mf_summary.csv.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib as bl  # noqa: E402

NAME, TITLE = "mf", "4. Matrix factorization: test RMSE against time and epochs"
RANK = 16


def datasets():
    out = []
    ml = bl.movielens_split()
    if ml:
        if bl.TINY:
            ml = (bl.subsample(ml[0], os.path.join(bl.DATA, "movielens-20k.train"), 20000),
                  bl.subsample(ml[1], os.path.join(bl.DATA, "movielens-2k.test"), 2000))
        out.append(("MovieLens small (90/10)", ml[0], ml[1]))
    else:
        bl.log("mf: no movielens-small under %s: skipped" % bl.DATASETS)
    n = bl.pick(9000000, 1000000, 20000)
    users, items = bl.pick((20000, 10000), (20000, 10000), (500, 300))
    tr, te = bl.gen_mf("mf-syn-%d" % n, n, max(2000, n // 10), users, items, RANK)
    out.append(("synthetic %s ratings, %dx%d, rank %d" % (
        "%dM" % (n // 1000000) if n >= 1000000 else "%dk" % (n // 1000), users, items, RANK),
        tr, te))
    return out


def libmf(train, test, threads, epochs):
    """LIBMF's mf-train at the same rank/epochs/threads: [(iter, va_rmse)], wall."""
    out, err, wall = bl.run(["mf-train", "-k", str(RANK), "-t", str(epochs), "-s", str(threads),
                             "-l2", "0.05", "-p", test, train, os.path.join(bl.OUT, "libmf.model")])
    pts = []
    for line in (out + err).splitlines():
        m = re.match(r"\s*(\d+)\s+([0-9.]+)\s+([0-9.]+)", line)
        if m:
            pts.append((int(m.group(1)) + 1, float(m.group(3))))
    return pts, wall


def time_to(eps, target):
    """Seconds of sweeps until the test RMSE is first <= target, or None."""
    cum = 0.0
    for e in eps:
        cum += e["seconds"]
        if e.get("test_rmse") is not None and e["test_rmse"] <= target:
            return cum
    return None


def fmt_time_to(ts):
    got = [t for t in ts if t is not None]
    if not got:
        return "not reached"
    tail = "" if len(got) == len(ts) else " (%d/%d)" % (len(got), len(ts))
    return bl.fmt_spread(got, 3) + tail


def body():
    epochs = bl.pick(20, 10, 3)
    threads = bl.thread_counts()
    rows, summary, notes = [], [], []
    fr = bl.Fragment(NAME, TITLE)
    fr.add("boar train --task mf, rank %d, its defaults otherwise (`boar train "
           "--help` names them), %d epochs, %d repeats, threads %s. *sweep*: seconds "
           "of training for all epochs (test evaluation excluded); *wall*: the whole "
           "process, reading the binary cache included; *speedup* pair by pair within "
           "a repeat. Medians (min..max)." %
           (RANK, epochs, bl.REPEATS, ",".join(map(str, threads))))
    if not bl.have("mf-train"):
        notes.append("LIBMF skipped: `mf-train` is not installed and Debian 12 has "
                     "no LIBMF package.")
    for n in notes:
        fr.add("*%s*" % n)
    plots = []
    for dname, train, test in datasets():
        bl.log("mf: %s" % dname)
        bl.warm_cache(train, test, "mf")
        res = {}
        for rep in range(bl.REPEATS):
            for t in threads:
                eps, wall = bl.boar_train(["--task", "mf", "--rank", str(RANK), "--epochs",
                                           str(epochs), "--seed", str(rep + 1), "--cache",
                                           "--early-stop", "0"],
                                          train, test, t)
                res[(t, rep)] = (eps, wall)
                cum = 0.0
                for e in eps:
                    cum += e["seconds"]
                    rows.append([dname, "boar", t, rep, e["epoch"], e["seconds"], cum,
                                 e["updates_per_sec"], e["train_loss"], e.get("test_rmse"), wall])
                if bl.have("mf-train"):
                    pts, lwall = libmf(train, test, t, epochs)
                    for ep, rmse in pts:
                        rows.append([dname, "libmf", t, rep, ep, None, None, None, None,
                                     rmse, lwall])
        table = []
        target = 1.1 * min(e["test_rmse"] for eps, _ in res.values() for e in eps)
        for t in threads:
            sweep = [sum(e["seconds"] for e in res[(t, r)][0]) for r in range(bl.REPEATS)]
            walls = [res[(t, r)][1] for r in range(bl.REPEATS)]
            sp = [sum(e["seconds"] for e in res[(1, r)][0]) /
                  sum(e["seconds"] for e in res[(t, r)][0]) for r in range(bl.REPEATS)]
            rate = [bl.med([e["updates_per_sec"] for e in res[(t, r)][0]]) / 1e6
                    for r in range(bl.REPEATS)]
            fin = [res[(t, r)][0][-1]["test_rmse"] for r in range(bl.REPEATS)]
            best = [min(e["test_rmse"] for e in res[(t, r)][0]) for r in range(bl.REPEATS)]
            tt = [time_to(res[(t, r)][0], target) for r in range(bl.REPEATS)]
            got = [x for x in tt if x is not None]
            summary.append([dname, t] + list(bl.spread(sweep)) + list(bl.spread(walls)) +
                           list(bl.spread(sp)) + list(bl.spread(rate)) + [bl.med(fin), bl.med(best)] +
                           [target, bl.med(got) if got else None])
            table.append([t, fmt_time_to(tt), bl.fmt_spread(sweep), bl.fmt_spread(walls),
                          bl.fmt_spread(rate), bl.fmt_spread(sp) if t != 1 else "1",
                          bl.fmt_spread(fin, 4), bl.fmt(bl.med(best), 4)])
        fr.add("### %s\n\n%s" % (dname, bl.md_table(
            ["threads", "s to RMSE <= %.4f" % target, "sweep s", "wall s", "M ratings/s",
             "speedup", "final test RMSE", "best test RMSE"], table)))
        tN = threads[-1]
        lines = []
        for ep in range(epochs):
            r1 = [res[(1, r)][0][ep]["test_rmse"] for r in range(bl.REPEATS)]
            rN = [res[(tN, r)][0][ep]["test_rmse"] for r in range(bl.REPEATS)]
            lines.append([ep + 1, bl.fmt_spread(r1, 4), bl.fmt_spread(rN, 4),
                          "%+.4f" % (bl.med(rN) - bl.med(r1))])
        if tN != 1:
            fr.add("<details><summary>test RMSE per epoch, 1 vs %d threads</summary>\n\n%s\n\n"
                   "</details>" % (tN, bl.md_table(["epoch", "1T", "%dT" % tN, "difference"],
                                                   lines)))
        key = "".join(c if c.isalnum() else "_" for c in dname)
        for t in threads:
            cum, pts = 0.0, []
            for e in res[(t, 0)][0]:
                cum += e["seconds"]
                pts.append([e["epoch"], cum, e["test_rmse"]])
            bl.write_dat("mf_%s_%d.csv" % (key, t), pts)
        plots.append((dname, key))
    bl.write_csv("mf.csv", ["dataset", "tool", "threads", "repeat", "epoch", "seconds",
                            "cum_seconds", "updates_per_sec", "train_loss", "test_rmse",
                            "wall_s"], rows)
    bl.write_csv("mf_summary.csv", ["dataset", "threads", "sweep_s_median", "sweep_s_min",
                                    "sweep_s_max", "wall_s_median", "wall_s_min", "wall_s_max",
                                    "speedup_median", "speedup_min", "speedup_max",
                                    "M_ratings_per_s_median", "min", "max",
                                    "final_test_rmse", "best_test_rmse", "target_rmse",
                                    "s_to_target_median"], summary)
    s = ("set terminal pngcairo size 1000,%d noenhanced font ',9'\nset output 'mf.png'\n"
         "set multiplot layout %d,2 title 'Test RMSE (repeat 1) against epochs and sweep time'\n"
         "set key inside top right\n" % (360 * len(plots), len(plots)))
    for dname, key in plots:
        for col, xl in ((1, "epoch"), (2, "seconds")):
            parts = ["'plotdata/mf_%s_%d.csv' using %d:3 with linespoints pt 7 ps 0.5 "
                     "title '%d threads'" % (key, t, col, t) for t in threads]
            s += "set title '%s'\nset xlabel '%s'\nplot %s\n" % (dname, xl, ", ".join(parts))
    s += "unset multiplot\n"
    if plots and bl.gnuplot("mf", s):
        fr.plot("mf.png", "test RMSE")
    fr.write()


if __name__ == "__main__":
    bl.main_guard(NAME, TITLE, body)
