#!/bin/sh
# Data input that used to crash boar, eat the machine's memory or give a
# wrong answer (issue 14), each rerun as reported. Every refusal is one
# line naming the file, exit status 1, and no model file left behind.
#
# On main at 7a340ce these went:
#   2. a 21-byte ratings file with user 4294967290 asked for ~288 GiB
#      ("out of memory for the model" where calloc refused, an OOM kill
#      where it did not); a 15-byte LIBSVM file with index 2^32-1 wrote a
#      16 GiB model without a word;
#   3. one "NA" in a numeric CSV column of the eval file made the column
#      categorical for every row: accuracy 0.99 -> 0.63, exit 0;
#   4. a UTF-8 BOM on a line of its own (a blank first line), with
#      --no-csv-header: a heap overflow (one row more filled than counted);
#   5. labels 16777216 and 16777217 trained as one class, exit 0;
#   7. a file replaced by same-size data with its mtime restored
#      (touch -r, cp -p, rsync -a) was read from the stale cache;
#   gzip: the whole file was inflated into memory before parsing (cap*2
#      reallocs: under a 1 GB address-space limit, 1.5 GB of inflated text
#      failed with "out of memory inflating gzip data");
#   /dev/zero was read until memory ran out, and --weights /dev/zero
#      read it for ever.
# (1, a file cut while parsed, and 8, a forged cache, are unit tests:
# test_parse_stream and test_cache.)
. tests/cli/lib/common.sh

# refused_1 WHAT FILE PATTERN CMD...: CMD exits 1 with one line on stderr
# that names FILE and matches PATTERN, and writes no $T/out.model.
refused_1() {
	what=$1 file=$2 pat=$3
	shift 3
	rm -f "$T/out.model"
	expect_refused "$what" "$@"
	[ "$rc" = 1 ] || fail "$what: exit $rc, expected 1"
	[ "$(wc -l <"$T/err")" = 1 ] || {
		cat "$T/err"
		fail "$what: the error is not one line"
	}
	expect_message "$what" "$file"
	expect_message "$what" "$pat"
	[ -e "$T/out.model" ] && fail "$what: a model file was written"
	ls "$T" | grep -q '\.tmp' && fail "$what: a temp file was left behind"
	:
}

# ---- 2. ids near 2^32 size the model: refused before allocation
printf '4294967290 1 5\n1 2 3\n' >"$T/huge.ratings"
refused_1 "ratings user near 2^32" "$T/huge.ratings" \
	'needs [0-9.]+ GiB, over the memory limit' \
	"$BOAR" train --quiet --task mf -m "$T/out.model" "$T/huge.ratings"
printf '1 4294967295:1\n-1 1:1\n' >"$T/huge.svm"
refused_1 "libsvm index 2^32-1" "$T/huge.svm" \
	'4294967295 features.*needs 64.0 GiB.*max-memory' \
	"$BOAR" train --quiet --max-memory 8G -m "$T/out.model" "$T/huge.svm"
# the limit is the user's to set, for the data too
printf '1 1:1 2:1\n-1 3:1\n' >"$T/small.svm"
refused_1 "data over --max-memory" "$T/small.svm" \
	'the data needs .* over the memory limit of 16 B' \
	"$BOAR" train --quiet --max-memory 16 -m "$T/out.model" "$T/small.svm"
"$BOAR" train --quiet --max-memory 1M --epochs 1 -m "$T/ok.model" \
	"$T/small.svm" 2>"$T/err" || fail "1 MiB is plenty for small.svm: $(cat "$T/err")"
expect_refused "bad --max-memory" "$BOAR" train --max-memory 12x "$T/small.svm"
[ "$rc" = 2 ] || fail "a bad --max-memory exits $rc, expected 2"
"$BOAR" train --help | grep -q -- '--max-memory SIZE' ||
	fail "--max-memory is not in train --help"

# ---- 3. a missing value in the eval file does not turn a column over
awk 'BEGIN {
	srand(7)
	print "y,a,b,c,d" >"'"$T"'/tr.csv"
	print "y,a,b,c,d" >"'"$T"'/te.csv"
	for (i = 0; i < 3000; i++) {
		a = rand() * 2 - 1; b = rand() * 2 - 1
		y = a + 0.5 * b > 0 ? 1 : 0
		f = i < 2000 ? "'"$T"'/tr.csv" : "'"$T"'/te.csv"
		printf "%d,%.3f,%.3f,%s,%d\n", y, a, b, substr("xyz", i % 3 + 1, 1), i % 5 >f
	}
}'
"$BOAR" train --quiet --epochs 10 -m "$T/na.model" "$T/tr.csv" ||
	fail "training on tr.csv failed"
"$BOAR" eval --json -m "$T/na.model" "$T/te.csv" >"$T/clean.json" ||
	fail "eval of te.csv failed"
for na in NA '' NaN 'N/A' null '?'; do
	awk -v na="$na" -F, 'BEGIN { OFS = "," } NR == 5 { $2 = na } { print }' \
		"$T/te.csv" >"$T/te_na.csv"
	"$BOAR" eval --json -m "$T/na.model" "$T/te_na.csv" >"$T/na.json" ||
		fail "eval with '$na' in one cell failed"
	clean=$(json_field "$T/clean.json" test_accuracy)
	got=$(json_field "$T/na.json" test_accuracy)
	at_least "accuracy with one '$na' cell (clean: $clean)" "$got" \
		"$(awk -v c="$clean" 'BEGIN { print c - 0.002 }')"
done

# ---- 4. a BOM on a blank first line, --no-csv-header
printf '\357\273\277\n1,2,3,4,5\n0,1,1,4,5\n1,5,2,4,5\n' >"$T/bom.csv"
"$BOAR" train --format csv --no-csv-header --epochs 1 -m "$T/bom.model" \
	"$T/bom.csv" 2>"$T/err" || fail "BOM + blank line: $(cat "$T/err")"
grep -q 'bom.csv: 3 rows' "$T/err" || {
	cat "$T/err"
	fail "BOM + blank line: expected 3 rows"
}
# and the other formats drop a BOM too
printf '\357\273\277+1 1:1\n-1 2:1\n' >"$T/bom.svm"
"$BOAR" train --quiet --epochs 1 -m "$T/bom2.model" "$T/bom.svm" 2>"$T/err" ||
	fail "BOM before LIBSVM: $(cat "$T/err")"
printf '\357\273\2771 | a b\n-1 | c\n' >"$T/bom.vw"
"$BOAR" train --quiet --epochs 1 -m "$T/bom3.model" "$T/bom.vw" 2>"$T/err" ||
	fail "BOM before VW: $(cat "$T/err")"
printf '\357\273\277userId,movieId,rating\n1,2,3\n2,1,4\n' >"$T/bom.ratings"
"$BOAR" train --quiet --task mf --epochs 1 -m "$T/bom4.model" \
	"$T/bom.ratings" 2>"$T/err" || fail "BOM before ratings: $(cat "$T/err")"

# ---- blank lines before the data: more than detection's first MiB of
# them (and than one parse block) made a header-led ratings or CSV file
# read as LIBSVM ("label 'userId,movieId,rating' is not a number")
awk 'BEGIN { for (i = 0; i < 1100000; i++) print ""; print "userId,movieId,rating";
	for (i = 0; i < 200; i++) print i % 20 "," i % 13 "," 1 + i % 5 }' >"$T/lateheader.csv"
"$BOAR" train --epochs 1 -m "$T/late.model" "$T/lateheader.csv" 2>"$T/err" ||
	fail "blank lines before a ratings header: $(cat "$T/err")"
grep -q 'lateheader.csv: 200 ratings' "$T/err" || {
	cat "$T/err"
	fail "blank lines before a ratings header: expected 200 ratings"
}
rm -f "$T/lateheader.csv.boarcache"
"$BOAR" train --quiet --cache --epochs 1 "$T/lateheader.csv" 2>"$T/err" ||
	fail "blank lines before a ratings header, --cache: $(cat "$T/err")"

# ---- 5. integer class labels a float cannot hold exactly
printf '16777216 1:1\n16777217 2:1\n16777218 3:1\n' >"$T/biglabel.svm"
# Finite values that become infinite: a VW namespace scale, or features
# summed into one hashed slot (found by the fuzz harnesses).
printf '1 1e30 |a:1e30 x:1e30\n' >"$T/scale.vw"
refused_1 "VW scale overflow" "$T/scale.vw" 'namespace.s scale is infinite' \
	"$BOAR" train --quiet --format vw -m "$T/out.model" "$T/scale.vw"
printf '1 1:3e38 2:3e38 3:3e38 4:3e38 5:3e38 6:3e38 7:3e38 8:3e38 9:3e38\n' >"$T/sum.svm"
refused_1 "hashed slot sum overflow" "$T/sum.svm" 'add up to an infinite value' \
	"$BOAR" train --quiet --hash-bits 3 -m "$T/out.model" "$T/sum.svm"

refused_1 "labels beyond 2^24" "$T/biglabel.svm" '2\^24' \
	"$BOAR" train --quiet --loss softmax -m "$T/out.model" "$T/biglabel.svm"

# ---- 7. same size, mtime restored: not served from the cache
printf '+1 1:1\n-1 2:1\n+1 1:1\n-1 2:1\n' >"$T/c.svm"
"$BOAR" train --quiet --cache --epochs 3 -m "$T/c1.model" "$T/c.svm" ||
	fail "cache: first train failed"
[ -e "$T/c.svm.boarcache" ] || fail "cache: no cache written"
cp -p "$T/c.svm" "$T/stamp"
printf '+1 2:1\n-1 1:1\n+1 2:1\n-1 1:1\n' >"$T/c.svm" # same size
touch -r "$T/stamp" "$T/c.svm"
"$BOAR" train --quiet --cache --epochs 3 -m "$T/c2.model" "$T/c.svm" ||
	fail "cache: second train failed"
"$BOAR" train --quiet --epochs 3 -m "$T/c3.model" "$T/c.svm" ||
	fail "cache: train without cache failed"
cmp -s "$T/c2.model" "$T/c3.model" ||
	fail "cache: the model after touch -r is not the fresh parse's (stale cache)"
cmp -s "$T/c1.model" "$T/c2.model" &&
	fail "cache: the stale cache gave back the old model"

# ---- gzip is inflated block by block: 1.5 GB of text in 1 GB of memory
if command -v gzip >/dev/null 2>&1; then
	awk 'BEGIN { for (i = 0; i < 200000; i++) printf "# a comment line of padding, padding, padding and more padding\n" }' |
		gzip -9 >"$T/member.gz"
	printf '+1 1:1\n-1 2:1\n' | gzip >"$T/bomb.gz"
	i=0
	while [ $i -lt 120 ]; do # 120 members x 12.8 MB
		cat "$T/member.gz"
		i=$((i + 1))
	done >>"$T/bomb.gz"
	(
		ulimit -v 1000000 || exit 77
		exec "$BOAR" train --quiet --threads 2 --epochs 1 \
			-m "$T/gz.model" "$T/bomb.gz"
	) 2>"$T/err"
	rc=$?
	[ "$rc" = 0 ] || {
		cat "$T/err"
		fail "gzip of 1.5 GB text under a 1 GB limit: exit $rc"
	}
fi

# ---- devices are refused, pipes still read
refused_1 "/dev/zero" /dev/zero 'is a device' \
	"$BOAR" train --quiet -m "$T/out.model" /dev/zero
refused_1 "--weights /dev/zero" /dev/zero 'is a device' \
	"$BOAR" train --quiet --weights /dev/zero -m "$T/out.model" "$T/small.svm"
printf '+1 1:1\n-1 2:1\n' | "$BOAR" train --quiet --epochs 1 \
	-m "$T/pipe.model" /dev/stdin || fail "training from a pipe failed"
mkfifo "$T/fifo" 2>/dev/null && {
	printf '+1 1:1\n-1 2:1\n' >"$T/fifo" &
	"$BOAR" train --quiet --epochs 1 -m "$T/fifo.model" "$T/fifo" ||
		fail "training from a FIFO failed"
	wait
}
echo "data input: ids near 2^32, --max-memory, NA cells, BOM, blank lines before a header, big labels, stale cache, gzip in blocks, devices: all as they should be"
