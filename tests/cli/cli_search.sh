#!/bin/sh
# --search: model selection over eta, l1 and l2 (LIBLINEAR's -C). The choice
# follows the data: on pure noise the strongest L2 wins (any fit hurts the
# held-out loss), on clean plentiful data none wins. The best flagged is the
# lowest score; -m saves the chosen configuration retrained on all the rows
# (the same bytes as training it directly at one thread); --test and
# --holdout judge instead of folds; ratings are judged by RMSE; bad specs and
# contradictory judges exit 2 with a message; the table goes to stderr.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read --json)"

"$BOAR" gen -q --rows 300 --features 2000 --nnz 20 --noise 0.5 --seed 3 -o "$T/noise.svm" || fail "gen"
"$BOAR" gen -q --rows 3000 --features 200 --nnz 20 --noise 0.02 --seed 3 -o "$T/clean.svm" || fail "gen"

check() { # FILE EXPECTED_L2 [N]: the best is the lowest score and has l2 EXPECTED
	python3 - "$@" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 3
assert len(rows) == n, rows
best = [r for r in rows if r["best"]]
assert len(best) == 1, rows
low = min(r["score"] for r in rows if r["status"] == "ok")
assert best[0]["score"] == low, (best, low)
assert best[0]["l2"] == float(sys.argv[2]), ("chose", best[0], "expected l2", sys.argv[2])
assert all(r["score"] == r[r["metric"]] for r in rows), rows
print("chose l2 %g, %s %.4f" % (best[0]["l2"], best[0]["metric"], best[0]["score"]))
PY
}

"$BOAR" train -q --threads 1 --epochs 5 --search l2=0,1e-3,1 --json "$T/noise.svm" >"$T/n.json" ||
	fail "search on noise exited $?"
check "$T/n.json" 1 || fail "on pure noise the strongest l2 should win"
"$BOAR" train -q --threads 1 --epochs 5 --search l2=0,1e-2,1 --json "$T/clean.svm" >"$T/c.json" ||
	fail "search on clean data exited $?"
check "$T/c.json" 0 || fail "on clean plentiful data no l2 should win"

# -m: the chosen configuration, retrained on all the rows
"$BOAR" train --threads 1 --epochs 5 --search 'eta=0.1,0.3,l2=1e-3..1:2' \
	-m "$T/best.model" "$T/noise.svm" >"$T/out" 2>"$T/err" || fail "search -m exited $?"
grep -q '^\*' "$T/err" || { cat "$T/err"; fail "no row of the table is marked best"; }
grep -q '^best: eta 0.1  l1 0  l2 1 ' "$T/err" || { cat "$T/err"; fail "not the expected best"; }
[ -s "$T/out" ] && fail "the table went to stdout"
"$BOAR" train -q --threads 1 --epochs 5 --eta 0.1 --l2 1 -m "$T/direct.model" "$T/noise.svm" ||
	fail "direct training exited $?"
cmp -s "$T/best.model" "$T/direct.model" ||
	fail "the saved model is not the chosen configuration trained on all rows"

# --test judges (and its model is kept); --holdout judges
head -n 2400 "$T/clean.svm" >"$T/tr.svm"
tail -n 600 "$T/clean.svm" >"$T/te.svm"
"$BOAR" train -q --threads 1 --epochs 5 --search l2=0,1e-2,1 --test "$T/te.svm" \
	--json -m "$T/t.model" "$T/tr.svm" >"$T/t.json" || fail "search --test exited $?"
check "$T/t.json" 0 || fail "search --test chose wrong"
"$BOAR" eval --json -m "$T/t.model" "$T/te.svm" >"$T/ev" || fail "eval exited $?"
python3 - "$T/t.json" "$T/ev" <<'PY' || fail "the model saved with --test is not the one judged"
import json, sys
best = [json.loads(l) for l in open(sys.argv[1]) if '"best": true' in l][0]
ev = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
assert abs(ev["test_loss"] - best["loss"]) < 1e-6, (ev, best)
PY
"$BOAR" train -q --epochs 5 --search l2=0,1e-2,1 --holdout 0.3 --json "$T/clean.svm" >"$T/h.json" ||
	fail "search --holdout exited $?"
check "$T/h.json" 0 || fail "search --holdout chose wrong"

# ratings: RMSE
"$BOAR" gen -q --task mf --rows 6000 --users 100 --items 60 -o "$T/r.txt" || fail "gen mf"
"$BOAR" train -q --epochs 3 --cv 3 --search 'l2=0.01..1:3' --json "$T/r.txt" >"$T/r.json" ||
	fail "search on ratings exited $?"
grep -q '"metric": "rmse"' "$T/r.json" || { cat "$T/r.json"; fail "ratings not judged by RMSE"; }

for bad in "l3=1" "l2=" "l2=1..2" "l2=0..1:3" "eta=0" "eta=1,eta=2" "1,2" "l2=1..2:1" "l2=x"; do
	expect_refused "--search $bad" "$BOAR" train --search "$bad" "$T/clean.svm"
	[ "$rc" = 2 ] || fail "--search $bad: exit $rc, expected 2"
	grep -q -- "--search" "$T/err" || { cat "$T/err"; fail "--search $bad: the message does not name it"; }
done
expect_refused "two judges" "$BOAR" train --search l2=0,1 --cv 3 --test "$T/te.svm" "$T/tr.svm"
[ "$rc" = 2 ] || fail "two judges: exit $rc, expected 2"
echo "ok"
