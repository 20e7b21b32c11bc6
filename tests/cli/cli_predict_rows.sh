#!/bin/sh
# predict takes rows without labels (issue 12's fourth trap): VW rows that
# start at their tag or '|', and a CSV without its label column (or with
# it empty), score as the same rows labelled do; VW tags are printed after
# the scores, as VW prints them; eval still needs labels. And predict on
# standard input writes each score as soon as its line is read.
. tests/cli/lib/common.sh

# VW: labelled training rows; the same rows unlabeled, with tags.
i=0
while [ $i -lt 30 ]; do
	echo "1 'p$i |f x y:$i"
	echo "-1 |f z w:$i"
	i=$((i + 1))
done >"$T/tr.vw"
"$BOAR" train --quiet --threads 1 -m "$T/vw" "$T/tr.vw" || fail "vw train exited $?"
printf "1 |f x y:3\n-1 |f z w:2\n1 |f x\n" >"$T/lab.vw"
printf "'a |f x y:3\n|f z w:2\n\nc|f x\n" >"$T/unl.vw"
"$BOAR" predict -m "$T/vw" "$T/lab.vw" >"$T/p1" || fail "predict labelled exited $?"
"$BOAR" predict -m "$T/vw" "$T/unl.vw" >"$T/p2" 2>"$T/err" ||
	{ cat "$T/err"; fail "unlabeled VW rows refused"; }
cat "$T/p2"
[ "$(wc -l <"$T/p2")" = 3 ] || fail "expected 3 predictions (the blank line is no row)"
awk '{ print $1 }' "$T/p2" | cmp -s - "$T/p1" || fail "unlabeled rows score otherwise than labelled ones"
awk 'NR == 1 && $2 != "a" { exit 1 } NR == 2 && NF != 1 { exit 1 } NR == 3 && $2 != "c" { exit 1 }' "$T/p2" ||
	fail "VW tags not printed beside their scores"
expect_refused "eval of unlabeled rows" "$BOAR" eval -m "$T/vw" "$T/unl.vw"
expect_message "eval of unlabeled rows" "missing label"

# CSV without the label column (named), and with it empty.
{
	echo "Id,Label,n,c"
	i=0
	while [ $i -lt 40 ]; do
		echo "$i,1,$i,red"
		echo "$i,0,$((i * 2)),blue"
		i=$((i + 1))
	done
} >"$T/tr.csv"
"$BOAR" train --quiet --threads 1 --csv-label Label --csv-ignore Id -m "$T/csv" "$T/tr.csv" ||
	fail "csv train exited $?"
printf 'Id,Label,n,c\n1,1,3,red\n2,0,7,blue\n' >"$T/lab.csv"
printf 'Id,n,c\n1,3,red\n2,7,blue\n' >"$T/nolab.csv"
printf 'Id,Label,n,c\n1,,3,red\n2,,7,blue\n' >"$T/empty.csv"
"$BOAR" predict -m "$T/csv" "$T/lab.csv" >"$T/c1" || fail "predict labelled csv exited $?"
"$BOAR" predict -m "$T/csv" "$T/nolab.csv" >"$T/c2" 2>"$T/err" ||
	{ cat "$T/err"; fail "a CSV without the label column is refused"; }
"$BOAR" predict -m "$T/csv" "$T/empty.csv" >"$T/c3" 2>"$T/err" ||
	{ cat "$T/err"; fail "a CSV with empty labels is refused"; }
cmp -s "$T/c1" "$T/c2" || fail "CSV without the label column scores otherwise"
cmp -s "$T/c1" "$T/c3" || fail "CSV with empty labels scores otherwise"

# Standard input, a line at a time: the score of line 1 comes out before
# line 2 is written (a FIFO held open shows it).
mkfifo "$T/sin" "$T/sout" || fail "mkfifo"
"$BOAR" predict -m "$T/vw" - <"$T/sin" >"$T/sout" 2>"$T/err" &
pid=$!
exec 3>"$T/sin" 4<"$T/sout"
echo "'first |f x y:3" >&3
read -r got <&4 || fail "no score for the first line while the stream stays open"
echo "first line: $got"
[ "$got" = "$(head -n 1 "$T/p2" | sed 's/ a$/ first/')" ] || fail "streamed score '$got' differs"
printf '|f z w:2\n' >&3
exec 3>&-
read -r got2 <&4 || fail "no score for the second line"
exec 4<&-
wait $pid || { cat "$T/err"; fail "streaming predict exited $?"; }
[ "$got2" = "$(sed -n 2p "$T/p2")" ] || fail "second streamed score '$got2' differs"
# CSV on standard input: the header is kept for every row.
"$BOAR" predict -m "$T/csv" - <"$T/nolab.csv" >"$T/c4" || fail "CSV on stdin exited $?"
cmp -s "$T/c1" "$T/c4" || fail "CSV on standard input scores otherwise"
printf "1 |f x\n1 |g :\n" | "$BOAR" predict -m "$T/vw" - >"$T/o" 2>"$T/err"
[ "$?" = 1 ] || fail "a bad line on standard input: expected exit 1"
grep -q "standard input:2:" "$T/err" || { cat "$T/err"; fail "the bad line's number is not named"; }
echo "ok"
