#!/bin/sh
# LIBMF's and LIBLINEAR's options from the command line: --mf-nonneg learns
# factors >= 0 on ratings of non-negative rank-3 factors (the same run
# without it learns negative ones) and fits them; eval and the per-epoch
# line report MAE beside RMSE; --l2-user/--l2-item set the two sides apart
# (a strong item L2 leaves item factors several times smaller than the
# users'); --bias off keeps the bias at 0; options of the other task are
# refused with exit 2.
. tests/cli/lib/common.sh

# 300 users x 200 items, P, Q ~ U(0, 1), 30000 ratings, no noise (ids from
# the high bits of the generator: its low bits cycle, which would tie users
# to items).
awk 'BEGIN {
	s = 3
	for (k = 0; k < 300 * 3; k++) { s = (s * 1103515245 + 12345) % 2147483648; P[k] = s / 2147483648 }
	for (k = 0; k < 200 * 3; k++) { s = (s * 1103515245 + 12345) % 2147483648; Q[k] = s / 2147483648 }
	for (n = 0; n < 30000; n++) {
		s = (s * 1103515245 + 12345) % 2147483648; u = int(s / 65536) % 300
		s = (s * 1103515245 + 12345) % 2147483648; i = int(s / 65536) % 200
		r = 0
		for (f = 0; f < 3; f++) r += P[u * 3 + f] * Q[i * 3 + f]
		print u, i, r
	}
}' >"$T/r.txt"

OPTS="--rank 3 --no-mf-biases --epochs 40 --eta 0.02 --init-scale 1 --early-stop 0 --threads 1 --quiet"
# least MODEL: the smallest factor of the model's text export.
least() {
	"$BOAR" export -m "$1" | awk '
		$1 == "u" || $1 == "i" { for (k = 3; k <= NF; k++) if (min == "" || $k < min) min = $k }
		END { print min }'
}
"$BOAR" train $OPTS -m "$T/free.model" "$T/r.txt" || fail "mf training"
"$BOAR" train $OPTS --mf-nonneg -m "$T/nn.model" "$T/r.txt" ||
	fail "mf --mf-nonneg training"
lf=$(least "$T/free.model")
ln=$(least "$T/nn.model")
echo "smallest factor: $lf without --mf-nonneg, $ln with"
at_most "the smallest factor without --mf-nonneg" "$lf" -0.05
at_least "the smallest factor with --mf-nonneg" "$ln" 0
"$BOAR" eval -m "$T/nn.model" "$T/r.txt" >"$T/e" || fail "eval"
cat "$T/e"
rmse=$(sed -n 's/.*RMSE \([0-9.]*\).*/\1/p' "$T/e")
mae=$(sed -n 's/.*MAE \([0-9.]*\).*/\1/p' "$T/e")
at_most "--mf-nonneg RMSE (ratings' mean about 0.75)" "$rmse" 0.1
at_most "MAE against RMSE" "$mae" "$rmse"
"$BOAR" train --rank 3 --epochs 2 --threads 1 --test "$T/r.txt" "$T/r.txt" 2>&1 |
	grep -q "RMSE [0-9.]*  MAE [0-9.]*" ||
	fail "the epoch line does not show MAE beside RMSE"

# mean_ratio MODEL: mean |user factor| / mean |item factor|.
mean_ratio() {
	"$BOAR" export -m "$1" | awk '
		$1 == "u" { for (k = 3; k <= NF; k++) { su += ($k < 0 ? -$k : $k); nu++ } }
		$1 == "i" { for (k = 3; k <= NF; k++) { si += ($k < 0 ? -$k : $k); ni++ } }
		END { printf "%.4f\n", (su / nu) / (si / ni) }'
}
"$BOAR" train $OPTS --l2-user 0.01 --l2-item 0.25 -m "$T/l2.model" \
	"$T/r.txt" || fail "mf --l2-user/--l2-item training"
ratio=$(mean_ratio "$T/l2.model")
echo "mean |P| / mean |Q| with --l2-user 0.01 --l2-item 0.25: $ratio (5 at the optimum)"
at_least "|P| / |Q|" "$ratio" 3
at_most "|P| / |Q|" "$ratio" 8

# Linear: y = 3 + x; --bias off leaves the bias at 0.
awk 'BEGIN { for (r = 1; r <= 200; r++) { x = (r % 7) / 7; print 3 + x, "1:" x } }' >"$T/lin.svm"
"$BOAR" train --loss squared --bias off --quiet -m "$T/nob.model" "$T/lin.svm" ||
	fail "--bias off training"
"$BOAR" export -m "$T/nob.model" | grep -qx "bias 0" ||
	fail "--bias off: the bias is not 0"

expect_refused "--mf-nonneg on linear data" "$BOAR" train --mf-nonneg "$T/lin.svm"
[ "$rc" = 2 ] || fail "--mf-nonneg on linear data: exit $rc, expected 2"
expect_message "--mf-nonneg on linear data" "mf-nonneg are for matrix factorization"
expect_refused "--bias-scale on ratings" "$BOAR" train --bias-scale 2 "$T/r.txt"
[ "$rc" = 2 ] || fail "--bias-scale on ratings: exit $rc, expected 2"
expect_refused "--bias off --bias-scale 2" "$BOAR" train --bias off --bias-scale 2 "$T/lin.svm"
[ "$rc" = 2 ] || fail "--bias off --bias-scale 2: exit $rc, expected 2"
expect_refused "--l2-item -1" "$BOAR" train --l2-item -1 "$T/r.txt"
[ "$rc" = 2 ] || fail "--l2-item -1: exit $rc, expected 2"
"$BOAR" train --help | grep -q -- "--mf-nonneg" || fail "--help lacks --mf-nonneg"
exit 0
