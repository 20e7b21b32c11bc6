#!/bin/sh
# Warm start continues training (issue 12's fifth trap). --init-model with
# a --rank (or --mf-biases) other than the model's is refused, not
# silently ignored; --save-resume keeps the optimizer state in the model
# (the step schedule, AdaGrad's sums), so that N epochs and then M more
# from the saved model end where N+M epochs straight do, where a restart
# from the weights alone takes full-size steps again.
. tests/cli/lib/common.sh
have_python || skip "python3 not found (needed to read --json)"

last() { # KEY: from the last JSON line of $T/j
	json_field "$T/j" "$1"
}
first_eta() {
	python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["eta"])' "$T/j"
}
near() { # WHAT A B TOL
	awk -v a="$2" -v b="$3" -v t="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }' ||
		fail "$1: $2 and $3 differ by more than $4"
}

"$BOAR" gen --quiet --task mf --rows 60000 --users 600 --items 300 --rank 4 --noise 0.3 -o "$T/all.txt" ||
	fail "gen exited $?"
head -n 50000 "$T/all.txt" >"$T/tr.txt"
tail -n 10000 "$T/all.txt" >"$T/te.txt"
# A decaying step (MF's default is constant) and no early stopping (MF's
# default), so that the schedule's continuation is what is checked.
M="--quiet --threads 1 --test $T/te.txt --json --eta-decay 0.9 --early-stop 0"

# MF (SGD): 4 epochs with the state, 4 more from it, against 8 straight.
"$BOAR" train $M --epochs 8 "$T/tr.txt" >"$T/j" || fail "train 8 exited $?"
straight=$(last test_rmse)
"$BOAR" train $M --epochs 4 --save-resume -m "$T/m4" "$T/tr.txt" >"$T/j" || fail "train 4 exited $?"
eta4=$(last eta)
"$BOAR" train $M --epochs 4 --init-model "$T/m4" -m "$T/m8" "$T/tr.txt" >"$T/j" ||
	fail "resume exited $?"
resumed=$(last test_rmse)
eta5=$(first_eta)
echo "mf rmse: 8 epochs straight $straight, 4 + 4 resumed $resumed; eta epoch 4 $eta4, epoch 5 $eta5"
near "the resumed step" "$eta5" "$(awk -v e="$eta4" 'BEGIN { print e * 0.9 }')" 1e-7
near "rmse of 4 + 4 resumed against 8 straight" "$resumed" "$straight" 0.003
# The continued model keeps its state: a third leg resumes it too.
"$BOAR" train $M --epochs 1 --init-model "$T/m8" "$T/tr.txt" >"$T/j" || fail "third leg exited $?"
near "the third leg's step" "$(first_eta)" "$(awk -v e="$eta4" 'BEGIN { print e * 0.9 ^ 5 }')" 1e-7

# Linear AdaGrad on a9a: the sums resume (2 + 3 epochs against 5).
L="--quiet --threads 1 --test datasets/a9a.t --json"
"$BOAR" train $L --epochs 5 datasets/a9a >"$T/j" || fail "a9a 5 exited $?"
s5=$(last test_loss)
"$BOAR" train $L --epochs 2 --save-resume -m "$T/a2" datasets/a9a >"$T/j" || fail "a9a 2 exited $?"
t2=$(last train_loss)
"$BOAR" train $L --epochs 3 --init-model "$T/a2" datasets/a9a >"$T/j" || fail "a9a resume exited $?"
r5=$(last test_loss)
t3=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["train_loss"])' "$T/j")
echo "a9a log loss: 5 straight $s5, 2 + 3 resumed $r5; train loss epoch 2 $t2, resumed epoch 3 $t3"
near "a9a: 2 + 3 resumed against 5 straight" "$r5" "$s5" 0.001
# Resumed, AdaGrad's steps stay small: the next epoch's loss goes on
# falling (a restart from the weights alone jumps back up to epoch 1's).
at_most "a9a: the resumed epoch's train loss" "$t3" "$t2"
"$BOAR" eval -m "$T/a2" datasets/a9a.t >/dev/null || fail "a model with its state does not evaluate"

# Contradictions are refused, not ignored.
"$BOAR" train --quiet --epochs 1 -m "$T/plain" "$T/tr.txt" || fail "mf train exited $?"
expect_refused "--rank against the model" "$BOAR" train --rank 4 --init-model "$T/plain" "$T/tr.txt"
[ "$rc" = 2 ] || fail "--rank against the model: exit $rc, expected 2"
expect_message "--rank against the model" "rank 4, but the initial model .* has rank 16"
expect_refused "--no-mf-biases against the model" "$BOAR" train --no-mf-biases --init-model "$T/plain" "$T/tr.txt"
expect_message "--no-mf-biases against the model" "has biases"
"$BOAR" train --quiet --epochs 1 --rank 16 --init-model "$T/plain" "$T/tr.txt" ||
	fail "a --rank that agrees with the model is refused"
expect_refused "sgd on AdaGrad's state" "$BOAR" train --optimizer sgd --init-model "$T/a2" datasets/a9a
expect_message "sgd on AdaGrad's state" "AdaGrad"
echo "ok"
