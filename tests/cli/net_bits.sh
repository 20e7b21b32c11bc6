#!/bin/sh
# Keys as bitmaps (WIRE_F_BITS: a clock's keys, most of a shard's range,
# go as the bitmap of their span, which the shard keeps and walks in
# place to answer the pull and apply the push that names it or carries
# them): one worker of one thread on two shards writes the same model
# file, bit for bit, as the same run with every frame's keys sent as a
# list (BOAR_PS_KEY_LISTS=1), with pushes without keys (names of the
# pulls) and with every push carrying its keys (BOAR_PS_KEYED_PUSH=1),
# with an evaluation after every epoch (pulled with the clock's keys),
# and with shards that log every push (--checkpoint). The worker's --json
# counts the keys pulled and pushed as bitmaps: some in the default runs,
# none with lists.
. net/tests/lib.sh

BOAR_PS_CHECK_PULLED=1 one_worker bits
BOAR_PS_CHECK_PULLED=1 BOAR_PS_KEY_LISTS=1 one_worker lists
cmp "$T/bits.model" "$T/lists.model" ||
	fail "the model with bitmap pulls differs from the one with key lists"
kb=$(json_field "$T/bits.json" keys_pulled_bits)
kp=$(json_field "$T/bits.json" keys_pulled)
awk -v b="$kb" -v p="$kp" 'BEGIN { exit !(b > 0 && b <= p) }' ||
	fail "$kb of $kp keys pulled went as bitmaps, expected some"
[ "$(json_field "$T/lists.json" keys_pulled_bits)" = 0 ] ||
	fail "BOAR_PS_KEY_LISTS=1: some keys went as a bitmap"
echo "bitmaps: $kb of $kp keys pulled, model identical to the lists' run"

BOAR_PS_KEYED_PUSH=1 one_worker bits_keyed
BOAR_PS_KEYED_PUSH=1 BOAR_PS_KEY_LISTS=1 one_worker lists_keyed
cmp "$T/bits_keyed.model" "$T/lists_keyed.model" ||
	fail "keyed pushes: the model with bitmap pulls differs"
one_worker bits_eval --test "$A9AT"
BOAR_PS_KEY_LISTS=1 one_worker lists_eval --test "$A9AT"
cmp "$T/bits_eval.model" "$T/lists_eval.model" ||
	fail "with evaluations: the model with bitmap pulls differs"
echo "keyed pushes and evaluations: the same models"

# shards that log every push (--checkpoint): pushes carry their keys,
# as bitmaps where dense; the log, stopped and replayed at a restart,
# holds them as they came
SHARD_OPTS="--checkpoint $T/ck-bits" one_worker durable_bits
SHARD_OPTS="--checkpoint $T/ck-lists" BOAR_PS_KEY_LISTS=1 \
	one_worker durable_lists
cmp "$T/durable_bits.model" "$T/durable_lists.model" ||
	fail "durable shards: the model with bitmap pushes differs"
pb=$(json_field "$T/durable_bits.json" keys_pushed_bits)
pp=$(json_field "$T/durable_bits.json" keys_pushed)
awk -v b="$pb" -v p="$pp" 'BEGIN { exit !(b > 0 && b <= p) }' ||
	fail "durable shards: $pb of $pp keys pushed went as bitmaps, expected some"
[ "$(json_field "$T/durable_lists.json" keys_pushed_bits)" = 0 ] ||
	fail "BOAR_PS_KEY_LISTS=1: some pushed keys went as a bitmap"
echo "durable shards: $pb of $pp keys pushed as bitmaps, same model"
exit 0
