#!/bin/sh
# The benchmark suite's harness on tiny inputs (bench/run with TINY=1), so
# that `make bench` cannot rot unnoticed: every experiment runs or says why
# it skipped, every CSV has its rows, summary.md has its sections, the
# plots are drawn when gnuplot is installed, and the locking baselines
# compute what they claim (at one thread AIG, round robin and the lock-free
# control are the same algorithm and must agree). No timing is asserted.
. tests/cli/lib/common.sh

command -v python3 >/dev/null 2>&1 || skip "python3 is needed by the benchmark suite"

R=$T/results
TINY=1 QUICK=1 REPEATS=1 BENCH_NO_INSTALL=1 OUT=$R BUILD=$BUILD BOAR=$BOAR \
	sh bench/run >"$T/run.log" 2>&1 || {
	tail -40 "$T/run.log"
	fail "bench/run (TINY=1) exited non-zero"
}

S=$R/summary.md
[ -s "$S" ] || fail "no summary.md"
for h in "## Machine and build" "| commit |" "| CPU |" "| compiler |" "| flags |" \
	"## 1. Thread scaling" "## 2. Roofline" "## 3. Time to accuracy" \
	"## 4. Matrix factorization" "## 5. Staleness" "## 6. GPU"; do
	grep -qF "$h" "$S" || fail "summary.md lacks '$h'"
done
# A section is either results or a stated reason.
for n in scaling roofline peers mf; do
	grep -q "^\*Skipped" "$R/$n.md" && fail "experiment $n skipped: $(grep Skipped "$R/$n.md")"
done

# rows COLUMN VALUE FILE: how many data rows have COLUMN == VALUE.
rows() {
	python3 - "$@" <<'PY'
import csv, sys
col, val, path = sys.argv[1:4]
print(sum(1 for r in csv.DictReader(open(path)) if r[col] == val))
PY
}

for m in boar-racy boar-atomic aig rr free; do
	n=$(rows method "$m" "$R/scaling.csv")
	[ "$n" -gt 0 ] || fail "scaling.csv: no rows for $m"
done
[ "$(rows threads 2 "$R/scaling_summary.csv")" -gt 0 ] || [ "$(nproc)" = 1 ] ||
	fail "scaling_summary.csv: no 2-thread rows"
[ "$(rows tool boar "$R/peers.csv")" -gt 0 ] || fail "peers.csv: no boar rows"
if command -v liblinear-train >/dev/null 2>&1; then
	[ "$(rows tool "liblinear -s 0" "$R/peers.csv")" -gt 0 ] || fail "peers.csv: no LIBLINEAR rows"
fi
[ "$(rows tool boar "$R/mf.csv")" -gt 0 ] || fail "mf.csv: no rows"

python3 - "$R" <<'PY' || fail "CSV contents"
import csv, math, os, sys
R = sys.argv[1]
bad = []
for r in csv.DictReader(open(os.path.join(R, "roofline.csv"))):
    if not float(r["ratio"]) > 0:
        bad.append("roofline ratio %s" % r)
for r in csv.DictReader(open(os.path.join(R, "scaling.csv"))):
    if not math.isfinite(float(r["test_loss"])) or float(r["updates_per_sec"]) <= 0:
        bad.append("scaling row %s" % r)
# accuracy on the a9a sample is a real result, not noise: boar and LIBLINEAR
# learn (the majority class alone scores 0.76)
for r in csv.DictReader(open(os.path.join(R, "peers.csv"))):
    if r["dataset"].startswith("a9a") and r["tool"] != "sklearn SGD" and \
            float(r["test_accuracy"]) < 0.78:
        bad.append("peers: %s %s accuracy %s < 0.78" % (r["tool"], r["setting"], r["test_accuracy"]))
for r in csv.DictReader(open(os.path.join(R, "mf.csv"))):
    if not 0 < float(r["test_rmse"]) < 2:
        bad.append("mf: test RMSE %s" % r["test_rmse"])
for b in bad:
    print("unexpected:", b)
sys.exit(1 if bad else 0)
PY

if command -v gnuplot >/dev/null 2>&1; then
	for p in scaling_speedup scaling_loss roofline peers_accuracy mf; do
		[ -s "$R/$p.png" ] || fail "gnuplot is installed but $p.png was not drawn"
	done
fi

# The baselines themselves: one thread, same seed: aig (locks, never
# contended) and free run the same arithmetic and must agree exactly; rr
# applies the bias every row instead of every 64, so it agrees closely.
BL=$BUILD/bench/baseline_locking
for s in aig rr free; do
	"$BL" --scheme $s --threads 1 --epochs 3 --test datasets/a9a.t datasets/a9a \
		>"$T/$s.json" || fail "baseline_locking --scheme $s failed"
done
python3 - "$T" <<'PY' || fail "locking baselines disagree at one thread"
import json, sys
T = sys.argv[1]
last = {s: json.loads(open("%s/%s.json" % (T, s)).read().splitlines()[-1]) for s in ("aig", "rr", "free")}
a, r, f = (last[s]["test_loss"] for s in ("aig", "rr", "free"))
print("test loss after 3 epochs: aig %.6f rr %.6f free %.6f" % (a, r, f))
ok = a == f and abs(r - f) < 1e-4 and 0.30 < f < 0.40 and last["free"]["test_accuracy"] > 0.82
sys.exit(0 if ok else 1)
PY
# Two threads: lossy only through the race, same ballpark as one thread.
for s in aig rr; do
	"$BL" --scheme $s --threads 2 --epochs 3 --test datasets/a9a.t datasets/a9a \
		>"$T/$s-2.json" || fail "baseline_locking --scheme $s --threads 2 failed"
	python3 - "$T/$s-2.json" "$T/free.json" <<'PY' || fail "$s at 2 threads: test loss far from 1 thread"
import json, sys
a = json.loads(open(sys.argv[1]).read().splitlines()[-1])["test_loss"]
b = json.loads(open(sys.argv[2]).read().splitlines()[-1])["test_loss"]
print("2 threads %.4f, 1 thread %.4f" % (a, b))
sys.exit(0 if abs(a - b) < 0.03 else 1)
PY
done
"$BL" --scheme nope datasets/a9a >/dev/null 2>&1 && fail "baseline_locking accepted --scheme nope"
echo "bench harness ok"
exit 0
