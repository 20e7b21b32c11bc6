#!/bin/sh
# Multiclass from the command line: labels 1..K train one-vs-rest with
# logistic (and hinge) loss and a multinomial model with --loss softmax.
# train/eval show accuracy and loss, no AUC (JSON test_auc null); predict
# writes labels, --probabilities K columns whose argmax is that label and
# (softmax) whose rows sum to 1. On 20 Newsgroups (../shared/datasets/news20)
# the accuracy is compared with LIBLINEAR's on the same split (-s 0, its
# one-vs-rest logistic regression, and -s 4, Crammer-Singer): boar's
# one-vs-rest must be within 2 points of LIBLINEAR -s 0.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to check JSON and columns)"

# check_predictions NAME MODEL DATA K SUM1: predict's labels agree with
# eval's accuracy, --probabilities has K columns, its argmax (classes in
# ascending label order) is the predicted label, and with SUM1=1 each row
# sums to 1.
check_predictions() {
	"$BOAR" predict -m "$2" "$3" >"$T/labels" || fail "$1: predict exited $?"
	"$BOAR" predict --probabilities -m "$2" "$3" >"$T/probs" ||
		fail "$1: predict --probabilities exited $?"
	"$BOAR" eval --json -m "$2" "$3" >"$T/ev" || fail "$1: eval exited $?"
	python3 - "$1" "$3" "$T/labels" "$T/probs" "$T/ev" "$4" "$5" <<'PY' ||
import json, sys
name, data, labels, probs, ev, K, sum1 = sys.argv[1:]
K = int(K)
truth = [float(l.split()[0]) for l in open(data) if l.strip()]
pred = [float(l) for l in open(labels)]
rows = [[float(x) for x in l.split()] for l in open(probs)]
e = json.loads(open(ev).read())
if len(pred) != len(truth) or len(rows) != len(truth):
    sys.exit("%s: %d rows, %d labels, %d probability rows"
             % (name, len(truth), len(pred), len(rows)))
if e.get("test_auc", 0) is not None:
    sys.exit("%s: eval --json test_auc should be null, got %r" % (name, e.get("test_auc")))
classes = sorted(set(truth))
acc = sum(p == t for p, t in zip(pred, truth)) / len(truth)
if abs(acc - e["test_accuracy"]) > 1e-9:
    sys.exit("%s: accuracy of predict's labels %.6f, eval says %.6f"
             % (name, acc, e["test_accuracy"]))
for i, (r, p) in enumerate(zip(rows, pred)):
    if len(r) != K:
        sys.exit("%s: row %d has %d columns, expected %d" % (name, i + 1, len(r), K))
    best = max(range(K), key=lambda c: (r[c], -c))
    if classes[best] != p:
        sys.exit("%s: row %d: argmax column is class %g, predict says %g"
                 % (name, i + 1, classes[best], p))
    if sum1 == "1" and abs(sum(r) - 1) > 1e-4:
        sys.exit("%s: row %d sums to %.6f, not 1" % (name, i + 1, sum(r)))
PY
		fail "$1: predictions disagree (see above)"
}

# A small 3-class problem: the class's own feature is on, plus noise.
awk 'BEGIN { srand(3); for (i = 0; i < 3000; i++) {
	c = 1 + int(rand() * 3); line = c
	for (j = 1; j <= 12; j++) {
		v = (j == c) ? 1 : (rand() < 0.3 ? rand() : 0)
		if (v > 0) line = line " " j ":" v
	}
	print line } }' >"$T/c3"
head -n 2400 "$T/c3" >"$T/c3.train"
tail -n 600 "$T/c3" >"$T/c3.test"

for loss in logistic hinge softmax; do
	"$BOAR" train --loss $loss --epochs 5 --test "$T/c3.test" --json \
		-m "$T/c3.$loss" "$T/c3.train" >"$T/j" 2>"$T/err" ||
		{ cat "$T/err"; fail "3 classes, $loss: train exited $?"; }
	grep -q 'AUC' "$T/err" &&
		{ cat "$T/err"; fail "3 classes, $loss: progress shows an AUC"; }
	grep -q '3 classes' "$T/err" ||
		{ cat "$T/err"; fail "3 classes, $loss: the summary does not say '3 classes'"; }
	acc=$(json_field "$T/j" test_accuracy)
	at_least "3 classes, $loss: test accuracy" "$acc" 0.95
	[ -z "$(json_field "$T/j" test_auc)" ] ||
		fail "3 classes, $loss: train --json test_auc should be null"
	sum1=0
	[ $loss = softmax ] && sum1=1
	check_predictions "3 classes, $loss" "$T/c3.$loss" "$T/c3.test" 3 $sum1
done

# Softmax on binary labels is a 2-class multinomial model.
awk '{ $1 = ($1 == 1) ? "+1" : "-1"; print }' "$T/c3.train" >"$T/bin"
"$BOAR" train --quiet --loss softmax --epochs 2 -m "$T/bin.m" "$T/bin" ||
	fail "softmax on +1/-1 labels exited $?"
"$BOAR" predict --probabilities -m "$T/bin.m" "$T/bin" | head -n 1 >"$T/p1"
[ "$(wc -w <"$T/p1")" = 2 ] || fail "softmax on +1/-1: expected 2 columns, got: $(cat "$T/p1")"

# --probabilities is refused where there are no class scores.
awk '{ print ($1 == 1 ? 2.5 : -0.5), $2, $3 }' "$T/c3.train" >"$T/reg"
"$BOAR" train --quiet --loss squared --epochs 1 -m "$T/reg.m" "$T/reg" ||
	fail "squared train exited $?"
expect_refused "--probabilities on a regression model" \
	"$BOAR" predict --probabilities -m "$T/reg.m" "$T/reg"
expect_message "--probabilities on a regression model" "needs a multiclass or logistic model"

# 20 Newsgroups against LIBLINEAR.
N=$SHARED/datasets/news20
NTR=$N/news20_bow.train.libsvm
NTE=$N/news20_bow.test.libsvm
[ -r "$NTR" ] && [ -r "$NTE" ] ||
	skip "news20 not found in $N (3-class checks passed)"

ll=
if command -v liblinear-train >/dev/null 2>&1; then
	ll=1
	# LIBLINEAR runs alongside boar: it is the slow part.
	(liblinear-train -q -s 0 "$NTR" "$T/ll0.model" >/dev/null &&
		liblinear-predict "$NTE" "$T/ll0.model" "$T/ll0.out" >"$T/ll0.acc") &
	pid0=$!
fi
for loss in logistic softmax; do
	"$BOAR" train --loss $loss --epochs 10 --seed 1 -m "$T/n20.$loss" "$NTR" \
		>/dev/null 2>"$T/err" || { cat "$T/err"; fail "news20 $loss: train exited $?"; }
	"$BOAR" eval --json -m "$T/n20.$loss" "$NTE" >"$T/n20.$loss.json" ||
		fail "news20 $loss: eval exited $?"
done
sum1=1
check_predictions "news20 softmax" "$T/n20.softmax" "$NTE" 20 $sum1
ovr=$(json_field "$T/n20.logistic.json" test_accuracy)
smx=$(json_field "$T/n20.softmax.json" test_accuracy)
at_least "news20 one-vs-rest accuracy" "$ovr" 0.70
at_least "news20 softmax accuracy" "$smx" 0.70
if [ -z "$ll" ]; then
	echo "news20: boar one-vs-rest $ovr, softmax $smx"
	skip "liblinear-train not found: no comparison (boar's own checks passed)"
fi
if liblinear-train -q -s 4 "$NTR" "$T/ll4.model" >/dev/null; then
	liblinear-predict "$NTE" "$T/ll4.model" "$T/ll4.out" >"$T/ll4.acc"
fi
wait $pid0 || fail "liblinear -s 0 failed"
acc_of() { sed -n 's/^Accuracy = \([0-9.]*\)%.*/\1/p' "$1" | awk '{ print $1 / 100 }'; }
ll0=$(acc_of "$T/ll0.acc")
ll4=$(acc_of "$T/ll4.acc" 2>/dev/null)
echo "news20 test accuracy: boar one-vs-rest $ovr, boar softmax $smx;" \
	"LIBLINEAR -s 0 (one-vs-rest logistic) $ll0, -s 4 (Crammer-Singer) ${ll4:-n/a}"
[ -n "$ll0" ] || fail "could not read LIBLINEAR's accuracy"
at_least "boar one-vs-rest accuracy against LIBLINEAR -s 0 minus 0.02" "$ovr" \
	"$(awk -v a="$ll0" 'BEGIN { print a - 0.02 }')"
exit 0
