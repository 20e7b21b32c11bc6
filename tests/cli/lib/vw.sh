# vw.sh - VW test data, sourced by CLI tests after common.sh (not a test).

# xor_vw FILE: 40 rows of XOR over namespaces a and b (label +1 when a's
# token equals b's): no linear model of the single features separates
# them, the crosses of -q ab do.
xor_vw() {
	i=0
	while [ $i -lt 10 ]; do
		echo "1 |a x |b x"
		echo "1 |a y |b y"
		echo "-1 |a x |b y"
		echo "-1 |a y |b x"
		i=$((i + 1))
	done >"$1"
}
