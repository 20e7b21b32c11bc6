# regression.sh - sourced by the CLI tests of the regression losses
# (cli_huber.sh, cli_quantile_poisson.sh), after net/tests/lib.sh, whose
# cluster helpers it uses. Not a test itself.
#
# A test sets TRUE_W, the true weight of feature j as awk code (e.g.
# "j / 10 - 0.5"), before calling these.

# lcg_data SEED ROWS DIM AWK: ROWS LIBSVM rows of DIM features x_j in
# [-1, 1), from the LCG s = (s * 1103515245 + 12345) mod 2^31 seeded with
# SEED. AWK is awk code, run once a row, that prints the row from m (the
# margin sum_j TRUE_W x_j), line (the features), r (the row's index) and
# unif() (the LCG's next value in [0, 1)).
lcg_data() {
	awk -v s="$1" -v n="$2" -v dim="$3" "
	function unif() {
		s = (s * 1103515245 + 12345) % 2147483648
		return s / 2147483648
	}
	BEGIN {
	for (r = 0; r < n; r++) {
		m = 0; line = \"\"
		for (j = 1; j <= dim; j++) {
			x = 2 * unif() - 1
			m += ($TRUE_W) * x
			line = line \" \" j \":\" x
		}
		$4
	}}"
}

# weights_distance MODEL BIAS DIM: the Euclidean distance of MODEL's
# weights and bias (boar export) from TRUE_W and BIAS.
weights_distance() {
	"$BOAR" export -m "$1" | awk -v b="$2" -v dim="$3" "
		\$1 == \"bias\" { d += (\$2 - b) ^ 2 }
		\$1 ~ /^[0-9]+\$/ { w[\$1] = \$2 }
		END { for (j = 1; j <= dim; j++) d += (w[j] - ($TRUE_W)) ^ 2
		      printf \"%.4f\\n\", sqrt(d) }"
}

# cluster_train MODEL DATA OPTION...: one shard and two workers train on
# DATA split between them, with the OPTIONs; worker 0 saves MODEL and
# shuts the shard down. Each must exit 0.
cluster_train() {
	_model=$1
	_data=$2
	shift 2
	new_cluster
	serve 0 1
	_shard=$SPID
	for _r in 1 0; do
		_save=""
		[ $_r = 0 ] && _save="--shutdown-servers -m $_model"
		# shellcheck disable=SC2086
		"$BOAR" train "$@" --ps "$(ps_list 1)" --worker "$_r/2" \
			--sync-every 200 $_save "$_data" >"$T/w$_r.out" \
			2>"$T/w$_r.err" &
		eval "_w$_r=\$!"
		PIDS="$PIDS $!"
	done
	wait_ok "$_w0" "worker 0"
	wait_ok "$_w1" "worker 1"
	wait_ok "$_shard" "shard 0"
}

# cluster_fits LOSS DATA MAX OPTION...: cluster_train on DATA with --loss
# LOSS and the OPTIONs; its model must be a LOSS model whose distance()
# (the test's) from the truth is at most MAX.
cluster_fits() {
	_loss=$1
	_data=$2
	_max=$3
	shift 3
	cluster_train "$T/cl.model" "$_data" "$@" --loss "$_loss"
	_d=$(distance "$T/cl.model")
	echo "cluster $_loss: distance to the truth $_d"
	at_most "the cluster's $_loss distance" "$_d" "$_max"
	"$BOAR" export -m "$T/cl.model" | grep -qx "loss $_loss" ||
		fail "the cluster's model is not a $_loss model"
}
