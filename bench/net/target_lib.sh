# target_lib.sh - what scale16.sh and shaped.sh share: reading a run's
# per-epoch JSON (the epoch that reached a test loss, the final loss, where
# worker 0's time went) and the median of repeated timed runs. Sourced
# (`. bench/net/target_lib.sh`); needs REPEAT for median.

now() { date +%s.%N; }

# median CMD...: the median of REPEAT runs of CMD (each prints seconds)
median() {
	med "$(timed "$@")"
}

# timed CMD...: REPEAT runs of CMD (each prints seconds), their seconds in
# the order run, "t1;t2;..." (the spread, and rounds to pair up)
timed() {
	for i in $(seq "$REPEAT"); do "$@"; done |
		awk '{ printf "%s%.3f", (NR > 1 ? ";" : ""), $1 } END { print "" }'
}

# med "t1;t2;...": their median
med() {
	echo "$1" | tr ';' '\n' | sort -g |
		awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# field NAME: the number after "NAME": on the line ($0), or ""
FIELD='function field(name,   m) {
	if (match($0, "\"" name "\": [-0-9.e+]*")) {
		m = substr($0, RSTART, RLENGTH)
		sub(/.*: /, "", m)
		return m + 0
	}
	return ""
}'
# reach TARGET JSON: the first epoch whose test loss <= TARGET, or "-"
reach() {
	awk -v target="$1" "$FIELD"'
	/"epoch"/ { tl = field("test_loss")
		    if (r == "" && tl != "" && tl <= target) r = field("epoch") }
	END { print r == "" ? "-" : r }' "$2"
}
# sweeps_after R JSON: the sweep seconds of the epochs after R
sweeps_after() {
	awk -v r="$1" "$FIELD"'
	/"epoch"/ { if (field("epoch") > r) s += field("seconds") }
	END { printf "%.4f\n", s }' "$2"
}
last_loss() {
	awk "$FIELD"'{ l = field("test_loss") } END { printf "%.10g\n", l }' "$1"
}
# phases JSON: worker 0's seconds per phase (keys, pull wait, load/store,
# sweep, push, clock, refresh) as CSV; empty for a build without them
phases() {
	awk "$FIELD"'!/"epoch"/ && /"clocks"/ {
		printf "%s,%s,%s,%s,%s,%s,%s\n", field("keys_s"),
			field("pull_s"), field("local_s"), field("sweep_s"),
			field("push_s"), field("clock_s"), field("refresh_s") }' "$1"
}
# fixed_costs JSON: worker 0's seconds outside the clocks: reading its part
# and the test set (load_s), the gather after DONE (gather_s), and its
# whole run from connecting to the end (seconds), as CSV
fixed_costs() {
	awk "$FIELD"'!/"epoch"/ && /"clocks"/ {
		printf "%s,%s,%s\n", field("load_s"), field("gather_s"),
			field("seconds") }' "$1"
}
# losses JSON: the test loss after each epoch, "l1;l2;..."
losses() {
	awk "$FIELD"'/"epoch"/ { l = field("test_loss")
		if (l != "") printf "%s%.4f", (n++ ? ";" : ""), l }
	END { print "" }' "$1"
}
