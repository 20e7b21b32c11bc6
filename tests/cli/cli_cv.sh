#!/bin/sh
# --cv K: K-fold cross-validation (LIBLINEAR -v, LIBMF -v). Every row is
# tested once: the folds' rows add up to the file's; each fold's metrics
# and their mean +- sd are printed (JSON objects with --json); at one
# thread the folds are the same run to run; ratings work too; --cv with
# -m, --test or K = 1 is refused.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read --json)"

"$BOAR" train --quiet --threads 1 --cv 4 --epochs 2 --json datasets/a9a >"$T/j" ||
	fail "--cv exited $?"
python3 - "$T/j" <<'PY' || fail "--cv output is wrong"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
folds, summary = lines[:-1], lines[-1]
assert len(folds) == 4, folds
assert sum(f["rows"] for f in folds) == 32561, "the folds do not cover the file"
assert summary["folds"] == 4
mean = sum(f["accuracy"] for f in folds) / 4
assert abs(summary["accuracy_mean"] - mean) < 1e-9
assert summary["accuracy_mean"] > 0.84, summary
assert summary["accuracy_sd"] >= 0 and "auc_mean" in summary and "loss_sd" in summary
print("4 folds, accuracy %.4f +- %.4f" % (summary["accuracy_mean"], summary["accuracy_sd"]))
PY
"$BOAR" train --quiet --threads 1 --cv 4 --epochs 2 --json datasets/a9a >"$T/j2" || fail "--cv again exited $?"
cmp -s "$T/j" "$T/j2" || fail "--cv at one thread differs run to run"

"$BOAR" train --quiet --cv 3 --epochs 1 datasets/a9a >"$T/t" || fail "--cv text exited $?"
grep -Eq '^3-fold cross-validation of datasets/a9a:  accuracy 0\.8[0-9]+ \+- ' "$T/t" ||
	{ cat "$T/t"; fail "no text summary"; }

"$BOAR" gen --quiet --task mf --rows 6000 --users 100 --items 60 -o "$T/r.txt" || fail "gen exited $?"
"$BOAR" train --quiet --cv 3 --epochs 2 "$T/r.txt" >"$T/m" || fail "--cv on ratings exited $?"
grep -q "rmse .* +- " "$T/m" || { cat "$T/m"; fail "--cv on ratings: no RMSE"; }

for bad in "--cv 1" "--cv 3 -m $T/x" "--cv 3 --test datasets/a9a.t"; do
	# shellcheck disable=SC2086
	expect_refused "$bad" "$BOAR" train $bad datasets/a9a
	[ "$rc" = 2 ] || fail "$bad: exit $rc, expected 2"
done
echo "ok"
