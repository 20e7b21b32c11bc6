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

# same BITS LISTS COUNT OF WHAT: runs BITS and LISTS (BOAR_PS_KEY_LISTS=1)
# wrote the same model, bit for bit; BITS's --json counts some of its OF
# keys as sent as bitmaps (COUNT), LISTS's none.
same() {
	cmp "$T/$1.model" "$T/$2.model" ||
		fail "$5: the model with bitmaps differs from the one with key lists"
	_b=$(json_field "$T/$1.json" "$3")
	_of=$(json_field "$T/$1.json" "$4")
	awk -v b="$_b" -v o="$_of" 'BEGIN { exit !(b > 0 && b <= o) }' ||
		fail "$5: $_b of $_of keys went as bitmaps, expected some"
	[ "$(json_field "$T/$2.json" "$3")" = 0 ] ||
		fail "$5: with BOAR_PS_KEY_LISTS=1 some keys went as a bitmap"
	echo "$5: $_b of $_of keys as bitmaps ($3), the same model as with lists"
}

BOAR_PS_CHECK_PULLED=1 one_worker bits
BOAR_PS_CHECK_PULLED=1 BOAR_PS_KEY_LISTS=1 one_worker lists
same bits lists keys_pulled_bits keys_pulled "pulls"

BOAR_PS_KEYED_PUSH=1 one_worker bits_keyed
BOAR_PS_KEYED_PUSH=1 BOAR_PS_KEY_LISTS=1 one_worker lists_keyed
same bits_keyed lists_keyed keys_pushed_bits keys_pushed "keyed pushes"

one_worker bits_eval --test "$A9AT"
BOAR_PS_KEY_LISTS=1 one_worker lists_eval --test "$A9AT"
same bits_eval lists_eval keys_pulled_bits keys_pulled "with evaluations"

# shards that log every push (--checkpoint): pushes carry their keys,
# as bitmaps where dense, and the log holds them as they came
SHARD_OPTS="--checkpoint $T/ck-bits" one_worker durable_bits
SHARD_OPTS="--checkpoint $T/ck-lists" BOAR_PS_KEY_LISTS=1 \
	one_worker durable_lists
same durable_bits durable_lists keys_pushed_bits keys_pushed "durable shards"
exit 0
