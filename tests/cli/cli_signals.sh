#!/bin/sh
# Stopping training (issue 12's seventh trap): SIGTERM (a scheduler ending
# the job) or a first Ctrl-C finishes the running epoch, saves the best
# model so far with a message and exits 128+signal; a second signal quits
# at once with a message and leaves no partial file. "-" is standard input.
. tests/cli/lib/common.sh

# Epochs of a few tenths of a second: long enough to signal inside one.
"$BOAR" gen --quiet --rows 60000 --features 65536 --nnz 30 -o "$T/d.svm" || fail "gen exited $?"

# wait_for FILE PATTERN: up to 20 s for the pattern to appear in FILE.
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 200 ] && { cat "$1"; fail "timed out waiting for '$2'"; }
		sleep 0.1
	done
}

# SIGTERM after the first epoch: the model is saved and loads.
"$BOAR" train --threads 1 --epochs 100000 -m "$T/term.model" "$T/d.svm" 2>"$T/e1" &
pid=$!
wait_for "$T/e1" "^epoch *1/"
kill -TERM $pid
wait $pid
rc=$?
cat "$T/e1" | tail -n 4
[ "$rc" = 143 ] || fail "SIGTERM: exit $rc, expected 143 (128+15)"
grep -q "^boar: interrupted: stopping after this epoch" "$T/e1" || fail "SIGTERM: no message"
grep -q "^boar: interrupted: keeping the model of epoch" "$T/e1" || fail "SIGTERM: which epoch is kept is not said"
grep -q "model saved to $T/term.model" "$T/e1" || fail "SIGTERM: the save is not reported"
ls "$T" | grep -q 'tmp' && { ls "$T"; fail "SIGTERM: a temp file was left behind"; }
"$BOAR" eval -m "$T/term.model" "$T/d.svm" >/dev/null || fail "the model saved on SIGTERM does not load"

# Two signals: quit now, nothing written, no temp file left.
"$BOAR" train --threads 1 --epochs 100000 -m "$T/int.model" "$T/d.svm" 2>"$T/e2" &
pid=$!
wait_for "$T/e2" "^epoch *1/"
# Back to back, well inside one epoch: the first asks to stop, the
# second (delivered after the first's handler) quits.
kill -INT $pid
kill -TERM $pid
wait $pid
rc=$?
cat "$T/e2" | tail -n 3
# The second signal may land while the model is being written: then it
# waits until the file is whole. Either way no partial file.
grep -q "interrupted again: quitting now" "$T/e2" || fail "second signal: no message"
[ "$rc" = 143 ] || fail "second signal: exit $rc, expected 143"
ls "$T" | grep -q 'tmp' && { ls "$T"; fail "a temp file was left behind"; }
[ ! -e "$T/int.model" ] || "$BOAR" eval -m "$T/int.model" "$T/d.svm" >/dev/null ||
	fail "a partial model file was left behind"

# A signal while the data is read: quit at once with a message. (A FIFO
# held open by this shell, never written, keeps it in the reading phase.)
mkfifo "$T/fifo" || fail "mkfifo"
"$BOAR" train -m "$T/none.model" "$T/fifo" 2>"$T/e3" &
pid=$!
exec 3>"$T/fifo"
sleep 0.5
kill -TERM $pid 2>/dev/null
wait $pid
rc=$?
exec 3>&-
[ "$rc" = 143 ] || fail "signal while reading: exit $rc, expected 143"
grep -q "interrupted while reading the data" "$T/e3" || { cat "$T/e3"; fail "signal while reading: no message"; }
[ ! -e "$T/none.model" ] || fail "a model was written though nothing was trained"

# "-" is standard input for train, eval and predict.
"$BOAR" train --quiet --epochs 1 -m "$T/s.model" - <datasets/a9a || fail "train - exited $?"
"$BOAR" eval -m "$T/s.model" - <datasets/a9a.t >"$T/ev" || fail "eval - exited $?"
grep -q "accuracy 0.8" "$T/ev" || { cat "$T/ev"; fail "eval - : unexpected accuracy"; }
"$BOAR" predict -m "$T/s.model" - <datasets/a9a.t >"$T/p" || fail "predict - exited $?"
[ "$(wc -l <"$T/p")" = 16281 ] || fail "predict -: expected 16281 scores"
echo "ok"
