#!/bin/sh
# `make install DESTDIR=... PREFIX=/usr` installs header, libraries, pkg-config
# file and CLI; the example program in README.md (between the markers
# <!-- example:begin --> and <!-- example:end -->) compiles against the
# installed copy through pkg-config, linked statically and dynamically, and
# both binaries run and report a sensible a9a accuracy. So the README's
# example cannot rot.
#
# What is installed is a library others can ship: libboar.so needs neither
# liburing nor libsodium nor cudart (the transport is libboar-net, the CUDA
# engine the plugin libboar-gpu.so), libboar.a and libboar.so define no
# global symbol outside boar_*, the plugin exports its entry points alone
# (the ops table and the warm-up, gpu/plugin.map),
# and a plain `make install` builds portable code (no -march=native).
. tests/cli/lib/common.sh

command -v pkg-config >/dev/null 2>&1 || skip "pkg-config not found"
CC=${CC:-cc}
D=$T/root
# Install this build, from a copy of its tree (times kept, so nothing is
# rebuilt when the flags agree): make rewrites boar.pc, and relinks
# whatever a change of flags asks for, in the tree it is given, and other
# tests run $BUILD/boar meanwhile (run-tests -j). Asking for the build's
# MARCH keeps make from building the portable tree from scratch.
mkdir "$T/build" || fail "mkdir $T/build"
tar -C "$BUILD" --exclude=./tests --exclude=./bench -cf - . |
	tar -C "$T/build" -xf - || fail "copying $BUILD"
march=
case ${MAKEFLAGS:-} in
*MARCH=*) ;;
*) march=MARCH=native ;;
esac
# shellcheck disable=SC2086
make -s BUILD="$T/build" DESTDIR="$D" PREFIX=/usr $march install >"$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; fail "make install exited non-zero"; }

# A plain `make install` builds portable code in a tree of its own.
env -u MAKEFLAGS make -n BUILD="$T/pbuild" CUDA=0 DESTDIR="$D" install >"$T/n.log" 2>&1 ||
	{ tail "$T/n.log"; fail "make -n install failed"; }
grep -q -- '-march=x86-64-v2' "$T/n.log" || { head "$T/n.log"; fail "make install does not build portable code"; }
grep -q -- '-march=native' "$T/n.log" && fail "make install builds -march=native code"

so=$(ls "$D"/usr/lib/libboar.so.*.*.* | head -n 1)
ldd "$so" >"$T/ldd" || fail "ldd $so"
for lib in liburing libsodium libcudart; do
	grep -q "$lib" "$T/ldd" && { cat "$T/ldd"; fail "the installed libboar.so needs $lib"; }
done
nm -D --defined-only "$so" | awk '$3 !~ /^boar_/ && $2 ~ /[BDRTVW]/' | grep . &&
	fail "libboar.so exports symbols outside boar_* (above)"
nm -g --defined-only "$D/usr/lib/libboar.a" 2>/dev/null |
	awk 'NF == 3 && $3 !~ /^boar_/' | grep . &&
	fail "libboar.a defines global symbols outside boar_* (above)"
nm -g --defined-only "$D/usr/lib/libboar.a" | grep -q ' T boar_train$' ||
	fail "libboar.a does not define boar_train"
if [ -e "$D/usr/lib/libboar-gpu.so.0" ]; then
	nm -D --defined-only "$D/usr/lib/libboar-gpu.so.0" | awk '$2 ~ /[BDRTVW]/ { sub(/@.*/, "", $3); print $3 }' |
		grep -v -e '^boar_gpu_plugin_ops$' -e '^boar_gpu_plugin_warm$' -e '^boar_gpu_plugin_preload$' -e '^BOARGPU_0$' | grep . &&
		fail "the GPU plugin exports more than its entry points (above)"
fi
for f in usr/include/boar.h usr/lib/libboar.a usr/lib/libboar.so \
	usr/lib/pkgconfig/boar.pc usr/bin/boar; do
	[ -e "$D/$f" ] || fail "make install did not install /$f"
done
ls "$D"/usr/lib/libboar.so.* >/dev/null 2>&1 || fail "no versioned libboar.so.N"
"$D/usr/bin/boar" --version >/dev/null || fail "the installed boar does not run"
grep -q '^libdir=/usr/lib$' "$D/usr/lib/pkgconfig/boar.pc" ||
	{ cat "$D/usr/lib/pkgconfig/boar.pc"; fail "boar.pc: libdir is not /usr/lib for PREFIX=/usr"; }

sed -n '/<!-- example:begin -->/,/<!-- example:end -->/p' README.md |
	sed '1d;$d' | sed '/^```/d' >"$T/example.c"
[ -s "$T/example.c" ] || fail "README.md has no example between the markers"
grep -q 'boar_train' "$T/example.c" || fail "the README example does not train"

export PKG_CONFIG_PATH="$D/usr/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$D"
# PREFIX=/usr makes /usr/include and /usr/lib the paths in boar.pc, which
# pkg-config drops as system paths unless told: keep them, so that they get
# the sysroot in front and point into $D.
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
pkg-config --exists boar || fail "pkg-config does not find boar in $PKG_CONFIG_PATH"
cflags=$(pkg-config --cflags boar)
libs=$(pkg-config --libs boar)
# pkg-config puts the sysroot before every -L, also before library paths of
# the build machine (e.g. CUDA's) that are not inside it: give those back.
slibs=""
for w in $(pkg-config --static --libs boar); do
	case $w in
	-L"$D"/*)
		p=${w#-L"$D"}
		[ -d "$D$p" ] || [ ! -d "$p" ] || w="-L$p"
		;;
	-lboar) w="-l:libboar.a" ;;
	esac
	slibs="$slibs $w"
done

# ${LDFLAGS}: a sanitizer build's library needs its runtime (make check-asan).
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Wextra -Werror $cflags -o "$T/ex_dynamic" "$T/example.c" $libs ${LDFLAGS:-} \
	>"$T/cc.log" 2>&1 || { cat "$T/cc.log"; fail "dynamic build of the README example failed"; }
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Wextra -Werror $cflags -o "$T/ex_static" "$T/example.c" $slibs ${LDFLAGS:-} \
	>"$T/cc.log" 2>&1 || { cat "$T/cc.log"; fail "static build of the README example failed ($slibs)"; }

LD_LIBRARY_PATH="$D/usr/lib" ldd "$T/ex_dynamic" | grep -q "$D/usr/lib/libboar.so" ||
	fail "the dynamic example does not load the installed libboar.so"
ldd "$T/ex_static" | grep -q libboar && fail "the static example still needs libboar.so"

for ex in ex_dynamic ex_static; do
	LD_LIBRARY_PATH="$D/usr/lib" "$T/$ex" datasets/a9a datasets/a9a.t \
		>"$T/$ex.out" 2>&1 || { cat "$T/$ex.out"; fail "$ex exited non-zero"; }
	acc=$(sed -n 's/.*accuracy \([0-9.]*\).*/\1/p' "$T/$ex.out" | head -n 1)
	at_least "$ex: a9a accuracy" "$acc" 0.84
done
exit 0
