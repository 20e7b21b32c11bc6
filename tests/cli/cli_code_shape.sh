#!/bin/sh
# The code's shape, as issue 10 counts it: no function over 100 lines and no
# file over 800 in the library, the CLI, gpu/, net/ and atomics/, outside
# the few listed below (parsers' hot loops, kernels and switch tables, each
# with its reason). Lists every offender, so `sh tests/cli/cli_code_shape.sh`
# is also the lint to run before a commit.
#
# A function is counted from its opening brace in column 0 to its closing
# brace in column 0 (the style of every file here); its name is the last
# word before '(' on the line that opened it.
. tests/cli/lib/common.sh

MAX_FUNCTION=${MAX_FUNCTION:-100}
MAX_FILE=${MAX_FILE:-800}

# file:function that may be longer, and why.
allowed() {
	case $1 in
	src/data/parse_libsvm.c:parse_piece) ;; # the parser's hot loop
	src/data/parse_vw.c:parse_piece) ;;     # the parser's hot loop
	gpu/gpu_linear.cu:linear_sweep) ;;      # the sweep kernel, one launch
	gpu/gpu_mf.cu:mf_sweep) ;;              # the sweep kernel, one launch
	net/wire_decode.c:wire_decode) ;;       # a switch over frame types
	src/cli/train_args.c:apply) ;;          # a switch over the flags
	src/cli/train_args.c:default_of) ;;     # a switch over the flags
	*) return 1 ;;
	esac
}

# file that may be longer, and why (each a debt, named here so it shows).
allowed_file() {
	case $1 in
	net/client.c) ;; # ~800 (802); the cluster work is changing it now
	src/include/boar.h) ;; # the one public header: its comments are the API's documentation
	*) return 1 ;;
	esac
}

command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1 ||
	skip "not in a git checkout (the files counted are git's)"
files=$(git ls-files 'src/*.[ch]' 'gpu/*.c' 'gpu/*.cu' 'gpu/*.h' 'gpu/*.cuh' \
	'net/*.[ch]' 'atomics/*.[ch]')
[ -n "$files" ] || skip "no source files found"

# "file:line: name: N lines" per long function, "file: N lines" per long file
for f in $files; do
	awk -v F="$f" -v MF="$MAX_FUNCTION" -v MX="$MAX_FILE" '
	/^[A-Za-z_].*\(/ && !/;[ \t]*$/ { head = $0 }
	/^\{/ {
		start = NR; name = head
		sub(/\(.*/, "", name)
		n = split(name, w, /[ \t*]+/)
		name = w[n]
	}
	/^\}/ && start {
		if (NR - start + 1 > MF)
			printf "%s:%d: %s: %d lines\n", F, start, name, NR - start + 1
		start = 0
	}
	END { if (NR > MX) printf "%s: %d lines\n", F, NR }' "$f"
done >"$T/long"

bad=0
while IFS= read -r row; do
	file=${row%%:*}
	fn=$(echo "$row" | sed -n 's/^[^:]*:[0-9]*: \([^:]*\):.*/\1/p')
	if [ -n "$fn" ] && allowed "$file:$fn"; then
		continue
	fi
	if [ -z "$fn" ] && allowed_file "$file"; then
		continue
	fi
	echo "too long: $row"
	bad=$((bad + 1))
done <"$T/long"
[ "$bad" = 0 ] || fail "$bad functions or files over $MAX_FUNCTION/$MAX_FILE lines (split them: one job each)"
echo "code shape: no function over $MAX_FUNCTION lines, no file over $MAX_FILE ($(echo "$files" | wc -l) files)"
