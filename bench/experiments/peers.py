#!/usr/bin/env python3
"""peers.py - experiment 3: time to accuracy, boar against the tools people use.

On a9a, the RCV1 sample, 20 Newsgroups (one class against the rest) and a
large synthetic set (boar gen: 1M rows x 2^20 features, ~30 non-zeros per
row, power-law ids), every tool reads the same LIBSVM files and is run end
to end as a user would (read the text file, train), REPEATS times per point;
the test file is scored afterwards, untimed. The points of a curve:

  boar               boar train (its defaults: AdaGrad, racy updates, all
                     cores) for 1, 2, 3, 5, 10 epochs; scored by boar eval
  boar eta-tuned     the same with the step size eta chosen as the peers'
                     settings are: on the training file only (fit on 80%,
                     5 epochs, lowest log loss on the other 20%)
  liblinear -s 0     primal (trust-region Newton) logistic regression, with
                     a bias (-B 1); stopping tolerance -e 1 .. 0.001
  liblinear -s 7     dual coordinate descent logistic regression, -e 1 .. 0.001
                     (both: C chosen by liblinear-train -C, 5-fold cross
                     validation on the training file; on the large set, where
                     that search would take too long, by accuracy on an 80/20
                     split of the training file, C in 0.25..64)
  sklearn SGD        SGDClassifier(loss='log_loss'), alpha and averaging
                     chosen on a holdout of the training file, 1..10 passes
  vw                 Vowpal Wabbit, when `vw` is installed (Debian 12 has no
                     package: skipped with a message otherwise)

Reported per data set: each tool's best test accuracy and log loss, and the
wall time of its first point within 0.3 accuracy points of LIBLINEAR's best.
Writes peers.csv (every run) and peers_summary.csv.
"""
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib as bl  # noqa: E402

NAME, TITLE = "peers", "3. Time to accuracy: boar against LIBLINEAR, scikit-learn, VW"
TOOLS = ["boar", "boar eta-tuned", "liblinear -s 0", "liblinear -s 7", "sklearn SGD", "vw"]


def datasets():
    out = []
    if bl.TINY:
        out.append(("a9a (first 3000)",
                    bl.subsample(bl.bundled("a9a"), os.path.join(bl.DATA, "a9a-3000"), 3000),
                    bl.subsample(bl.bundled("a9a.t"), os.path.join(bl.DATA, "a9a.t-1000"), 1000),
                    True))
    else:
        out.append(("a9a", bl.bundled("a9a"), bl.bundled("a9a.t"), True))
        rcv = bl.real("rcv1-sample/rcv1_small.libsvm")
        if rcv:
            out.append(("rcv1-sample", rcv, bl.real("rcv1-sample/rcv1_small_test.libsvm"), True))
        else:
            bl.log("peers: no rcv1-sample under %s: skipped" % bl.DATASETS)
        n20 = bl.news20_binary()
        if n20:
            out.append(("news20 %s-vs-rest" % n20[2], n20[0], n20[1], True))
        else:
            bl.log("peers: no news20 under %s: skipped" % bl.DATASETS)
    rows = bl.pick(1000000, 100000, 3000)
    tr, te = bl.gen_linear("peers-syn-%d" % rows, rows, max(1000, rows // 10),
                           bl.pick(1 << 20, 1 << 20, 1 << 14), 30, 1)
    # The C search (many 5-fold cross validations) would dominate the run
    # on the large set: there C is chosen on an 80/20 holdout split.
    out.append(("synthetic %dk x 2^20 power law" % (rows // 1000) if not bl.TINY
                else "synthetic 3k x 2^14", tr, te, False))
    return out


def sklearn_python():
    """An interpreter that can import sklearn (Debian's is /usr/bin/python3)."""
    for py in [os.environ.get("SKLEARN_PYTHON"), sys.executable, "python3", "/usr/bin/python3"]:
        if not py:
            continue
        try:
            p = subprocess.run([py, "-c", "import sklearn, numpy, scipy"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if p.returncode == 0:
                return py
        except OSError:
            pass
    return None


def scores_liblinear(pred_path, test_path):
    """Accuracy and log loss from liblinear-predict -b 1 output."""
    with open(test_path) as f:
        ys = [1 if float(line.split(None, 1)[0]) > 0 else -1 for line in f if line.strip()]
    with open(pred_path) as f:
        labels = [int(float(x)) for x in f.readline().split()[1:]]
        right, loss, n = 0, 0.0, 0
        for y, line in zip(ys, f):
            parts = line.split()
            pred = 1 if float(parts[0]) > 0 else -1
            probs = dict(zip([1 if lab > 0 else -1 for lab in labels], map(float, parts[1:])))
            p = min(max(probs.get(y, 0.0), 1e-15), 1 - 1e-15)
            loss -= math.log(p)
            right += pred == y
            n += 1
    return right / n, loss / n


def holdout_split(train):
    """4 of every 5 training lines to fit, the 5th to score (under DATA)."""
    base = os.path.join(bl.DATA, os.path.basename(train))
    fit, hold = base + ".fit80", base + ".hold20"
    if not (os.path.exists(fit) and os.path.exists(hold)):
        with open(train) as f, open(fit, "w") as a, open(hold, "w") as b:
            for i, line in enumerate(f):
                (b if i % 5 == 4 else a).write(line)
    return fit, hold


def holdout_c(train, work):
    """C of {0.25 .. 64} with the best holdout accuracy (-s 0, -e 0.1): the
    cheap stand-in for the cross-validated search on large files."""
    fit, hold = holdout_split(train)
    model = os.path.join(work, "c.model")
    best, best_acc = 1.0, None
    for c in (0.25, 1, 4, 16, 64):
        bl.run(["liblinear-train", "-q", "-s", "0", "-B", "1", "-c", "%g" % c, "-e", "0.1",
                fit, model])
        bl.run(["liblinear-predict", "-b", "1", hold, model, model + ".pred"])
        acc, _ = scores_liblinear(model + ".pred", hold)
        if best_acc is None or acc > best_acc:
            best, best_acc = c, acc
    return best


def tune_boar(train):
    """The eta of {0.05 .. 2} with the lowest holdout log loss: fit on 4 of
    every 5 training lines, score the 5th (training file only)."""
    fit, hold = holdout_split(train)
    best, best_loss = None, None
    for eta in (0.05, 0.1, 0.2, 0.5, 1.0, 2.0):
        eps, _ = bl.boar_train(["--eta", str(eta), "--epochs", "5", "--seed", "1"], fit, hold)
        loss = eps[-1]["test_loss"]
        if best_loss is None or loss < best_loss:
            best, best_loss = eta, loss
    return best


def best_c(train, solver):
    out, err, _ = bl.run(["liblinear-train", "-C", "-s", str(solver), "-B", "1", train],
                         timeout=3600)
    m = re.search(r"Best C = ([0-9.eE+-]+)", out + err)
    return float(m.group(1)) if m else 1.0


def body():
    rows = []  # dataset, tool, setting, repeat, wall_s, test_accuracy, test_loss
    notes = []
    have_ll = bl.have("liblinear-train") and bl.have("liblinear-predict")
    if not have_ll:
        notes.append("LIBLINEAR skipped: liblinear-train not installed "
                     "(Debian package liblinear-tools).")
    py = sklearn_python()
    if not py:
        notes.append("scikit-learn skipped: no python3 here imports sklearn "
                     "(Debian package python3-sklearn).")
    if not bl.have("vw"):
        notes.append("Vowpal Wabbit skipped: `vw` is not installed and Debian 12 "
                     "has no vowpal-wabbit package.")
    reps = bl.REPEATS
    epochs_pts = bl.pick([1, 2, 3, 5, 10], [1, 2, 5, 10], [1, 2])
    eps_pts = {0: bl.pick([1, 0.1, 0.01, 0.001], [1, 0.1, 0.01], [0.01]),
               7: bl.pick([1, 0.1, 0.01, 0.001], [1, 0.1, 0.01], [0.1])}
    iters_pts = bl.pick([1, 2, 5, 10], [1, 2, 5], [1])
    work = os.path.join(bl.OUT, "peers-work")
    os.makedirs(work, exist_ok=True)
    chosen = {}
    for dname, train, test, search_c in datasets():
        bl.log("peers: %s" % dname)
        model = os.path.join(work, "model")
        # boar, defaults
        for ep in epochs_pts:
            for rep in range(reps):
                _, _, wall = bl.run([bl.BOAR, "train", "-q", "--epochs", str(ep),
                                     "--seed", str(rep + 1), "-m", model, train])
                out, _, _ = bl.run([bl.BOAR, "eval", "--json", "-m", model, test])
                ev = bl.json_lines(out)[-1]
                rows.append([dname, "boar", "epochs=%d" % ep, rep, wall,
                             ev["test_accuracy"], ev["test_loss"]])
        eta = tune_boar(train)
        chosen["%s|boar" % dname] = "boar eta=%g" % eta
        for ep in epochs_pts:
            for rep in range(reps):
                _, _, wall = bl.run([bl.BOAR, "train", "-q", "--epochs", str(ep), "--eta",
                                     str(eta), "--seed", str(rep + 1), "-m", model, train])
                out, _, _ = bl.run([bl.BOAR, "eval", "--json", "-m", model, test])
                ev = bl.json_lines(out)[-1]
                rows.append([dname, "boar eta-tuned", "eta=%g epochs=%d" % (eta, ep), rep, wall,
                             ev["test_accuracy"], ev["test_loss"]])
        # LIBLINEAR
        if have_ll:
            c = best_c(train, 0) if search_c else holdout_c(train, work)
            chosen["%s|liblinear" % dname] = c
            for solver in (0, 7):
                pts = eps_pts[solver]
                if not search_c and not bl.TINY:
                    # the large set: a few seconds to a minute per point
                    pts = [e for e in pts if e >= (0.01 if solver == 0 else 0.1)]
                for e in pts:
                    for rep in range(reps):
                        _, _, wall = bl.run(["liblinear-train", "-q", "-s", str(solver),
                                             "-B", "1", "-c", "%g" % c, "-e", "%g" % e,
                                             train, model])
                        pred = model + ".pred"
                        bl.run(["liblinear-predict", "-b", "1", test, model, pred])
                        acc, loss = scores_liblinear(pred, test)
                        rows.append([dname, "liblinear -s %d" % solver,
                                     "C=%g e=%g" % (c, e), rep, wall, acc, loss])
        # scikit-learn
        if py:
            out, err, _ = bl.run([py, os.path.join(bl.ROOT, "bench", "peer_sklearn.py"),
                                  train, test, "--iters", ",".join(map(str, iters_pts)),
                                  "--repeats", str(reps)], timeout=7200)
            for o in bl.json_lines(out):
                chosen["%s|sklearn" % dname] = "sklearn alpha=%g average=%s" % (
                    o["alpha"], o["average"])
                rows.append([dname, "sklearn SGD", "passes=%d" % o["iters"], o["repeat"],
                             o["load_s"] + o["fit_s"], o["test_accuracy"], o["test_loss"]])
        # Vowpal Wabbit
        if bl.have("vw"):
            for passes in iters_pts:
                for rep in range(reps):
                    cache = os.path.join(work, "vw.cache")
                    vwtr, vwte = vw_files(train, test, work)
                    if os.path.exists(cache):
                        os.remove(cache)
                    args = ["vw", "--quiet", "--loss_function", "logistic", "-d", vwtr,
                            "-f", model, "--passes", str(passes)]
                    if passes > 1:
                        args += ["-c", "--cache_file", cache, "--holdout_off"]
                    _, _, wall = bl.run(args)
                    pred = model + ".pred"
                    bl.run(["vw", "--quiet", "-t", "-i", model, "-d", vwte,
                            "--link", "logistic", "-p", pred])
                    acc, loss = scores_vw(pred, test)
                    rows.append([dname, "vw", "passes=%d" % passes, rep, wall, acc, loss])
    bl.write_csv("peers.csv", ["dataset", "tool", "setting", "repeat", "wall_s",
                               "test_accuracy", "test_loss"], rows)
    summarize(rows, notes, chosen, reps)
    shutil.rmtree(work, ignore_errors=True)


def vw_files(train, test, work):
    """VW's text format from LIBSVM (written once per data set)."""
    out = []
    for src in (train, test):
        dst = os.path.join(work, os.path.basename(src) + ".vw")
        if not os.path.exists(dst):
            with open(src) as f, open(dst, "w") as g:
                for line in f:
                    lab, _, rest = line.partition(" ")
                    g.write("%s |f %s\n" % ("1" if float(lab) > 0 else "-1", rest.strip()))
        out.append(dst)
    return out


def scores_vw(pred, test):
    with open(test) as f:
        ys = [1 if float(line.split(None, 1)[0]) > 0 else -1 for line in f if line.strip()]
    with open(pred) as f:
        ps = [float(line.split()[0]) for line in f if line.strip()]
    right = sum((p > 0.5) == (y > 0) for p, y in zip(ps, ys))
    loss = -sum(math.log(min(max(p if y > 0 else 1 - p, 1e-15), 1 - 1e-15)) for p, y in zip(ps, ys))
    return right / len(ys), loss / len(ys)


def summarize(rows, notes, chosen, reps):
    fr = bl.Fragment(NAME, TITLE)
    fr.add("Every tool reads the same LIBSVM files and is timed end to end as a "
           "user runs it (read the training file + train; wall time, median of %d "
           "runs, min..max); the test file is scored afterwards, untimed. boar "
           "runs with its defaults (AdaGrad, racy updates, all cores) for a number "
           "of epochs, and as *boar eta-tuned* with its step size chosen on the "
           "training file like the peers' settings; LIBLINEAR (`-s 0` primal Newton, `-s 7` dual coordinate "
           "descent, both with a bias `-B 1`) at several stopping tolerances `-e`; "
           "scikit-learn's SGDClassifier (log loss; single-threaded) for a number of "
           "passes, its time being reading (load_svmlight_files) + fit. *best acc*: "
           "the tool's best test accuracy over its points; *to LL best - 0.3*: wall "
           "time of its fastest point whose accuracy is within 0.3 points of "
           "LIBLINEAR's best." % reps)
    for n in notes:
        fr.add("*%s*" % n)
    settings = []
    for k, v in sorted(chosen.items()):
        d, tool = k.split("|")
        settings.append("%s: %s" % (d, ("liblinear C=%g" % v) if not isinstance(v, str)
                                    else v))
    if settings:
        fr.add("Settings chosen on the training files only (LIBLINEAR's C by "
               "`liblinear-train -C`, 5-fold cross validation, used for both solvers; "
               "on the synthetic set, where that search would take longer than all "
               "the rest, by accuracy on an 80/20 split of the training file; sklearn's alpha/averaging and boar's eta on "
               "an 80/20 split of the training file): " + "; ".join(settings) + ".")
    summary = []
    dsets = []
    for r in rows:
        if r[0] not in dsets:
            dsets.append(r[0])
    plot_rows = {}
    for d in dsets:
        pts = {}
        for r in rows:
            if r[0] == d:
                pts.setdefault((r[1], r[2]), []).append(r)
        # per point: median wall, median accuracy / loss
        points = []
        for (tool, setting), rs in pts.items():
            walls = [x[4] for x in rs]
            m, lo, hi = bl.spread(walls)
            points.append((tool, setting, m, lo, hi, bl.med([x[5] for x in rs]),
                           bl.med([x[6] for x in rs])))
        ll = [p for p in points if p[0].startswith("liblinear")]
        ll_best = max(p[5] for p in ll) if ll else None
        table = []
        for tool in TOOLS:
            tp = sorted([p for p in points if p[0] == tool], key=lambda p: p[2])
            if not tp:
                continue
            plot_rows.setdefault(d, {})[tool] = [(p[2], p[5], p[6]) for p in tp]
            best_acc = max(tp, key=lambda p: p[5])
            best_loss = min(tp, key=lambda p: p[6])
            reach = None
            if ll_best is not None:
                reach = next((p for p in tp if p[5] >= ll_best - 0.003), None)
            summary.append([d, tool, best_acc[5], best_acc[1], best_loss[6], best_loss[1],
                            reach[2] if reach else None, reach[3] if reach else None,
                            reach[4] if reach else None, reach[1] if reach else ""])
            table.append([tool, "%.4f (%s)" % (best_acc[5], best_acc[1]),
                          "%.4f (%s)" % (best_loss[6], best_loss[1]),
                          "%s (%s)" % (bl.fmt3(reach[2], reach[3], reach[4]), reach[1])
                          if reach else "not reached"])
        fr.add("### %s\n\n%s" % (d, bl.md_table(
            ["tool", "best acc (at)", "best log loss (at)",
             "to LL best - 0.3 pt: wall s (at)"], table)))
        allp = ["| %s | %s | %s | %.4f | %.4f |" % (p[0], p[1], bl.fmt3(p[2], p[3], p[4]),
                                                    p[5], p[6])
            for p in sorted(points, key=lambda p: (p[0], p[2]))]
        fr.add("<details><summary>every point</summary>\n\n| tool | setting | wall s | "
               "accuracy | log loss |\n|---|---|---:|---:|---:|\n" + "\n".join(allp) +
               "\n\n</details>")
    bl.write_csv("peers_summary.csv", ["dataset", "tool", "best_accuracy", "best_accuracy_at",
                                       "best_log_loss", "best_log_loss_at",
                                       "wall_to_liblinear_best_minus_0.3pt_median",
                                       "min", "max", "at"], summary)
    plot(fr, dsets, plot_rows)
    fr.write()


def plot(fr, dsets, plot_rows):
    tools = TOOLS
    n = len(dsets)
    if not n:
        return
    cols = 2
    rws = (n + 1) // 2
    for what, col, name in (("test accuracy", 2, "peers_accuracy"),
                            ("test log loss", 3, "peers_logloss")):
        s = ("set terminal pngcairo size 1000,%d noenhanced font ',9'\nset output '%s.png'\n"
             "set multiplot layout %d,%d title '%s against wall time (read + train, "
             "median of repeats)'\nset logscale x\nset xlabel 'seconds'\n"
             "set key inside bottom right font ',8'\n" % (rws * 380, name, rws, cols, what))
        for i, d in enumerate(dsets):
            parts = []
            for t in tools:
                pts = plot_rows.get(d, {}).get(t)
                if not pts:
                    continue
                dat = bl.write_dat("%s_%d_%s.csv" % (name, i, t.replace(" ", "_")), pts)
                parts.append("'%s' using 1:%d with linespoints pt 7 ps 0.6 title '%s'" %
                             (dat, col, t))
            if parts:
                s += "set title '%s'\nplot %s\n" % (d, ", ".join(parts))
        s += "unset multiplot\n"
        if bl.gnuplot(name, s):
            fr.plot(name + ".png", what + " against time")


if __name__ == "__main__":
    bl.main_guard(NAME, TITLE, body)
