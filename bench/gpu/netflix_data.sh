# netflix_data.sh - sourced by cumf_compare.sh and multi_run.sh (not run).
#
# netflix_data N DIR SHIFT: Netflix-shaped synthetic ratings (480189 users
# x 17770 items, `boar gen` hidden rank 16, noise 0.05, every rating
# +SHIFT), N in DIR/tr.txt for training and N/100 in DIR/te.txt held out;
# nothing is done when DIR/tr.txt exists. Uses $BOAR and the caller's
# note().
netflix_data() {
	local n=$1 dir=$2 shift=$3 t0
	[ -s "$dir/tr.txt" ] && return 0
	t0=$(date +%s)
	$BOAR gen --task mf --rows $((n + n / 100)) --users 480189 --items 17770 \
		--rank 16 --noise 0.05 -q -o "$dir/all.txt" || { note "gen failed"; return 1; }
	awk -v n=$n -v s=$shift -v d="$dir" \
		'{ $3 += s; print > (NR <= n ? d "/tr.txt" : d "/te.txt") }' "$dir/all.txt"
	rm -f "$dir/all.txt"
	note "data: $n + $((n / 100)) ratings, shift $shift, $(( $(date +%s) - t0 )) s"
}
