#!/bin/sh
# The model remembers how its data was read (issue 12's first trap): a
# model trained with --csv-label Label --csv-ignore Id --csv-log evaluates
# and predicts a test CSV without the options repeated, exactly as with
# them; a --csv-* or --format option that contradicts the model is refused
# (exit 2, naming the option and the model); one that agrees is accepted.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read eval --json)"

# A Criteo-like CSV: an Id column, the label in column 1, counts and a
# categorical column. The Id carries no signal; the label follows C1.
python3 - "$T" <<'PY'
import random, sys
random.seed(7)
for name, n in (("tr.csv", 600), ("te.csv", 300)):
    with open(sys.argv[1] + "/" + name, "w") as f:
        f.write("Id,Label,I1,I2,C1\n")
        for r in range(n):
            c1 = random.choice("abcd")
            y = 1 if c1 in "ab" else 0
            if random.random() < 0.05:
                y = 1 - y
            f.write("%d,%d,%d,%d,%s\n" % (60000000 + r, y,
                    random.randint(0, 1000), random.randint(0, 9), c1))
PY
C="--csv-label Label --csv-ignore Id --csv-log"
"$BOAR" train --quiet --threads 1 $C -m "$T/m" "$T/tr.csv" || fail "train exited $?"
"$BOAR" eval --json $C -m "$T/m" "$T/te.csv" >"$T/with" || fail "eval with options exited $?"
"$BOAR" eval --json -m "$T/m" "$T/te.csv" >"$T/without" || fail "eval without options exited $?"
a=$(json_field "$T/with" test_accuracy)
b=$(json_field "$T/without" test_accuracy)
echo "accuracy with the --csv-* options $a, without them $b"
[ "$a" = "$b" ] || fail "eval without the --csv-* options gives $b, with them $a"
at_least "accuracy" "$b" 0.85
"$BOAR" predict $C -m "$T/m" "$T/te.csv" >"$T/p1" || fail "predict with options exited $?"
"$BOAR" predict -m "$T/m" "$T/te.csv" >"$T/p2" || fail "predict without options exited $?"
cmp -s "$T/p1" "$T/p2" || fail "predict without the --csv-* options differs"

expect_refused "contradicting --csv-label" "$BOAR" eval --csv-label 0 -m "$T/m" "$T/te.csv"
[ "$rc" = 2 ] || fail "contradicting --csv-label: exit $rc, expected 2"
expect_message "contradicting --csv-label" "csv-label 0, but .*m was trained with --csv-label Label"
expect_refused "missing --csv-log" "$BOAR" predict --csv-ignore C1 -m "$T/m" "$T/te.csv"
expect_message "other --csv-ignore" "csv-ignore C1, but .* --csv-ignore Id"
expect_refused "contradicting --format" "$BOAR" eval --format libsvm -m "$T/m" "$T/te.csv"
expect_message "contradicting --format" "format libsvm, but .* trained on csv data"
"$BOAR" eval --format csv --csv-log -m "$T/m" "$T/te.csv" >/dev/null ||
	fail "options that agree with the model are refused"

# A warm start reads its data the model's way too.
"$BOAR" train --quiet --threads 1 --epochs 1 --init-model "$T/m" -m "$T/m2" "$T/tr.csv" ||
	fail "warm start without the --csv-* options exited $?"
"$BOAR" eval --json -m "$T/m2" "$T/te.csv" >"$T/warm" || fail "eval of the warm-started model exited $?"
at_least "accuracy after a warm start" "$(json_field "$T/warm" test_accuracy)" 0.85
expect_refused "warm start with another --csv-label" "$BOAR" train --csv-label 0 --init-model "$T/m" "$T/tr.csv"
[ "$rc" = 2 ] || fail "warm start with another --csv-label: exit $rc, expected 2"

# A LIBSVM model: --csv-* options make no sense for it.
"$BOAR" train --quiet --epochs 1 -m "$T/svm" datasets/a9a || fail "a9a train exited $?"
expect_refused "--csv-label for a LIBSVM model" "$BOAR" eval --csv-label 0 -m "$T/svm" datasets/a9a.t
expect_message "--csv-label for a LIBSVM model" "trained on libsvm data"
"$BOAR" eval -m "$T/svm" datasets/a9a.t >/dev/null || fail "a9a eval exited $?"
echo "ok"
