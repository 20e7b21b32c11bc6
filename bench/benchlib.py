"""benchlib.py - what every experiment of the benchmark suite shares.

The experiments (bench/experiments/*.py) are small scripts run by bench/run.
They read their setting from the environment bench/run exports (BUILD, OUT,
QUICK, TINY, BOAR_DATASETS), run programs, and write under OUT: one CSV per
experiment, a markdown fragment NAME.md that bench/report.py puts into
summary.md, and PNG plots made with gnuplot when it is installed.

Timing rules, the same everywhere: every timing is repeated (REPEATS times)
and reported as its median with the spread min..max; a ratio (speedup,
engine over bare loop) is taken between two runs of the same repeat, and the
median of those ratios is what is reported. Python's standard library only:
the peers that need numpy/scikit-learn run in their own interpreter.
"""
import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(os.path.join(ROOT, os.environ.get("BUILD", "build")))
BOAR = os.environ.get("BOAR", os.path.join(BUILD, "boar"))
OUT = os.path.abspath(os.environ.get("OUT", os.path.join(ROOT, "bench", "results", "manual")))
QUICK = os.environ.get("QUICK", "") not in ("", "0")
TINY = os.environ.get("TINY", "") not in ("", "0")
DATA = os.path.abspath(os.environ.get("BENCH_DATA", os.path.join(OUT, "data")))
DATASETS = os.path.abspath(os.path.join(ROOT, os.environ.get("BOAR_DATASETS", "../shared/datasets")))
CORES = os.cpu_count() or 1


def mode():
    return "tiny" if TINY else ("quick" if QUICK else "full")


def pick(full, quick, tiny):
    """The value of a size or count for the current mode."""
    return tiny if TINY else (quick if QUICK else full)


REPEATS = int(os.environ.get("REPEATS", pick(3, 2, 1)))


def thread_counts():
    """1, 2, 4, ... up to the core count, which is always included."""
    ts, t = [], 1
    while t < CORES:
        ts.append(t)
        t *= 2
    ts.append(CORES)
    return ts


def log(msg):
    line = "[%s] %s" % (time.strftime("%H:%M:%S"), msg)
    print(line, file=sys.stderr, flush=True)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "log.txt"), "a") as f:
        f.write(line + "\n")


class Skip(Exception):
    """Raised to skip an experiment (or a part of one) with a reason."""


def run(cmd, timeout=3600, env=None, check=True, stdout_path=None):
    """Runs cmd (a list); returns (stdout, stderr, wall seconds)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    t0 = time.monotonic()
    out = open(stdout_path, "w") if stdout_path else subprocess.PIPE
    try:
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, timeout=timeout,
                           env=e, universal_newlines=True)
    finally:
        if stdout_path:
            out.close()
    wall = time.monotonic() - t0
    if check and p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(map(str, cmd)), p.returncode,
                                                  (p.stderr or "").strip()[-800:]))
    return (p.stdout or ""), (p.stderr or ""), wall


def json_lines(text):
    """The JSON objects of a program's stdout, one per line."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def have(prog):
    return shutil.which(prog) is not None


def med(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    """(median, min, max) of the finite values of xs."""
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    if not xs:
        return (float("nan"),) * 3
    return (statistics.median(xs), min(xs), max(xs))


def fmt(x, digits=3):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if abs(x) >= 1000:
        return "%.0f" % x
    return ("%%.%dg" % digits) % x


def fmt3(m, lo, hi, digits=3):
    """median (min..max), or the median alone when all runs agree."""
    if m is None or not math.isfinite(m):
        return "—"
    if lo == hi:
        return fmt(m, digits)
    return "%s (%s..%s)" % (fmt(m, digits), fmt(lo, digits), fmt(hi, digits))


def fmt_spread(xs, digits=3, scale=1.0):
    m, lo, hi = spread([x * scale for x in xs if x is not None])
    if not math.isfinite(m):
        return "—"
    if len([x for x in xs if x is not None and math.isfinite(x)]) == 1:
        return fmt(m, digits)
    return "%s (%s..%s)" % (fmt(m, digits), fmt(lo, digits), fmt(hi, digits))


def write_csv(name, header, rows):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow(["" if v is None else (("%.6g" % v) if isinstance(v, float) else v)
                        for v in r])
    return path


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


class Fragment:
    """The markdown an experiment contributes to summary.md."""

    def __init__(self, name, title):
        self.name, self.parts = name, ["## %s\n" % title]

    def add(self, text):
        self.parts.append(text.rstrip() + "\n")

    def plot(self, png, caption):
        if os.path.exists(os.path.join(OUT, png)):
            self.parts.append("![%s](%s)\n" % (caption, png))

    def write(self):
        with open(os.path.join(OUT, self.name + ".md"), "w") as f:
            f.write("\n".join(self.parts))


def skipped(name, title, why):
    """Records a skipped experiment: its fragment says why."""
    log("%s: skipped: %s" % (name, why))
    fr = Fragment(name, title)
    fr.add("*Skipped: %s*" % why)
    fr.write()


def gnuplot(name, script):
    """Runs a gnuplot script (saved as OUT/NAME.gp); False if gnuplot is absent
    or fails (the tables carry the numbers either way)."""
    if not have("gnuplot"):
        log("gnuplot not installed: no plot %s.png" % name)
        return False
    path = os.path.join(OUT, name + ".gp")
    head = ("set terminal pngcairo size 900,560 noenhanced font ',10'\n"
            "set output '%s.png'\nset datafile separator ','\nset key outside right\n"
            "set grid\n" % name)
    with open(path, "w") as f:
        f.write(head + script)
    p = subprocess.run(["gnuplot", path], cwd=OUT, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        log("gnuplot %s failed: %s" % (name, p.stderr.strip()[-400:]))
        return False
    return True


def write_dat(name, rows):
    """A small CSV (no header) for gnuplot, under OUT/plotdata/."""
    d = os.path.join(OUT, "plotdata")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        for r in rows:
            f.write(",".join("%.6g" % v if isinstance(v, float) else str(v) for v in r) + "\n")
    return "plotdata/" + name


# ------------------------------------------------------------------ data

def bundled(name):
    return os.path.join(ROOT, "datasets", name)


def real(rel):
    """A file of ../shared/datasets, or None when that folder is absent."""
    p = os.path.join(DATASETS, rel)
    return p if os.path.exists(p) else None


def split_lines(src, train, test, rows_train, header=False):
    """First rows_train lines to train, the rest to test (generated rows
    are independent draws, so this is a random split)."""
    with open(src) as f, open(train + ".tmp", "w") as a, open(test + ".tmp", "w") as b:
        if header:
            f.readline()
        for i, line in enumerate(f):
            (a if i < rows_train else b).write(line)
    os.replace(train + ".tmp", train)
    os.replace(test + ".tmp", test)


def gen_linear(name, rows, test_rows, dim, nnz, skew, seed=7):
    """boar gen data split into train/test under DATA; reused when present."""
    os.makedirs(DATA, exist_ok=True)
    tr = os.path.join(DATA, "%s.train.svm" % name)
    te = os.path.join(DATA, "%s.test.svm" % name)
    if os.path.exists(tr) and os.path.exists(te):
        return tr, te
    full = os.path.join(DATA, "%s.all.svm" % name)
    log("generating %s: %d+%d rows, dim %d, %d nnz/row, skew %g" %
        (name, rows, test_rows, dim, nnz, skew))
    run([BOAR, "gen", "-q", "--task", "linear", "--rows", str(rows + test_rows),
         "--features", str(dim), "--nnz", str(nnz), "--skew", str(skew),
         "--seed", str(seed), "-o", full])
    split_lines(full, tr, te, rows)
    os.remove(full)
    return tr, te


def gen_mf(name, ratings, test_ratings, users, items, rank, seed=7):
    os.makedirs(DATA, exist_ok=True)
    tr = os.path.join(DATA, "%s.train.txt" % name)
    te = os.path.join(DATA, "%s.test.txt" % name)
    if os.path.exists(tr) and os.path.exists(te):
        return tr, te
    full = os.path.join(DATA, "%s.all.txt" % name)
    log("generating %s: %d+%d ratings, %d x %d, rank %d" %
        (name, ratings, test_ratings, users, items, rank))
    run([BOAR, "gen", "-q", "--task", "mf", "--rows", str(ratings + test_ratings),
         "--users", str(users), "--items", str(items), "--rank", str(rank),
         "--seed", str(seed), "-o", full])
    split_lines(full, tr, te, ratings)
    os.remove(full)
    return tr, te


def news20_binary(positive=None):
    """20 Newsgroups as one class against the rest (+1/-1 labels), rows
    scaled to unit length (as LIBSVM's news20.binary is; the raw term counts
    reach the hundreds), written under DATA. The class is sci.space unless
    NEWS20_CLASS says otherwise."""
    src_tr = real("news20/news20_bow.train.libsvm")
    src_te = real("news20/news20_bow.test.libsvm")
    if not src_tr or not src_te:
        return None
    names = {}
    lab = real("news20/news20_bow.labels")
    if lab:
        with open(lab) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].isdigit():
                    names[parts[0]] = parts[1]
    want = positive or os.environ.get("NEWS20_CLASS", "sci.space")
    cls = next((k for k, v in names.items() if v == want), want)
    os.makedirs(DATA, exist_ok=True)
    out = []
    for src, kind in ((src_tr, "train"), (src_te, "test")):
        dst = os.path.join(DATA, "news20-%s.%s.svm" % (names.get(cls, cls), kind))
        out.append(dst)
        if os.path.exists(dst):
            continue
        with open(src) as f, open(dst + ".tmp", "w") as g:
            for line in f:
                lab_, sep, rest = line.partition(" ")
                if not lab_.strip():
                    continue
                feats = [t.split(":") for t in rest.split()]
                norm = math.sqrt(sum(float(v) ** 2 for _, v in feats)) or 1.0
                g.write(("+1" if lab_.strip() == cls else "-1") + " " +
                        " ".join("%s:%.6g" % (i, float(v) / norm) for i, v in feats) + "\n")
        os.replace(dst + ".tmp", dst)
    return tuple(out) + (names.get(cls, cls),)


def movielens_split():
    """MovieLens ratings split 90/10 by line: every 10th rating is a test
    rating (deterministic; each user keeps ~90% of its ratings)."""
    src = real("movielens-small/ratings.csv")
    if not src:
        return None
    os.makedirs(DATA, exist_ok=True)
    tr = os.path.join(DATA, "movielens.train.csv")
    te = os.path.join(DATA, "movielens.test.csv")
    if os.path.exists(tr) and os.path.exists(te):
        return tr, te
    with open(src) as f, open(tr, "w") as a, open(te, "w") as b:
        f.readline()  # header
        for i, line in enumerate(f):
            u, m, r = line.split(",")[:3]
            (b if i % 10 == 9 else a).write("%s %s %s\n" % (u, m, r))
    return tr, te


def subsample(src, dst, rows):
    """The first rows lines of src (tiny mode: a small real file)."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if not os.path.exists(dst):
        with open(src) as f, open(dst, "w") as g:
            for i, line in enumerate(f):
                if i >= rows:
                    break
                g.write(line)
    return dst


def warm_cache(train, test, task="linear"):
    """Builds the binary caches of train and test (boar train --cache) so
    that no timed run pays for the first parse."""
    run([BOAR, "train", "-q", "--task", task, "--epochs", "1", "--cache", "--test", test, train])


def boar_train(args, train, test=None, threads=None, timeout=3600):
    """boar train --json; returns (list of epoch objects, wall seconds)."""
    cmd = [BOAR, "train", "--json", "-q"] + list(args)
    if threads:
        cmd += ["--threads", str(threads)]
    if test:
        cmd += ["--test", test]
    cmd.append(train)
    out, _, wall = run(cmd, timeout=timeout)
    return json_lines(out), wall


def main_guard(name, title, body):
    """Runs an experiment's body; a Skip or an error becomes its fragment."""
    try:
        body()
    except Skip as e:
        skipped(name, title, str(e))
    except Exception as e:  # noqa: the suite goes on with the next experiment
        import traceback
        traceback.print_exc()
        skipped(name, title, "failed: %s" % e)
        sys.exit(1)
