#!/bin/sh
# make-seeds.sh - writes the seed corpora of tests/fuzz/corpus/ again.
#
#   sh tests/fuzz/make-seeds.sh [BOAR]     (BOAR: default build/boar)
#
# The text seeds (libsvm, ratings, vw, csv) are written out below, each a
# valid example or a known nasty one (a BOM, blank lines, CRLF, huge ids,
# NA cells, overflowing numbers, a missing newline at the end...). The
# binary seeds are made by training tiny models and writing caches with
# the CLI, and checkpoints by hand (checkpoint.h gives the layout); the
# nasty variants are then edited with python3: a bad checksum, lying
# counts, NaN weights, a key range beyond the shard. A binary seed starts
# with the harness's mode byte (fuzz.h): bit 0 has the harness recompute
# the checksums, so that the seed's lie, and the fuzzer's mutations, get
# past them (valid seeds have it too; *-as-is and bad-checksum seeds have
# it clear). gzip seeds are gzip -n of
# the text ones and damaged copies. The wire seeds are left alone.
#
# Inputs that once crashed a harness (after their fix) are added by hand
# as NAME/crash-*; this script leaves them be. A seed that breaks a promise
# today is kept in tests/fuzz/open/NAME/ instead of the corpus (make check
# replays the corpus only): when tests/fuzz/open/NAME/seed-X exists, seed-X
# is written there.
set -eu
BOAR=${1:-build/boar}
C=tests/fuzz/corpus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for d in libsvm ratings vw csv gzip model cache checkpoint; do
	mkdir -p "$C/$d"
	find "$C/$d" -name 'seed-*' -delete
done

# put FORMAT NAME: stdin to the seed.
put() { cat >"$C/$1/seed-$2"; }

# ----------------------------------------------------------------- LIBSVM
printf '+1 1:0.5 3:1 10:-2\n-1 2:1 3:0.25\n+1 qid:3 1:1 # comment\n\n# only a comment\n-1\n' | put libsvm plain
printf '1 1:1 2:1\r\n0 3:1\r\n' | put libsvm crlf
printf '\357\273\2771 1:1\n' | put libsvm bom
printf '1 4294967295:1\n-1 4294967296:1\n' | put libsvm huge-id
printf '1 18446744073709551616:1\n' | put libsvm id-overflow
printf '1 0:1\n' | put libsvm zero-id
printf '1 3:1 2:1\n' | put libsvm descending
printf '1 2:1 2:1\n' | put libsvm duplicate
printf '1 1:nan\n' | put libsvm nan
printf '1 1:1e39\n-1 1:-inf\n' | put libsvm inf
printf 'nan 1:1\n' | put libsvm nan-label
printf '1 1:1.5e-46 2:0x1p3 3:1234567890123456789012345\n' | put libsvm numbers
printf '1 1:\n1 :1\n1 1::1\n' | put libsvm empty-parts
printf '1 1:1 2:2' | put libsvm no-newline
printf '\n\n\n' | put libsvm blank
printf '1 1:1\000 2:1\n' | put libsvm nul
printf '2 1:1\n3 2:1\n16777217 3:1\n16777216 3:1\n' | put libsvm classes
printf '1 1:3e38 2:3e38 3:3e38 4:3e38 5:3e38 6:3e38 7:3e38 8:3e38 9:3e38\n' | put libsvm hashed-sum-overflow

# ---------------------------------------------------------------- ratings
printf '1 1 5\n1 2 3.5\n2 1 1\n' | put ratings space
printf 'user,item,rating\n1,1,5\n2,3,4\n' | put ratings csv-header
printf '1::1193::5::978300760\n1::661::3::978302109\n' | put ratings movielens
printf '1\t2\t3\r\n4\t5\t6\r\n' | put ratings tab-crlf
printf '4294967295 1 5\n' | put ratings huge-user
printf '1 4294967295 5\n' | put ratings huge-item
printf '4294967296 1 5\n' | put ratings id-overflow
printf '1 1 nan\n' | put ratings nan
printf '1 1 NA\n2 2 3\n' | put ratings na
printf '1 1\n' | put ratings two-fields
printf -- '-1 1 5\n' | put ratings negative-id
printf '\357\273\277\n\n1 1 5' | put ratings bom-blank-no-newline

# --------------------------------------------------------------------- VW
printf '1 |a x y:2 z:-1\n-1 2.5 |a x |b w\n0 \047tag|  q\n' | put vw plain
printf '1 |ns:0.5 a:1 b\n-1 |:2 c\n' | put vw scaled
printf '1 |a 12345 67:0.5\n' | put vw numeric-names
printf '1 1e30 |a:1e30 x:1e30\n' | put vw overflow
printf '1 |a x:nan\n' | put vw nan
printf '1 |a x:3e38 x:3e38\n' | put vw repeat-overflow
printf -- '1 -1 |a x\n' | put vw negative-weight
printf '1 | \n|\n1\n |a b\n' | put vw empty
printf '\357\273\2771 |a b\r\n\r\n-1 |a c' | put vw bom-crlf
printf '1 |a x:\n1 |a :1\n1 |a x:1:2\n' | put vw bad-values
printf '1 base |a x\n' | put vw bad-base

# -------------------------------------------------------------------- CSV
printf 'label,I1,I2,C1\n1,0.5,3,a\n0,,1,b\n1,2,NA,"x,y"\n' | put csv header
printf '1,2,3\n0,4,5\n' | put csv no-header
printf '\357\273\277\n1,2,3\n0,4,5\n' | put csv bom-blank
printf '\357\273\277label,a\n1,2\n' | put csv bom-header
printf 'id;label;I1;I2;C1;C2;C3\n7;1;3;4;x;y;z\n8;0;0;1e3;;q;\n' | put csv semicolon
printf 'y\tI1\tC1\n1\t2\tfoo\n-1\t\tbar\n' | put csv tab
printf 'label,a\n1,"unterminated\n0,1\n' | put csv bad-quote
printf 'label,a,b\n1,2\n' | put csv short-row
printf 'label,a\nx,1\n' | put csv bad-label
printf 'label,a\n1,1e39\n0,nan\n' | put csv overflow
printf 'label,a\r\n1,2\r\n\r\n0,3' | put csv crlf-no-newline
printf '"a""b",c\n1,"q""r"\n' | put csv quotes
printf 'label,a,b\n1,  2 , x \n0,-0,0\n' | put csv spaces

# ------------------------------------------------------------------- gzip
for f in "$C"/libsvm/seed-plain "$C"/ratings/seed-space "$C"/vw/seed-plain \
	"$C"/csv/seed-header; do
	kind=$(basename "$(dirname "$f")")
	gzip -n -c "$f" >"$C/gzip/seed-$kind.gz"
	cp "$f" "$C/gzip/seed-$kind-plain"
done
g=$C/gzip
cat "$g/seed-libsvm.gz" "$g/seed-libsvm.gz" >"$g/seed-two-members.gz"
{ cat "$g/seed-libsvm.gz"; printf 'trailing junk'; } >"$g/seed-trailing.gz"
head -c 20 "$g/seed-libsvm.gz" >"$g/seed-truncated.gz"
head -c 10 "$g/seed-libsvm.gz" >"$g/seed-header-only.gz"
printf '\037\213' >"$g/seed-magic-only.gz"
awk 'BEGIN { for (i = 0; i < 20000; i++) print "1 1:1" }' | gzip -n -9 -c >"$g/seed-compressible.gz"
python3 - "$g" <<'EOF'
import sys, zlib
g = sys.argv[1]
b = bytearray(open(g + '/seed-libsvm.gz', 'rb').read())
c = bytearray(b); c[-8] ^= 0xff            # crc32 of the text
open(g + '/seed-bad-crc.gz', 'wb').write(c)
c = bytearray(b); c[-1] ^= 0x01            # ISIZE
open(g + '/seed-bad-length.gz', 'wb').write(c)
c = bytearray(b); c[12] ^= 0x55            # inside the deflate stream
open(g + '/seed-corrupt.gz', 'wb').write(c)
EOF

# ------------------------------------------------------- models and caches
printf '+1 1:1 3:0.5\n-1 2:1\n+1 1:0.5 2:0.25\n-1 3:1\n' >"$T/bin"
printf '1 1:1\n2 2:1\n3 3:1\n1 1:0.5 2:0.1\n' >"$T/k3"
printf '1 1 5\n1 2 3\n2 1 4\n3 2 1\n' >"$T/mf"
printf '1 |a x y\n-1 |b z\n' >"$T/vw"
q="--quiet --epochs 1 --threads 1"
$BOAR train $q -m "$T/binary.model" "$T/bin"
$BOAR train $q --hash-bits 3 -m "$T/hashed.model" "$T/bin"
$BOAR train $q --loss softmax -m "$T/softmax.model" "$T/k3"
$BOAR train $q --loss hinge -m "$T/ovr.model" "$T/k3"
$BOAR train $q --loss squared -m "$T/squared.model" "$T/k3"
$BOAR train $q --hash-bits 4 -m "$T/vw.model" "$T/vw"
$BOAR train $q --task mf --rank 2 -m "$T/mf.model" "$T/mf"
$BOAR train $q --task mf --rank 2 --no-mf-biases -m "$T/mf-nobias.model" "$T/mf"
$BOAR train $q --cache "$T/bin"
$BOAR train $q --cache --hash-bits 3 "$T/k3"
$BOAR train $q --cache --task mf --rank 2 "$T/mf"
$BOAR train $q --cache --hash-bits 4 "$T/vw"

python3 - "$T" "$C" <<'EOF'
import struct, sys, zlib
T, C = sys.argv[1], sys.argv[2]

def put(kind, name, mode, data):
    open('%s/%s/seed-%s' % (C, kind, name), 'wb').write(bytes([mode]) + bytes(data))

# Models (src/model/model_io.c): a 64-byte header (28 rank, 36 n_classes, 40
# dim, 48 n_items), floats, crc32, "BEND" (src/model/model_io.c).
for name in ['binary', 'hashed', 'softmax', 'ovr', 'squared', 'vw', 'mf', 'mf-nobias']:
    put('model', name, 1, open('%s/%s.model' % (T, name), 'rb').read())
b = bytearray(open(T + '/binary.model', 'rb').read())
put('model', 'binary-as-is', 0, b)
c = bytearray(b); c[64] ^= 1
put('model', 'bad-crc', 0, c)
put('model', 'truncated', 0, b[:-5])
c = bytearray(b); c[64:68] = struct.pack('<f', float('nan'))
put('model', 'nan-weight', 1, c)
c = bytearray(b); c[68:72] = struct.pack('<f', float('inf'))
put('model', 'inf-weight', 1, c)
c = bytearray(b); c[40:48] = struct.pack('<Q', 1 << 40)
put('model', 'huge-dim', 1, c)
s = bytearray(open(T + '/softmax.model', 'rb').read())
k = struct.unpack('<I', s[36:40])[0]
at = len(s) - 8 - 4 * k
c = bytearray(s); c[at:at + 8] = struct.pack('<ff', 2, 2)
put('model', 'duplicate-classes', 1, c)
c = bytearray(b); c[20:24] = struct.pack('<I', 3)      # loss: softmax
put('model', 'softmax-binary', 1, c)
m = bytearray(open(T + '/mf.model', 'rb').read())
c = bytearray(m); c[-12:-8] = struct.pack('<f', float('nan'))
put('model', 'mf-nan-bias', 1, c)
c = bytearray(m); c[28:32] = struct.pack('<I', 0)       # rank 0
put('model', 'mf-rank0', 1, c)

# Caches: a 256-byte header, then 64-byte aligned arrays (src/data/cache.c,
# version 3). Field offsets in the header:
ALL_ONES, N_ROWS, DIM, OFF = 32, 88, 104, 128
for name, src in [('linear', 'bin'), ('hashed', 'k3'), ('mf', 'mf'), ('vw', 'vw')]:
    put('cache', name, 1, open('%s/%s.boarcache' % (T, src), 'rb').read())
b = bytearray(open(T + '/bin.boarcache', 'rb').read())
off = struct.unpack('<4Q', b[OFF:OFF + 32])
put('cache', 'linear-as-is', 0, b)
c = bytearray(b); c[-1] ^= 1
put('cache', 'bad-sum', 0, c)
put('cache', 'truncated', 0, b[:-40])
put('cache', 'header-only', 0, b[:256])
c = bytearray(b); c[off[1]:off[1] + 4] = struct.pack('<I', 1000)
put('cache', 'id-beyond-dim', 1, c)                     # issue 14, case 8
c = bytearray(b); c[off[0] + 8:off[0] + 16] = struct.pack('<Q', 99)
put('cache', 'row-offset-beyond-nnz', 1, c)
c = bytearray(b); c[off[0] + 8:off[0] + 16] = struct.pack('<Q', 3)
c[off[0] + 16:off[0] + 24] = struct.pack('<Q', 1)
put('cache', 'row-offsets-descend', 1, c)
c = bytearray(b); c[off[2]:off[2] + 4] = struct.pack('<f', float('nan'))
put('cache', 'nan-value', 1, c)
c = bytearray(b); c[ALL_ONES:ALL_ONES + 4] = struct.pack('<i', 1)  # a lie
put('cache', 'all-ones-lie', 1, c)
c = bytearray(b); c[N_ROWS:N_ROWS + 8] = struct.pack('<Q', 5)  # wrong count
put('cache', 'wrong-count', 1, c)
c = bytearray(b); c[DIM:DIM + 8] = struct.pack('<Q', 1 << 40)
put('cache', 'huge-dim', 1, c)
m = bytearray(open(T + '/mf.boarcache', 'rb').read())
moff = struct.unpack('<4Q', m[OFF:OFF + 32])
c = bytearray(m); c[moff[0]:moff[0] + 4] = struct.pack('<I', 1 << 30)
put('cache', 'mf-user-beyond', 1, c)

# Checkpoints (net/checkpoint.h): "BOARCKP1", u32 shard, u32 n_shards,
# u64 dim, lo, hi, u32 n_workers, u32 0, u64 max_staleness,
# u64 clock[n_workers], f32 w[hi - lo], u32 crc32.
def ckpt(shard, n, dim, lo, hi, clocks, w, staleness=2):
    b = b'BOARCKP1' + struct.pack('<IIQQQIIQ', shard, n, dim, lo, hi,
                                  len(clocks), 0, staleness)
    b += struct.pack('<%dQ' % len(clocks), *clocks)
    b += struct.pack('<%df' % len(w), *w)
    return b + struct.pack('<I', zlib.crc32(b))
# mode bits 2-3 pick the shard asked for: 0: 0/1, 4: 0/2, 8: 1/2, 12: 2/3
whole = ckpt(0, 1, 5, 0, 5, [3, 4 | 1 << 63], [0.5, -1, 0, 2, 1e-3])
put('checkpoint', 'whole', 1, whole)
put('checkpoint', 'whole-as-is', 0, whole)
put('checkpoint', 'half', 5, ckpt(0, 2, 5, 0, 2, [1], [1, 2]))
put('checkpoint', 'second-half', 9, ckpt(1, 2, 5, 2, 5, [1, 1], [1, 2, 3]))
put('checkpoint', 'third', 13, ckpt(2, 3, 9, 6, 9, [], [1, 2, 3]))
put('checkpoint', 'empty-shard', 13, ckpt(2, 3, 2, 1, 2, [7], [0.25]))
good = ckpt(0, 2, 5, 0, 2, [1], [1, 2])
c = bytearray(good); c[-1] ^= 1
put('checkpoint', 'bad-crc', 4, c)
put('checkpoint', 'truncated', 4, good[:-6])
put('checkpoint', 'other-shard', 8, good)
put('checkpoint', 'whole-model-range', 5, ckpt(0, 2, 5, 0, 5, [1], [1, 2, 3, 4, 5]))   # case 11
put('checkpoint', 'range-past-dim', 5, ckpt(0, 2, 5, 3, 9, [1], [1] * 6))
put('checkpoint', 'nan-weight', 5, ckpt(0, 2, 5, 0, 2, [1], [float('nan'), 1]))
put('checkpoint', 'many-workers', 5, ckpt(0, 2, 5, 0, 2, [0] * 300, [1, 2]))
c = bytearray(ckpt(0, 2, 5, 0, 2, [1], [1, 2])); c[40:44] = struct.pack('<I', 1 << 31)
put('checkpoint', 'lying-workers', 1, c)
EOF
for f in tests/fuzz/open/*/seed-*; do
	[ -f "$f" ] || continue
	h=$(basename "$(dirname "$f")")
	mv "$C/$h/$(basename "$f")" "$f"
done
echo "seeds: $(find "$C" -name 'seed-*' | wc -l) files in $C"
