#!/bin/sh
# Progress on stderr: with stderr a file (a log), one line per epoch and no
# carriage return at all, for training, --search and --cv alike. On a
# terminal (a pty from script(1)): the epoch lines stay (the learning curve
# is still on screen at the end), and the live line appears: the bar while
# the file is read, rewritten with '\r' and wiped before the next line.
. tests/cli/lib/common.sh

"$BOAR" gen -q --rows 5000 --features 1000 --nnz 10 -o "$T/d.svm" || fail "gen"
"$BOAR" train --epochs 4 "$T/d.svm" 2>"$T/log" || fail "train exited $?"
"$BOAR" train --epochs 2 --search l2=0,1e-3 -m "$T/m" "$T/d.svm" 2>>"$T/log" || fail "search exited $?"
"$BOAR" train --epochs 2 --cv 2 "$T/d.svm" >/dev/null 2>>"$T/log" || fail "cv exited $?"
if tr -d '\n' <"$T/log" | grep -q "$(printf '\r')"; then
	cat -A "$T/log" | head
	fail "a carriage return in a log"
fi
[ "$(grep -c '^epoch   [1-4]/4 ' "$T/log")" = 4 ] || { cat "$T/log"; fail "not one line per epoch in the log"; }

command -v script >/dev/null 2>&1 || skip "script(1) not found: no pty to check the live line on"
script -qfec "$BOAR train --epochs 3 $T/d.svm" /dev/null >"$T/tty" 2>&1 </dev/null ||
	{ cat "$T/tty"; fail "train on a pty exited $?"; }
grep -q "$(printf '\r')reading \[" "$T/tty" || { cat -A "$T/tty" | head; fail "no live reading bar on a terminal"; }
# the learning curve: every epoch's line is still there, each ended by a
# newline (a pty writes \r\n), none overwritten by the next
# (a live line of a long epoch, wiped by "\r ESC [K", may come before one)
esc=$(printf '\033')
n=$(tr '\r' '\n' <"$T/tty" | sed "s/$esc\\[K//g" | grep -c '^epoch   [1-3]/3 .*train loss')
[ "$n" = 3 ] || { cat -A "$T/tty"; fail "$n epoch lines kept on the terminal, expected 3"; }
grep -q 'epoch   1/3 .*train loss [0-9.]*.$' "$T/tty" || { cat -A "$T/tty"; fail "epoch lines not ended by a newline"; }
echo "ok"
