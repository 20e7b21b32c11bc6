#!/usr/bin/env python3
"""shaped_report.py - tables (markdown on stdout) and SVG plots of a
bench/net/shaped.sh run: strong scaling (time to the single-node loss,
speedup over one worker on the same links), weak scaling (against one
worker on 1x, per round and as medians; where worker 0's time went; the
loss curves of the single nodes and the clusters) and the staleness sweep
with a straggler.

    bench/net/shaped_report.py SHAPED.csv [OUTDIR]   (plots: OUTDIR/shaped-*.svg)

No plotting library: the two plots are plain SVG written here.
"""
import csv
import os
import sys


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def fmt(x, d=2):
    return "-" if x is None else "%.*f" % (d, x)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def one_worker(rows, part, rate):
    for r in rows:
        if r["part"] == part and r["rate"] == rate and r["workers"] == "1":
            return num(r["to_target_s"])
    return None


def strong_table(rows, part):
    out = []
    for r in rows:
        if r["part"] != part:
            continue
        base = one_worker(rows, part, r["rate"])
        t = num(r["to_target_s"])
        out.append([r["rate"], r["workers"], r["threads"], r["epoch_reached"],
                    fmt(t), fmt(base / t if base and t else None),
                    r["final_test_loss"], fmt(num(r["pull_s"])),
                    fmt(num(r["sweep_s"])), fmt(num(r["push_s"]))])
    return table(["rate", "workers", "threads", "reached at", "to target s",
                  "speedup", "final loss", "pull wait s", "sweep s", "push s"], out)


def values(s):
    """"a;b;c" (a CSV column of several values) as floats; [] for "-"."""
    return [float(x) for x in (s or "").split(";") if x not in ("", "-")]


def spread(xs):
    return "-" if not xs else "%.2f-%.2f" % (min(xs), max(xs))


def paired(ratios):
    """Per-round ratios as "median (least-most)", or "-"."""
    return "-" if not ratios else "%.2f (%s)" % (median(ratios), spread(ratios))


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if not n else (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2)


def reach(curve, target):
    """The first epoch (1-based) whose loss is at or below target, or None."""
    return next((i + 1 for i, l in enumerate(curve) if l <= target), None)


WEAK_NAMES = {"weak_base": "1 worker, 1x", "weak": "W workers, Wx rows, same model",
              "weak_scaled": "W workers, Wx rows, Wx features",
              "weak_loaded": "1 worker, 1x, beside W-1 copies"}
ONE_WORKER = ("weak_base", "weak_loaded")


def single_of(rows, r):
    """The single-node row of a weak row's data (same rows and features)."""
    return next((s for s in rows if s["part"] == "single" and s["rows"] == r["rows"]
                 and s.get("features") == r.get("features")), None)


def short_rows(n):
    n = int(n)
    return "%gM" % (n / 1e6) if n >= 1000000 else "%gk" % (n / 1e3)


def short_dim(d):
    """"2^20" for 1048576, else the number."""
    d = int(d or 0)
    return "2^%d" % (d.bit_length() - 1) if d and d & (d - 1) == 0 else str(d)


def weak_round_table(rows):
    """The weak part in rounds (weak_base, weak, weak_scaled, weak_loaded
    rows): time to the single node's final loss, each W-worker layout
    against the 1-worker run of the same rate, alone and beside its copies
    (weak_loaded: the host's memory shared as the W-worker runs share it),
    per round (run i against run i, which ran a minute apart: their median
    is less moved by the host's drift within a call) and as medians; and
    the epoch each reaches the single node's best loss at."""
    out = []
    for r in rows:
        if r["part"] not in WEAK_NAMES:
            continue
        sn = single_of(rows, r)
        best = min(values(sn["losses"])) if sn and sn.get("losses") else None
        rb = reach(values(r.get("losses")), best) if best is not None else None
        runs = values(r.get("runs"))
        t = median(runs)
        line = [r["rate"], WEAK_NAMES[r["part"]], r["workers"], r["rows"],
                r.get("features", ""), r["target_loss"], r["epoch_reached"],
                fmt(t), spread(runs)]
        for one in ONE_WORKER:
            base = next((b for b in rows if b["part"] == one and b["rate"] == r["rate"]), None)
            bruns = values(base.get("runs")) if base else []
            bt = median(bruns)
            mine = r["part"] not in ONE_WORKER and t and bt
            line += [fmt(t / bt if mine else None),
                     paired([a / b for a, b in zip(runs, bruns)] if mine else [])]
        out.append(line + [fmt(best, 4),
                           "never" if best is not None and rb is None else str(rb or "-")])
    return table(["rate", "layout", "workers", "rows", "features", "target (final)",
                  "reached at", "to target s (median)", "runs", "ratio", "per round",
                  "ratio (loaded)", "per round (loaded)",
                  "single best", "best reached at"], out)


def weak_phase_table(rows):
    """Worker 0's seconds per epoch in the EPOCHS-epoch run of each weak layout."""
    out = []
    keys = ("keys_s", "pull_s", "local_s", "sweep_s", "push_s", "refresh_s", "seconds")
    for r in rows:
        if r["part"] not in WEAK_NAMES:
            continue
        e = len(values(r.get("losses"))) or 1
        out.append([r["rate"], WEAK_NAMES[r["part"]], r.get("features", "")]
                   + [fmt(num(r.get(k)) / e if num(r.get(k)) is not None else None, 3) for k in keys]
                   + [fmt(num(r.get("load_s"))), fmt(num(r.get("gather_s")), 3)])
    return table(["rate", "layout", "features", "keys", "pull wait", "load/store",
                  "sweep", "push", "refresh", "connect to end", "load (once)",
                  "gather (once)"], out)


def curves_table(rows):
    """The test loss after each epoch: single nodes, then the weak layouts."""
    out = []
    for r in rows:
        if r["part"] == "single" or r["part"] in WEAK_NAMES:
            c = values(r.get("losses"))
            if c:
                out.append([r["part"], r["rate"], r["workers"], r["rows"], r.get("features", "")]
                           + ["%.4f" % l for l in c])
    n = max([len(o) - 5 for o in out] or [0])
    return table(["run", "rate", "workers", "rows", "features"]
                 + ["epoch %d" % (i + 1) for i in range(n)], out)


def weak_table(rows):
    out = []
    for r in rows:
        if r["part"] not in ("weak", "weak_epochs"):
            continue
        base = one_worker(rows, "strong", r["rate"])
        t = num(r["to_target_s"])
        what = ("to the single node's loss on these rows" if r["part"] == "weak"
                else "%s epochs, the 1-worker run's" % r["epoch_reached"])
        out.append([r["rate"], r["rows"], r["workers"], what, r["epoch_reached"],
                    r["final_test_loss"], r["target_loss"], fmt(t), fmt(base),
                    fmt(t / base if base and t else None)])
    return table(["rate", "rows", "workers", "measured", "epochs", "loss",
                  "single-node loss", "time s", "1 worker on 1x s", "ratio"], out)


def stale_table(rows):
    out = []
    for r in rows:
        if r["part"] != "stale":
            continue
        out.append([r["rate"], r["staleness"], "yes" if r["straggler"] == "1" else "no",
                    r["epoch_reached"], fmt(num(r["to_target_s"])), fmt(num(r["wall_s"])),
                    r["final_test_loss"], fmt(num(r["pull_s"]))])
    return table(["rate", "staleness", "straggler", "reached at", "to target s",
                  "5-epoch wall s", "final loss", "worker 0 pull wait s"], out)


COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def svg_lines(path, title, xlabel, ylabel, series, xs_ticks, ideal=None, zero=True):
    """series: [(label, [(x, y), ...])]; a line chart with a legend; the
    y axis from 0, or (zero False) from just under the smallest y."""
    W, H, L, R, T, B = 640, 400, 60, 230, 40, 50
    pts = [p for _, s in series for p in s if p[1] is not None]
    if not pts:
        return
    xmax = max(xs_ticks)
    ys = [p[1] for p in pts]
    ymax = max(ys + ([xmax] if ideal else [])) * 1.1
    ymin = 0.0
    if not zero:
        pad = (max(ys) - min(ys)) * 0.1 or 0.01
        ymin, ymax = min(ys) - pad, max(ys) + pad
    sx = lambda x: L + (x - min(xs_ticks)) / float(xmax - min(xs_ticks) or 1) * (W - L - R)
    sy = lambda y: H - B - (y - ymin) / (ymax - ymin) * (H - T - B)
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="14">%s</text>' % (L, title),
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, W - R, H - B),
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T, L, H - B),
         '<text x="%d" y="%d" text-anchor="middle">%s</text>' % ((L + W - R) / 2, H - 12, xlabel),
         '<text x="15" y="%d" transform="rotate(-90 15 %d)" text-anchor="middle">%s</text>'
         % ((T + H - B) / 2, (T + H - B) / 2, ylabel)]
    for x in xs_ticks:
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (sx(x), H - B + 16, x))
    for i in range(5):
        y = ymin + (ymax - ymin) * i / 4
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.4g</text>' % (L - 5, sy(y) + 4, y))
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, sy(y), W - R, sy(y)))
    if ideal:
        o.append('<polyline fill="none" stroke="#999" stroke-dasharray="4" points="%s"/>'
                 % " ".join("%.1f,%.1f" % (sx(x), sy(x)) for x in xs_ticks))
        series = series + [("ideal", [])]
    for k, (label, s) in enumerate(series):
        c = "#999" if label == "ideal" else COLORS[k % len(COLORS)]
        s = [p for p in s if p[1] is not None]
        if s:
            o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                     % (c, " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in s)))
            o += ['<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (sx(x), sy(y), c) for x, y in s]
        y = T + 10 + 18 * k
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                 % (W - R + 10, y, W - R + 30, y, c))
        o.append('<text x="%d" y="%d">%s</text>' % (W - R + 35, y + 4, label))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def read_runs(path):
    """[(variant, rows)]: one run's CSV, or several runs' lines each
    prefixed with its variant ("LANES=2,part,rate,..."), tables only."""
    with open(path) as f:
        lines = [l for l in f if l.strip() and not l.startswith("#")]
    if not lines or lines[0].startswith("part,"):
        return [(None, list(csv.DictReader(lines)))]
    groups = {}
    for l in lines:
        v, rest = l.split(",", 1)
        groups.setdefault(v, []).append(rest)
    return [(v, list(csv.DictReader(ls))) for v, ls in groups.items()]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: shaped_report.py SHAPED.csv [OUTDIR]")
    runs = read_runs(sys.argv[1])
    if len(runs) > 1 or runs[0][0]:
        for v, rows in runs:
            print("## %s\n" % v)
            report(rows, None)
        return
    report(runs[0][1], sys.argv[2] if len(sys.argv) > 2 else None)


def report(rows, out):
    for r in rows:
        if r["part"] == "single":
            print("Single node, %s rows%s: final test loss %s (the target), reached at epoch %s, "
                  "%s s to it (runs %s).\n" % (r["rows"], ", %s features" % r["features"]
                                               if r.get("features") else "",
                                               r["target_loss"], r["epoch_reached"],
                                               fmt(num(r["to_target_s"])),
                                               spread(values(r.get("runs")))))
    for part, name in (("strong", "Strong scaling"), ("strong1", "Strong scaling, one thread per worker")):
        if any(r["part"] == part for r in rows):
            print("### %s\n\n%s" % (name, strong_table(rows, part)))
    if any(r["part"] in WEAK_NAMES for r in rows):
        print("### Weak scaling, in rounds\n\n" + weak_round_table(rows))
        print("### Where worker 0's time went (seconds per epoch, EPOCHS-epoch run)\n\n"
              + weak_phase_table(rows))
    if any(r["part"] in ("weak", "weak_epochs") for r in rows) and \
            not any(r["part"] == "weak_base" for r in rows):
        print("### Weak scaling\n\n" + weak_table(rows))
    if any(r.get("losses") for r in rows):
        print("### Test loss after each epoch\n\n" + curves_table(rows))
    if any(r["part"] == "stale" for r in rows):
        print("### Staleness sweep, last worker a straggler\n\n" + stale_table(rows))
    if not out:
        return
    os.makedirs(out, exist_ok=True)
    series, ticks = [], set()
    for part in ("strong", "strong1"):
        for rate in sorted({r["rate"] for r in rows if r["part"] == part}):
            base = one_worker(rows, part, rate)
            s = []
            for r in rows:
                if r["part"] == part and r["rate"] == rate:
                    t = num(r["to_target_s"])
                    w = int(r["workers"])
                    ticks.add(w)
                    s.append((w, base / t if base and t else None))
            th = next(r["threads"] for r in rows if r["part"] == part)
            series.append(("%s, %s thr" % (rate, th), s))
    if series:
        svg_lines(os.path.join(out, "shaped-strong.svg"),
                  "Speedup to the single-node loss over 1 worker, same links",
                  "workers", "speedup", series, sorted(ticks), ideal=True)
    # the curves of the scaled comparison (the fixed model's loss is on
    # another level): single nodes but the fixed model's, 1x and scaled
    fixed = {(r["rows"], r.get("features")) for r in rows if r["part"] == "weak"}
    rate0 = next((x["rate"] for x in rows if x["part"] in WEAK_NAMES), None)
    cs = [r for r in rows if r.get("losses") and
          ((r["part"] == "single" and (r["rows"], r.get("features")) not in fixed) or
           (r["part"] in ("weak_base", "weak_scaled") and r["rate"] == rate0))]
    if cs:
        lines = [("%s, %s rows, %s" % ("single node" if r["part"] == "single" else
                                       "%s worker%s" % (r["workers"], "s" * (r["workers"] != "1")),
                                       short_rows(r["rows"]), short_dim(r.get("features"))),
                  [(i + 1, l) for i, l in enumerate(values(r["losses"]))]) for r in cs]
        svg_lines(os.path.join(out, "shaped-weak-curves.svg"),
                  "Test loss after each epoch (single nodes; weak layouts at %s)"
                  % next((r["rate"] for r in cs if r["rate"] != "-"), "-"),
                  "epoch", "test loss", lines,
                  list(range(1, max(len(s) for _, s in lines) + 1)), zero=False)
    st = [r for r in rows if r["part"] == "stale" and r["straggler"] == "1"]
    if st:
        xs = list(range(len(st)))
        svg_lines(os.path.join(out, "shaped-stale.svg"),
                  "Staleness sweep, one straggler (x: s = %s)" % ", ".join(r["staleness"] for r in st),
                  "staleness bound (index)", "seconds",
                  [("to target", [(i, num(r["to_target_s"])) for i, r in zip(xs, st)]),
                   ("worker 0 pull wait", [(i, num(r["pull_s"])) for i, r in zip(xs, st)])],
                  xs)


if __name__ == "__main__":
    main()
