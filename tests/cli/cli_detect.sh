#!/bin/sh
# Format detection (issue 12's second trap): a CSV of fewer than five
# columns is not taken for ratings, a label,text CSV is read as CSV (not
# as LIBSVM labels with nothing after them, which trained a majority-class
# model silently), ratings files still read as ratings, and a parse error
# in a detected file says which format it was read as and how to force
# another.
. tests/cli/lib/common.sh

# label,x,y with real-valued columns: once "item id '0.5' is not ...".
{
	echo "label,x,y"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		echo "1,0.$i,3"
		echo "0,-0.$i,1"
	done
} >"$T/narrow.csv"
"$BOAR" train --quiet --epochs 1 -m "$T/n" "$T/narrow.csv" ||
	fail "a 3-column CSV is refused (exit $?)"
"$BOAR" export -m "$T/n" | grep -qx 'task linear' || fail "3-column CSV: not a linear model"

# label,text: every text becomes a hashed categorical value.
{
	echo "label,text"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		echo "1,win a free prize now $i"
		echo "0,see you at lunch $i"
	done
} >"$T/text.csv"
"$BOAR" train --threads 1 --epochs 1 -m "$T/t" "$T/text.csv" 2>"$T/err" ||
	{ cat "$T/err"; fail "a label,text CSV is refused"; }
grep -q "40 non-zeros\|20 non-zeros" "$T/err" ||
	{ cat "$T/err"; fail "label,text CSV: the text was not read as a feature"; }

# Text labels: the error says it was read as CSV and how to force another.
{
	echo "ham,see you at lunch"
	echo "spam,win a free prize"
} >"$T/words.csv"
expect_refused "text labels" "$BOAR" train "$T/words.csv"
expect_message "text labels" "read as csv, detected .*--format"

# Ratings are still ratings: MovieLens layout with a header, and plain.
printf 'userId,movieId,rating,timestamp\n1,1,4.0,964982703\n2,3,3.5,964982704\n' >"$T/ml.csv"
"$BOAR" train --quiet --epochs 1 -m "$T/ml" "$T/ml.csv" || fail "MovieLens ratings refused"
"$BOAR" export -m "$T/ml" | grep -qx 'task mf' || fail "MovieLens ratings: not an MF model"
printf '1 2 5\n2 1 3\n' >"$T/r.txt"
"$BOAR" train --quiet --epochs 1 -m "$T/r" "$T/r.txt" || fail "plain ratings refused"
"$BOAR" export -m "$T/r" | grep -qx 'task mf' || fail "plain ratings: not an MF model"

# --csv-* options say the file is CSV whatever its width.
printf 'Id,Label,x\n7,1,2\n8,0,3\n' >"$T/w3.csv"
"$BOAR" train --quiet --epochs 1 --csv-label Label --csv-ignore Id -m "$T/w3" "$T/w3.csv" ||
	fail "--csv-label on a 3-column file refused"
echo "ok"
