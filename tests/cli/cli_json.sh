#!/bin/sh
# --json output is valid JSON, one object per line, with the documented
# keys: train has epoch, seconds, updates_per_sec, train_loss per epoch and,
# with --test, test_loss plus test_accuracy/test_auc (binary) or test_rmse
# (ratings); eval --json prints one object with the same test keys. Nothing
# but JSON reaches stdout.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to parse JSON)"

# check_json FILE LINES KEY...: FILE has LINES JSON objects with the keys,
# all numbers finite or null.
check_json() {
	python3 - "$@" <<'PY' || fail "bad JSON in $1 (see above)"
import json, math, sys
path, want, keys = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
lines = [l for l in open(path) if l.strip()]
if len(lines) != want:
    sys.exit("expected %d JSON lines, got %d" % (want, len(lines)))
for i, line in enumerate(lines, 1):
    try:
        obj = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not JSON (%s): %r" % (i, e, line))
    for k in keys:
        if k not in obj:
            sys.exit("line %d lacks key %s: %s" % (i, k, line.strip()))
    for k, v in obj.items():
        if isinstance(v, float) and not math.isfinite(v):
            sys.exit("line %d: %s is not finite" % (i, k))
    if "epoch" in obj and obj["epoch"] != i:
        sys.exit("line %d has epoch %r" % (i, obj["epoch"]))
PY
}

A=datasets/a9a
AT=datasets/a9a.t
"$BOAR" train --epochs 3 --json -m "$T/m" "$A" >"$T/j1" 2>/dev/null ||
	fail "train --json exited $?"
check_json "$T/j1" 3 epoch seconds updates_per_sec train_loss

"$BOAR" train --epochs 4 --json --test "$AT" "$A" >"$T/j2" 2>/dev/null ||
	fail "train --json --test exited $?"
check_json "$T/j2" 4 epoch seconds updates_per_sec train_loss test_loss \
	test_accuracy test_auc

"$BOAR" eval --json -m "$T/m" "$AT" >"$T/j3" || fail "eval --json exited $?"
check_json "$T/j3" 1 rows test_loss test_accuracy test_auc

# Ratings: test_rmse instead of accuracy and AUC.
awk 'BEGIN { srand(5); for (i = 0; i < 3000; i++)
	printf "%d %d %.1f\n", 1 + int(rand() * 50), 1 + int(rand() * 40), 1 + int(rand() * 5) }' \
	>"$T/r.txt"
head -n 2500 "$T/r.txt" >"$T/r.train"
tail -n 500 "$T/r.txt" >"$T/r.test"
"$BOAR" train --task mf --rank 4 --epochs 2 --json --test "$T/r.test" \
	-m "$T/mf" "$T/r.train" >"$T/j4" 2>"$T/err" ||
	{ cat "$T/err"; fail "mf train --json exited $?"; }
check_json "$T/j4" 2 epoch seconds updates_per_sec train_loss test_loss test_rmse
"$BOAR" eval --json -m "$T/mf" "$T/r.test" >"$T/j5" || fail "mf eval --json exited $?"
check_json "$T/j5" 1 rows test_loss test_rmse
exit 0
