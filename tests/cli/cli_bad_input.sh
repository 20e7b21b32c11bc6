#!/bin/sh
# Malformed input never crashes and never leaves a partial output file:
# each case exits non-zero (below 128), prints "boar: <reason>" naming the
# file and, for a bad line, the line number, and the -m/-o output named on
# the command line does not exist afterwards.
. tests/cli/lib/common.sh

good='+1 1:1 3:0.5'
# bad NAME LINE2 PATTERN: a file whose second line is LINE2 must be refused
# by train with a message naming NAME:2 and matching PATTERN.
bad() {
	f="$T/$1"
	printf '%s\n%s\n+1 2:1\n' "$good" "$2" >"$f"
	expect_refused "$1" "$BOAR" train --quiet -m "$T/out.model" "$f"
	expect_message "$1" "$f:2:"
	expect_message "$1" "$3"
	[ -e "$T/out.model" ] && fail "$1: a model file was left behind"
	ls "$T" | grep -q '\.tmp' && fail "$1: a temp file was left behind: $(ls "$T")"
	:
}

bad index0.svm '-1 0:1 2:1' 'index|0'
bad descending.svm '-1 3:1 2:1' 'ascend|order'
bad duplicate.svm '-1 2:1 2:0.5' 'duplicate|ascend'
bad label.svm 'abc 1:1' 'label'
bad value.svm '-1 1:x' 'value|number'
bad value2.svm '-1 1:0.5x' 'value|number'
bad nocolon.svm '-1 1 2:1' 'idx:val|:|index'
bad nan.svm '-1 1:nan' 'nan|NaN|finite'
bad inf.svm '-1 1:inf' 'inf|finite'
bad nanlabel.svm 'nan 1:1' 'label|nan|NaN|finite'
bad bigindex.svm '-1 4294967297:1' 'index|range|large|2\^32'

# Empty file, missing file, a directory.
: >"$T/empty.svm"
expect_refused "empty file" "$BOAR" train --quiet -m "$T/out.model" "$T/empty.svm"
expect_message "empty file" "$T/empty.svm"
expect_refused "missing file" "$BOAR" train --quiet -m "$T/out.model" "$T/nope.svm"
expect_message "missing file" "$T/nope.svm"
mkdir "$T/dir"
expect_refused "directory" "$BOAR" train --quiet -m "$T/out.model" "$T/dir"
expect_message "directory" "$T/dir"
[ -e "$T/out.model" ] && fail "a model file was left behind"

# A bad test file is refused too, and no model is written.
printf '%s\n-1 0:1\n' "$good" >"$T/badtest.svm"
printf '%s\n-1 2:1\n' "$good" >"$T/ok.svm"
expect_refused "bad --test file" "$BOAR" train --quiet --test "$T/badtest.svm" \
	-m "$T/out.model" "$T/ok.svm"
expect_message "bad --test file" "$T/badtest.svm:2:"
[ -e "$T/out.model" ] && fail "bad --test file: a model file was left behind"

# Ratings with a missing field.
printf '1 2 4.5\n3 4\n5 6 3\n' >"$T/short.ratings"
expect_refused "ratings missing a field" "$BOAR" train --quiet --task mf \
	-m "$T/out.model" "$T/short.ratings"
expect_message "ratings missing a field" "$T/short.ratings:2:"

# Model files: truncated, corrupt (one flipped byte), not a model at all,
# missing, a directory. predict -o must not leave a file behind.
"$BOAR" train --quiet --epochs 2 -m "$T/good.model" datasets/a9a ||
	fail "training the model for the model-file cases failed"
size=$(wc -c <"$T/good.model")
head -c $((size / 2)) "$T/good.model" >"$T/truncated.model"
head -c 10 "$T/good.model" >"$T/tiny.model"
cp "$T/good.model" "$T/corrupt.model"
# Flip a byte in the middle (the weights), past any header.
off=$((size / 2))
printf '\377' | dd of="$T/corrupt.model" bs=1 seek="$off" conv=notrunc 2>/dev/null
cmp -s "$T/good.model" "$T/corrupt.model" && {
	printf '\001' | dd of="$T/corrupt.model" bs=1 seek="$off" conv=notrunc 2>/dev/null
}
echo "this is not a model" >"$T/text.model"
for m in truncated tiny corrupt text; do
	expect_refused "$m model (predict)" "$BOAR" predict -m "$T/$m.model" \
		-o "$T/scores" datasets/a9a.t
	expect_message "$m model (predict)" "$T/$m.model"
	[ -e "$T/scores" ] && fail "$m model: predict -o left a file"
	expect_refused "$m model (eval)" "$BOAR" eval -m "$T/$m.model" datasets/a9a.t
	expect_message "$m model (eval)" "$T/$m.model"
	expect_refused "$m model (export)" "$BOAR" export -m "$T/$m.model"
done
expect_refused "missing model" "$BOAR" predict -m "$T/nope.model" datasets/a9a.t
expect_message "missing model" "$T/nope.model"
expect_refused "directory model" "$BOAR" eval -m "$T/dir" datasets/a9a.t
expect_message "directory model" "$T/dir"

# predict with a good model on bad data leaves no -o file.
expect_refused "predict on bad data" "$BOAR" predict -m "$T/good.model" \
	-o "$T/scores" "$T/index0.svm"
expect_message "predict on bad data" "$T/index0.svm:2:"
[ -e "$T/scores" ] && fail "predict on bad data left its -o file"

# Output into a directory that does not exist: refused, nothing left.
expect_refused "model into a missing dir" "$BOAR" train --quiet --epochs 1 \
	-m "$T/no/such/dir/m" "$T/ok.svm"
expect_refused "predict -o into a missing dir" "$BOAR" predict \
	-m "$T/good.model" -o "$T/no/such/dir/s" datasets/a9a.t
expect_refused "gen -o into a missing dir" "$BOAR" gen --rows 10 \
	-o "$T/no/such/dir/g"

# A cache file that went bad is rebuilt or refused, never trusted blindly.
cp datasets/a9a "$T/a9a"
"$BOAR" train --quiet --epochs 1 --cache -m "$T/c1.model" "$T/a9a" ||
	fail "train --cache exited $?"
cache=$(ls "$T"/a9a*.boarcache 2>/dev/null | head -n 1)
if [ -n "$cache" ]; then
	csize=$(wc -c <"$cache")
	head -c $((csize / 3)) "$cache" >"$cache.cut" && mv "$cache.cut" "$cache"
	"$BOAR" train --quiet --epochs 1 --cache -m "$T/c2.model" "$T/a9a" \
		>/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" -lt 128 ] || fail "truncated cache: crashed (exit $rc)"
	if [ "$rc" = 0 ]; then
		"$BOAR" eval -m "$T/c2.model" datasets/a9a.t >/dev/null ||
			fail "model trained after a truncated cache does not evaluate"
	else
		grep -q "^boar: $cache" "$T/err" ||
			{ cat "$T/err"; fail "truncated cache: the message does not name $cache"; }
	fi
fi
exit 0
