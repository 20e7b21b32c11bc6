# common.sh - sourced by the CLI tests in tests/cli/*.sh (not a test itself).
#
# Gives each test: $BOAR (the CLI), $BUILD, $T (a temp dir removed on exit),
# fail/skip helpers that follow the suite's exit codes (1 fail, 77 skip with
# the reason as the last line), and checks for the error contract: a
# refused command exits non-zero but below 128 (no crash) and says why.

BUILD=${BUILD:-build}
BOAR=${BOAR:-$BUILD/boar}
SHARED=${BOAR_SHARED:-../shared}

fail() {
	echo "FAIL: $*"
	exit 1
}

skip() {
	echo "$*"
	exit 77
}

[ -x "$BOAR" ] || fail "no CLI binary at BOAR=$BOAR (build it first)"

T=$(mktemp -d "${TMPDIR:-/tmp}/boar-cli.XXXXXX") || fail "mktemp"
trap 'rm -rf "$T"' EXIT

# expect_refused WHAT CMD...: CMD must fail cleanly. Its stderr is left in
# $T/err and its exit status in $rc.
expect_refused() {
	what=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" = 0 ]; then
		fail "$what: expected a non-zero exit, got 0 from: $*"
	fi
	if [ "$rc" -ge 128 ]; then
		cat "$T/err"
		fail "$what: crashed (exit $rc) in: $*"
	fi
	if ! grep -q '^boar: ' "$T/err"; then
		cat "$T/err"
		fail "$what: expected a 'boar: <reason>' message on stderr"
	fi
}

# expect_message WHAT PATTERN: the last refusal's message matches PATTERN
# (grep -E).
expect_message() {
	if ! grep -Eq -- "$2" "$T/err"; then
		echo "stderr was:"
		cat "$T/err"
		fail "$1: expected the message to match /$2/"
	fi
}

# json_field FILE KEY: KEY of the last JSON line of FILE.
json_field() {
	python3 -c '
import json, sys
last = None
for line in open(sys.argv[1]):
    if line.strip():
        last = json.loads(line)
v = last.get(sys.argv[2]) if last else None
print("" if v is None else v)
' "$1" "$2"
}

# at_least NAME VALUE MIN: VALUE >= MIN as numbers.
at_least() {
	awk -v v="$2" -v m="$3" 'BEGIN { exit !(v != "" && v + 0 >= m + 0) }' ||
		fail "$1: expected at least $3, got '$2'"
}

# at_most NAME VALUE MAX
at_most() {
	awk -v v="$2" -v m="$3" 'BEGIN { exit !(v != "" && v + 0 <= m + 0) }' ||
		fail "$1: expected at most $3, got '$2'"
}

have_python() {
	command -v python3 >/dev/null 2>&1
}
