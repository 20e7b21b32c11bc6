#!/bin/sh
# boar dump: the text form is boar export's; --json parses and holds the
# same weights (per class for multiclass; factors for MF); --top K lists K
# lines, the K largest |weight| in order (K per class for multiclass).
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to parse JSON)"

A=datasets/a9a
"$BOAR" train --quiet --epochs 2 -m "$T/bin" "$A" || fail "train exited $?"
"$BOAR" dump -m "$T/bin" >"$T/dump.txt" || fail "dump exited $?"
"$BOAR" export -m "$T/bin" >"$T/export.txt" || fail "export exited $?"
cmp -s "$T/dump.txt" "$T/export.txt" || fail "dump text differs from export"
"$BOAR" dump -m "$T/bin" -o "$T/dump.o" || fail "dump -o exited $?"
cmp -s "$T/dump.o" "$T/export.txt" || fail "dump -o differs from export"

"$BOAR" dump --top 5 -m "$T/bin" >"$T/top5" || fail "dump --top 5 exited $?"
[ "$(wc -l <"$T/top5")" = 5 ] || { cat "$T/top5"; fail "--top 5 printed $(wc -l <"$T/top5") lines"; }
"$BOAR" dump --json -m "$T/bin" >"$T/bin.json" || fail "dump --json exited $?"
"$BOAR" dump --json --top 7 -m "$T/bin" >"$T/bin7.json" || fail "dump --json --top exited $?"

# check: JSON and --top against the export's "feature weight" lines.
python3 - "$T/export.txt" "$T/top5" "$T/bin.json" "$T/bin7.json" <<'PY' || fail "binary dump (see above)"
import json, sys
lines = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
head = {l[0]: l[1] for l in lines if len(l) == 2 and not l[0].isdigit()}
w = {int(l[0]): float(l[1]) for l in lines if len(l) == 2 and l[0].isdigit()}
order = sorted(w, key=lambda f: (-abs(w[f]), f))
top = [l.split() for l in open(sys.argv[2])]
got = [int(f) for f, _ in top]
if got != order[:5]:
    sys.exit("--top 5 features %s, expected %s" % (got, order[:5]))
for f, v in top:
    if float(v) != w[int(f)]:
        sys.exit("--top 5: feature %s weight %s, export says %r" % (f, v, w[int(f)]))
d = json.load(open(sys.argv[3]))
if d["task"] != "linear" or d["loss"] != "logistic" or d["feature_ids"] != "1-based":
    sys.exit("JSON header: %r" % {k: d[k] for k in ("task", "loss", "feature_ids")})
if d["bias"] != float(head["bias"]) or d["dim"] != int(head["dim"]):
    sys.exit("JSON bias/dim %r/%r, export %s/%s" % (d["bias"], d["dim"], head["bias"], head["dim"]))
if dict(zip(d["features"], d["weights"])) != w:
    sys.exit("JSON weights differ from the export's")
if d["features"] != sorted(d["features"]):
    sys.exit("JSON features are not in ascending order")
t = json.load(open(sys.argv[4]))
if t["features"] != order[:7] or t["top"] != 7:
    sys.exit("--json --top 7 features %s, expected %s" % (t["features"], order[:7]))
PY

# Multiclass: K lines per class with the label first; JSON per class.
awk 'BEGIN { srand(6); for (i = 0; i < 1500; i++) { c = 1 + int(rand() * 3)
	print c, c ":1", 4 + int(rand() * 10) ":" rand() } }' >"$T/c3"
"$BOAR" train --quiet --loss softmax --epochs 3 -m "$T/mc" "$T/c3" || fail "softmax train exited $?"
"$BOAR" dump --top 2 -m "$T/mc" >"$T/mc.top" || fail "multiclass dump --top exited $?"
"$BOAR" dump --json -m "$T/mc" >"$T/mc.json" || fail "multiclass dump --json exited $?"
"$BOAR" export -m "$T/mc" >"$T/mc.txt" || fail "multiclass export exited $?"
python3 - "$T/mc.txt" "$T/mc.top" "$T/mc.json" <<'PY' || fail "multiclass dump (see above)"
import json, sys
lines = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
classes = [float(x) for l in lines if l[0] == "classes" for x in l[1:]]
bias = [float(x) for l in lines if l[0] == "bias" for x in l[1:]]
rows = {int(l[0]): [float(x) for x in l[1:]] for l in lines if l[0].isdigit()}
top = [l.split() for l in open(sys.argv[2])]
if len(top) != 2 * len(classes):
    sys.exit("--top 2 with %d classes printed %d lines" % (len(classes), len(top)))
d = json.load(open(sys.argv[3]))
if d["loss"] != "softmax" or len(d["classes"]) != len(classes):
    sys.exit("JSON: loss %r, %d classes" % (d["loss"], len(d["classes"])))
for c, (lab, cl) in enumerate(zip(classes, d["classes"])):
    if cl["label"] != lab or cl["bias"] != bias[c]:
        sys.exit("class %d: JSON label/bias %r/%r, export %r/%r" % (c, cl["label"], cl["bias"], lab, bias[c]))
    w = {f: v[c] for f, v in rows.items() if v[c] != 0}
    if dict(zip(cl["features"], cl["weights"])) != w:
        sys.exit("class %g: JSON weights differ from the export's" % lab)
    order = sorted(w, key=lambda f: (-abs(w[f]), f))[:2]
    mine = [int(l[1]) for l in top if float(l[0]) == lab]
    if mine != order:
        sys.exit("class %g: --top 2 gave %s, expected %s" % (lab, mine, order))
PY

# Hashed ids are slots.
"$BOAR" train --quiet --epochs 1 --hash-bits 10 -m "$T/hb" "$A" || fail "hashed train exited $?"
"$BOAR" dump --json -m "$T/hb" >"$T/hb.json" || fail "hashed dump exited $?"
[ "$(json_field "$T/hb.json" feature_ids)" = slot ] || fail "hashed model: feature_ids is not 'slot'"

# Matrix factorization: factors in JSON, --top refused.
awk 'BEGIN { srand(1); for (i = 0; i < 2000; i++)
	printf "%d %d %d\n", 1 + int(rand() * 30), 1 + int(rand() * 20), 1 + int(rand() * 5) }' >"$T/r.txt"
"$BOAR" train --quiet --task mf --rank 3 --epochs 1 -m "$T/mf" "$T/r.txt" || fail "mf train exited $?"
"$BOAR" dump --json -m "$T/mf" >"$T/mf.json" || fail "mf dump --json exited $?"
python3 - "$T/mf.json" <<'PY' || fail "mf dump (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
if d["task"] != "mf" or d["rank"] != 3:
    sys.exit("task/rank %r/%r" % (d["task"], d["rank"]))
for who, n in (("user", d["users"]), ("item", d["items"])):
    F = d[who + "_factors"]
    if len(F) != n or any(len(r) != 3 for r in F):
        sys.exit("%s_factors: %d rows for %d %ss" % (who, len(F), n, who))
    if len(d[who + "_bias"]) != n:
        sys.exit("%s_bias has %d entries for %d" % (who, len(d[who + "_bias"]), n))
if not isinstance(d["mu"], float):
    sys.exit("mu %r" % d["mu"])
PY
expect_refused "--top on an MF model" "$BOAR" dump --top 3 -m "$T/mf"
expect_message "--top on an MF model" "linear models"
expect_refused "--top 0" "$BOAR" dump --top 0 -m "$T/bin"
expect_refused "no model" "$BOAR" dump
expect_refused "a missing model" "$BOAR" dump -m "$T/none"
exit 0
