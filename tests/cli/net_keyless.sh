#!/bin/sh
# Pushes without keys (WIRE_F_PULLED: a push of the clock's pulled keys
# names the pull, the shard applies to the keys it kept from it): one
# worker of one thread on two shards writes the same model file, bit for
# bit, as the same run with every push carrying its keys
# (BOAR_PS_KEYED_PUSH=1), its keys checked in full against the pull's
# (BOAR_PS_CHECK_PULLED=1); the shards count the same keys pushed, and
# every clock's keys but the first's (answered by the worker itself, so
# no shard kept them) travelled without their list, float16 pushes
# (--f16) too. With a threshold (a residual filter drops keys) and with
# an evaluation after every epoch (the epoch's first clock is pulled with
# its keys), pushes still carry their keys where they must.
. net/tests/lib.sh

# run NAME EXTRA...: one_worker (lib.sh), and the shards' keys_pushed
# in $T/NAME.keys
run() {
	one_worker "$@"
	sed -n 's/.* keys_pushed=\([0-9]*\).*/\1/p' "$T/s0.err" "$T/s1.err" \
		>"$T/$1.keys"
}

BOAR_PS_CHECK_PULLED=1 run keyless
BOAR_PS_KEYED_PUSH=1 run keyed
cmp "$T/keyless.model" "$T/keyed.model" ||
	fail "the model with pushes without keys differs from the keyed run's"
cmp "$T/keyless.keys" "$T/keyed.keys" ||
	fail "the shards counted other keys pushed: $(cat "$T/keyless.keys") vs $(cat "$T/keyed.keys")"
off=$(json_field "$T/keyless.json" keys_offered)
kl=$(json_field "$T/keyless.json" keys_keyless)
[ "$(json_field "$T/keyed.json" keys_keyless)" = 0 ] ||
	fail "BOAR_PS_KEYED_PUSH=1: some keys went without their list"
worker_clocks
# all but the first clock's keys (a clock's keys are at most the
# model's 124 features and the bias)
awk -v k="$kl" -v o="$off" 'BEGIN { exit !(k > 0 && o - k > 0 && o - k <= 124) }' ||
	fail "$kl of $off keys went without their list, expected all but the first clock's"
echo "keyless: $kl of $off keys pushed without their list, model identical to the keyed run's"

BOAR_PS_CHECK_PULLED=1 run f16 --f16
[ "$(json_field "$T/f16.json" keys_keyless)" = "$kl" ] ||
	fail "--f16: $(json_field "$T/f16.json" keys_keyless) keys without their list, $kl without --f16"

# where keys must travel: the residual filter, and the epoch's first
# clocks after an evaluation
BOAR_PS_CHECK_PULLED=1 run filter --f16 --push-threshold 1e-6
[ "$(json_field "$T/filter.json" keys_keyless)" = 0 ] ||
	fail "--push-threshold: keys went without their list past the residual filter"
BOAR_PS_CHECK_PULLED=1 run eval --test "$A9AT"
BOAR_PS_KEYED_PUSH=1 run eval_keyed --test "$A9AT"
cmp "$T/eval.model" "$T/eval_keyed.model" ||
	fail "with evaluations: the model differs from the keyed run's"
kl=$(json_field "$T/eval.json" keys_keyless)
off=$(json_field "$T/eval.json" keys_offered)
awk -v k="$kl" -v o="$off" 'BEGIN { exit !(k > 0 && o - k > 124) }' ||
	fail "with evaluations: $kl of $off keys went without their list, expected fewer than all but the first clock's"
echo "with evaluations: $kl of $off keys without their list, same model"
exit 0
