#!/bin/sh
# An output that is one of the inputs is refused before anything is read or
# written, compared by device and inode (another name, a symbolic link):
# `predict -o` onto its data file or its model once replaced the data with
# predictions; `train -m` onto the training, --test or --weights file.
# One line, exit 1, the input left byte for byte as it was.
. tests/cli/lib/common.sh

printf '+1 1:1 3:0.5\n-1 2:1\n+1 1:0.7 2:0.1\n-1 2:0.9 3:0.2\n' >"$T/d.svm"
printf '1\n1\n2\n1\n' >"$T/w.txt"
cp "$T/d.svm" "$T/orig.svm"
"$BOAR" train --quiet --epochs 2 -m "$T/m.model" "$T/d.svm" || fail "train"
cp "$T/m.model" "$T/orig.model"
ln -s d.svm "$T/link.svm"
mkdir "$T/sub"

# refused WHAT PATTERN CMD...: exit 1, one line matching PATTERN, inputs intact.
refused() {
	what=$1
	pat=$2
	shift 2
	expect_refused "$what" "$@"
	[ "$rc" = 1 ] || fail "$what: exit $rc, want 1"
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "$what: not one line"; }
	expect_message "$what" "$pat"
	cmp -s "$T/d.svm" "$T/orig.svm" || fail "$what: the data file was changed"
	cmp -s "$T/m.model" "$T/orig.model" || fail "$what: the model file was changed"
	[ -s "$T/out" ] && fail "$what: wrote to stdout"
	:
}

refused "predict -o data" "d.svm is the input file .*d.svm: -o would overwrite it" \
	"$BOAR" predict -m "$T/m.model" -o "$T/d.svm" "$T/d.svm"
refused "predict -o via a symlink" "link.svm is the input file" \
	"$BOAR" predict -m "$T/m.model" -o "$T/link.svm" "$T/d.svm"
refused "predict -o another spelling" "is the input file" \
	"$BOAR" predict -m "$T/m.model" -o "$T/sub/../d.svm" "$T/d.svm"
refused "predict -o model" "m.model is the input file" \
	"$BOAR" predict -m "$T/m.model" -o "$T/m.model" "$T/d.svm"
refused "train -m data" "-m would overwrite it" \
	"$BOAR" train --quiet -m "$T/link.svm" "$T/d.svm"
refused "train -m test file" "-m would overwrite it" \
	"$BOAR" train --quiet --test "$T/d.svm" -m "$T/d.svm" "$T/orig.svm"
refused "train -m weights file" "w.txt is the input file" \
	"$BOAR" train --quiet --weights "$T/w.txt" -m "$T/w.txt" "$T/d.svm"
refused "cluster worker -m data" "-m would overwrite it" \
	"$BOAR" train --quiet --ps 127.0.0.1:9 --worker 0/1 -m "$T/d.svm" "$T/d.svm"

# Different files are fine, and so is continuing a warm start in place.
"$BOAR" predict -m "$T/m.model" -o "$T/pred.txt" "$T/d.svm" ||
	fail "predict to a new file was refused"
"$BOAR" train --quiet --epochs 1 --init-model "$T/m.model" -m "$T/m.model" \
	"$T/d.svm" || fail "a warm start written over its own model was refused"
exit 0
