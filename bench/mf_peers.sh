#!/bin/sh
# mf_peers.sh - boar's matrix factorization against LIBMF and HOGWILD!'s
# tracenorm on many cores: time to the same test RMSE, same files.
#
# usage: sh bench/mf_peers.sh TRAIN TEST [BUILD_DIR]
#   TRAIN, TEST   ratings, "user item rating" a line, 0-based ids (boar gen
#                 --task mf writes them; bench/targets.sh's 9M-rating set)
#   THREADS (default: all cores), EPOCHS (20), RANK (16), WORK (scratch)
#
# Every tool trains rank-RANK factors for EPOCHS passes at THREADS threads
# with its own defaults otherwise, and records its test RMSE after every
# pass with the seconds spent training until then (parsing and scoring
# excluded where the tool reports them apart). Then, with TARGET the
# largest of the tools' best test RMSEs (the one every tool reached), one
# line per tool: its best test RMSE, its training seconds for EPOCHS
# passes, and the seconds until its test RMSE was first at or below
# TARGET. The peers are never part of boar: each runs only when found, by
# variable or on PATH, and a line says which were not found:
#   LIBMF_TRAIN        LIBMF's mf-train (cjlin1/libmf). It reports no
#                      times: a run of 1 pass and one of EPOCHS passes are
#                      timed whole, their difference over EPOCHS - 1 is a
#                      pass, and the 1-pass run less one pass its reading.
#   HOGWILD_TRACENORM  the original HOGWILD!'s bin/tracenorm (of
#                      huanzhang12/hogwildpp): its train_time per epoch;
#                      TN_MU its trace-norm weight (required by it; 0.01,
#                      its own example's), TN_LIMIT seconds before it is
#                      stopped (600: its thread pool has hung at exit)
set -eu
TRAIN=$1 TEST=$2 B=${3:-build}
THREADS=${THREADS:-$(nproc)}
EPOCHS=${EPOCHS:-20}
RANK=${RANK:-16}
WORK=${WORK:-${TMPDIR:-/tmp}/boar-mf-peers}
mkdir -p "$WORK"
CURVES=$WORK/curves
: >"$CURVES"

find_tool() { # VAR NAME: the variable's value, else NAME on PATH, else ""
	eval "v=\${$1:-}"
	if [ -n "$v" ]; then echo "$v"; else command -v "$2" 2>/dev/null || true; fi
}
now() { date +%s.%N; }

# curve lines: NAME TRAIN_SECONDS_FOR_ALL s1:rmse1 s2:rmse2 ...
"$B/boar" train --quiet --task mf --rank "$RANK" --threads "$THREADS" \
	--epochs 1 --cache "$TRAIN" >/dev/null 2>&1 || true
"$B/boar" train --quiet --json --task mf --rank "$RANK" --threads "$THREADS" \
	--epochs "$EPOCHS" --cache --test "$TEST" "$TRAIN" | python3 -c '
import json, sys
t, pts = 0.0, []
for l in sys.stdin:
    if l.startswith("{"):
        x = json.loads(l)
        t += x["seconds"]
        pts.append("%.4f:%.5f" % (t, x["test_rmse"]))
print("boar %.4f %s" % (t, " ".join(pts)))' >>"$CURVES"

missing=""
MF=$(find_tool LIBMF_TRAIN mf-train)
if [ -n "$MF" ]; then
	t0=$(now)
	"$MF" -k "$RANK" -t 1 -s "$THREADS" "$TRAIN" "$WORK/libmf.model" >/dev/null
	t1=$(now)
	"$MF" -k "$RANK" -t "$EPOCHS" -s "$THREADS" -p "$TEST" "$TRAIN" \
		"$WORK/libmf.model" >"$WORK/libmf.log"
	t2=$(now)
	# iteration lines: "iter tr_rmse va_rmse obj", iterations from 0
	awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$EPOCHS" '
		BEGIN { pass = ((c - b) - (b - a)) / (n - 1) }
		$1 ~ /^[0-9]+$/ && NF >= 3 { i = $1 + 1; pts = pts sprintf(" %.4f:%s", i * pass, $3) }
		END { printf "LIBMF %.4f%s\n", n * pass, pts }' "$WORK/libmf.log" >>"$CURVES"
else
	missing="$missing LIBMF(LIBMF_TRAIN)"
fi

TN=$(find_tool HOGWILD_TRACENORM hogwild-tracenorm)
if [ -n "$TN" ]; then
	for f in train test; do
		src=$TRAIN
		[ $f = test ] && src=$TEST
		awk '{ printf "%d\t%d\t%s\n", $1, $2, $3 }' "$src" >"$WORK/tn.$f.tsv"
	done
	timeout "${TN_LIMIT:-600}" "$TN" --mu "${TN_MU:-0.01}" --epochs "$EPOCHS" \
		--splits "$THREADS" --maxrank "$RANK" "$WORK/tn.train.tsv" \
		"$WORK/tn.test.tsv" >"$WORK/tn.log" 2>&1 || true
	rm -f "$WORK"/tn.*.tsv
	# "epoch: N wall_clock: W train_time: T ... test_rmse: R" (T summed)
	sed -n 's/^epoch: .* train_time: \([0-9.]*\) .* test_rmse: \([0-9.e+-]*\).*/\1 \2/p' \
		"$WORK/tn.log" | awk '{ pts = pts sprintf(" %.4f:%s", $1, $2); t = $1 }
		END { printf "HOGWILD!-tracenorm %.4f%s\n", t, pts }' >>"$CURVES"
else
	missing="$missing HOGWILD!-tracenorm(HOGWILD_TRACENORM)"
fi

python3 - "$CURVES" "$THREADS" "$EPOCHS" "$RANK" <<'EOF'
import sys
tools = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3:
        continue
    pts = [tuple(map(float, p.split(":"))) for p in f[2:]]
    tools.append((f[0], float(f[1]), pts))
if not tools:
    sys.exit(0)
target = max(min(r for _, r in pts) for _, _, pts in tools)
print("%d threads, rank %s, %s passes; target test RMSE %.5f (the largest "
      "of the tools' best)" % (int(sys.argv[2]), sys.argv[4], sys.argv[3], target))
print("%-20s %10s %12s %16s" % ("tool", "best_rmse", "train_s", "s_to_target"))
for name, total, pts in tools:
    hit = next((s for s, r in pts if r <= target + 1e-12), None)
    print("%-20s %10.5f %12.3f %16s" % (name, min(r for _, r in pts), total,
          "%.3f" % hit if hit is not None else "not reached"))
EOF
[ -z "$missing" ] || echo "not found, not run:$missing"
sed 's/^/curve: /' "$CURVES"
