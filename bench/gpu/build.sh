#!/bin/sh
# build.sh - builds the GPU engine on its own, with its tests and benchmark.
#
# The core library may be mid-change in a shared checkout; this links the
# CUDA engine (gpu/*.cu) with src/base/error.c and src/data/rating_grid.c
# only, which is all it needs, so
# its tests and benchmark build whatever state the rest is in. Output goes
# to $B/alone (B defaults to build-gpu). CUDA_ARCHS as in the Makefile.
set -eu
B=${B:-build-gpu}
ARCHS=${CUDA_ARCHS:-90}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_HOME=${NVCC%/bin/nvcc}
O=$B/alone
mkdir -p $O
GENCODE=
for a in $ARCHS; do GENCODE="$GENCODE -gencode arch=compute_$a,code=sm_$a"; done
INC="-Isrc/include -Isrc -I."
for f in gpu/*.cu; do
	n=$(basename $f .cu)
	$NVCC -O3 -std=c++17 -Xcompiler -fPIC $INC -DBOAR_HAVE_CUDA $GENCODE \
		${NVCC_EXTRA:-} -c $f -o $O/$n.o &
done
cc -std=c11 -O2 -D_GNU_SOURCE $INC -c src/base/error.c -o $O/error.o
cc -std=c11 -O2 -D_GNU_SOURCE $INC -c src/data/rating_grid.c -o $O/rating_grid.o
wait
rm -f $O/libboargpu.a
ar rcs $O/libboargpu.a $O/*.o
LIBS="$O/libboargpu.a -L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart -lstdc++ -lm"
for t in tests/unit/test_gpu_*.c; do
	# test_gpu_cpu_agree trains through the core (boar_train): the Makefile's
	# (and test_gpu_multi scores through it: boar_evaluate) build it
	case $t in *cpu_agree* | *gpu_multi*) continue ;; esac
	cc -std=c11 -O2 -g -D_GNU_SOURCE -Wall -Wextra $INC -o $O/$(basename $t .c) $t $LIBS
done
cc -std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -fopenmp $INC -o $O/gpu_bench \
	bench/gpu/gpu_bench.c $LIBS
echo "built $O"
