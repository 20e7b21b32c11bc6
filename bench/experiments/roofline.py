#!/usr/bin/env python3
"""roofline.py - experiment 2: the engine's rate over the bare loop's.

The same measurement as bench/roofline.sh (the lead's script), kept as a
CSV: for dimension 2^20 and 2^26, uniform and power-law ids, every thread
count and both update policies, runs the bare SGD loop
(bench/tools/roofline.c, built as $BUILD/bench/roofline) and the engine on
the same shape (bench/engine_rate.c: boar_generate + boar_train, plain SGD,
best of 3 epochs) back to back, REPEATS times. The ratio engine/bare is
taken within each pair; its median and spread are reported.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib as bl  # noqa: E402

NAME, TITLE = "roofline", "2. Roofline ratio: engine rate over the bare loop"
RATE = re.compile(r": ([0-9.]+) M nnz-updates")


def rate(text):
    m = RATE.search(text)
    if not m:
        raise RuntimeError("no rate in: %s" % text.strip()[-300:])
    return float(m.group(1))


def body():
    roof = os.path.join(bl.BUILD, "bench", "roofline")
    eng = os.path.join(bl.BUILD, "bench", "engine_rate")
    for p in (roof, eng):
        if not os.path.exists(p):
            raise bl.Skip("%s is not built (make BUILD=... bench-bin)" % p)
    rows = int(os.environ.get("ROOFLINE_ROWS", bl.pick(1000000, 300000, 20000)))
    nnz = int(os.environ.get("ROOFLINE_NNZ", 40))
    bits_list = bl.pick([20, 26], [20, 26], [16])
    modes = ["racy", "atomic"]
    threads = bl.thread_counts()
    rows_csv, table = [], []
    for bits in bits_list:
        for skew in (0, 1):
            for t in threads:
                for mode in modes:
                    bare, engine, ratio, ada, ada_ratio = [], [], [], [], []
                    for rep in range(bl.REPEATS):
                        shape = [str(rows), str(nnz), str(1 << bits), str(t)]
                        o1, _, _ = bl.run([roof] + shape + ["cas" if mode == "atomic" else "racy",
                                                             str(skew)])
                        o2, _, _ = bl.run([eng] + shape + [mode, str(skew)])
                        b, e = rate(o1), rate(o2)
                        a = float("nan")
                        if mode == "racy":  # AdaGrad, the default, against SGD
                            o3, _, _ = bl.run([eng] + shape + [mode, str(skew), "3", "adagrad"])
                            a = rate(o3)
                            ada.append(a)
                            ada_ratio.append(a / e)
                        bare.append(b)
                        engine.append(e)
                        ratio.append(e / b)
                        rows_csv.append(["2^%d" % bits, skew, t, mode, rep, b, e, e / b, a])
                    bl.log("roofline: 2^%d skew %d %dT %s: bare %.0f engine %.0f ratio %.3f" %
                           (bits, skew, t, mode, bl.med(bare), bl.med(engine), bl.med(ratio)))
                    table.append(["2^%d" % bits, "power law" if skew else "uniform", t, mode,
                                  bl.fmt_spread(bare), bl.fmt_spread(engine),
                                  bl.fmt_spread(ratio),
                                  bl.fmt_spread(ada) if ada else "-",
                                  bl.fmt_spread(ada_ratio) if ada else "-",
                                  bl.med(ratio)])
    bl.write_csv("roofline.csv", ["dim", "skew", "threads", "mode", "repeat", "bare_M_per_s",
                                  "engine_M_per_s", "ratio", "adagrad_M_per_s"], rows_csv)
    fr = bl.Fragment(NAME, TITLE)
    fr.add("%d rows x %d non-zeros per row, logistic loss, plain SGD. *bare*: "
           "bench/tools/roofline.c, one pass with nothing around it (best of 3); "
           "*engine*: boar_train on the same shape (shuffled order, bias, "
           "progressive loss; best of 3 epochs); *AdaGrad*: the engine with boar's "
           "default optimizer on the same data (racy rows). M nnz-updates/s, median "
           "of %d pairs (min..max); ratios are taken within each pair. The goals "
           "(issue 9): engine / bare at least 0.9, AdaGrad / SGD at least 0.8."
           % (rows, nnz, bl.REPEATS))
    fr.add(bl.md_table(["dim", "ids", "threads", "update", "bare (M/s)", "engine (M/s)",
                        "engine / bare", "AdaGrad (M/s)", "AdaGrad / SGD"],
                       [r[:9] for r in table]))
    below = [r for r in table if r[9] < 0.9]
    if below:
        fr.add("Below 0.9: " + "; ".join("%s %s %dT %s (%.3f)" % (r[0], r[1], r[2], r[3], r[9])
                                         for r in below) + ".")
    else:
        fr.add("Every shape and thread count is at 0.9 of the bare loop or above.")
    pts = [[i, r[9]] for i, r in enumerate(table)]
    dat = bl.write_dat("roofline_ratio.csv", pts)
    labels = ", ".join('"%s %s %dT %s" %d' % (r[0], "pl" if r[1] == "power law" else "u",
                                               r[2], r[3], i) for i, r in enumerate(table))
    if bl.gnuplot("roofline", "set title 'Engine rate / bare loop rate (median of pairs)'\n"
                  "set style fill solid 0.6\nset boxwidth 0.7\nset xtics (%s) rotate by -45\n"
                  "set yrange [0:1.3]\nset ylabel 'ratio'\nset xrange [-0.6:%f]\nset key off\n"
                  "plot '%s' using 1:2 with boxes, 0.9 with lines dt 2 lc 'red'\n" %
                  (labels, len(table) - 0.4, dat)):
        fr.plot("roofline.png", "engine / bare loop")
    fr.write()


if __name__ == "__main__":
    bl.main_guard(NAME, TITLE, body)
