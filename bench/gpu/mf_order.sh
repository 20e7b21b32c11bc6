#!/bin/bash
# mf_order.sh - is two-GPU AdaGrad's early lag the stratified order's? On
# ONE GPU, the same ratings visited (a) in random order, resident; (b) as
# the two strata of the 2-GPU schedule (user half x item half: the
# diagonal blocks, then the off-diagonal ones), by streaming them as two
# chunks (the chunks' order is drawn per epoch, rows permuted inside);
# (c) random order in two chunks (the control for (b)). Rank 128, test
# RMSE after each of 6 epochs, AdaGrad and SGD, two seeds.
#
#   B=build/boar [POPULAR=1] bench/gpu/mf_order.sh
#
# 440k `boar gen --task mf` ratings of 3000 users x 1500 items (hidden
# rank 6); POPULAR=1 keeps item i with probability 1/sqrt(i+1) from 9M
# (a power law like test_gpu_multi's) and cuts the items at the median
# rating, as the 2-GPU grid cuts them. Results: bench/RESULTS-gpu.md.
B=${B:-build/boar}
D=${DATA:-/tmp/mf_order}
mkdir -p $D
if [ "${POPULAR:-0}" = 1 ]; then
	$B gen --task mf --rows 9000000 --users 3000 --items 1500 --rank 6 \
		--seed 3 -q -o $D/big.txt || exit 1
	awk 'BEGIN { srand(5) } rand() < 1 / sqrt($2 + 1)' $D/big.txt |
		head -n 440000 >$D/all.txt
else
	$B gen --task mf --rows 440000 --users 3000 --items 1500 --rank 6 \
		--seed 3 -q -o $D/all.txt || exit 1
fi
head -n 400000 $D/all.txt >$D/train.txt
tail -n 40000 $D/all.txt >$D/test.txt
IC=$(awk '{ c[$2]++ } END { h = NR / 2; s = 0; for (i = 0; i < 1500; i++) {
	s += c[i]; if (s >= h) { print i + 1; exit } } }' $D/train.txt)
rm -f $D/s0.txt $D/s1.txt
awk -v d=$D -v ic=$IC '{ s = (($1 < 1500) == ($2 < ic)) ? 0 : 1
	print > (d "/s" s ".txt") }' $D/train.txt
n0=$(wc -l <$D/s0.txt)
n1=$(wc -l <$D/s1.txt)
n=$((n0 < n1 ? n0 : n1))
head -n $n $D/s0.txt >$D/strat.txt
head -n $n $D/s1.txt >>$D/strat.txt
shuf --random-source=$D/all.txt $D/strat.txt >$D/random.txt
CH=$((n * 12)) # a chunk of n ratings (12 bytes each on the card)
echo "item cut $IC; strata $n0 / $n1, $n each; chunk $CH bytes"
rmse() { grep -o '"test_rmse": *[0-9.e-]*' | awk '{ printf "%.4f ", $2 }'; }
for opt in "adagrad --eta 0.05" "sgd --eta 0.02"; do
	for seed in 1 2; do
		O="--rank 128 --optimizer $opt --l2 0.02 --epochs 6 --seed $seed --json --test $D/test.txt"
		echo "$opt seed $seed random:  $($B train --device gpu $O $D/random.txt 2>/dev/null | rmse)"
		echo "$opt seed $seed strata:  $(BOAR_GPU_CHUNK_BYTES=$CH $B train --device gpu $O $D/strat.txt 2>/dev/null | rmse)"
		echo "$opt seed $seed rand2ch: $(BOAR_GPU_CHUNK_BYTES=$CH $B train --device gpu $O $D/random.txt 2>/dev/null | rmse)"
	done
done
