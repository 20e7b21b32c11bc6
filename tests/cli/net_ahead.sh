#!/bin/sh
# A clock's pull asked a clock ahead, its answer decoded by the client's
# thread straight into the array the worker loads it from
# (boar_ps_transport.pull_ahead_into): one worker of one thread on two
# shards writes the same model file, bit for bit, with the answers
# decoded there (the requests' bitmaps copied from the library's words:
# pull_ahead_bits), with the requests' bitmaps set by the client
# (BOAR_PS_AHEAD=keybits), decoded into the client's buffer and copied
# (BOAR_PS_AHEAD=copy), collected only after the clock before pushed
# (BOAR_PS_AHEAD=late: the client adds that push; by default an answer
# that is in when the clock before ends is collected then, and the
# library adds the push as it stores that clock and loads the next in
# one pass), and with nothing asked ahead (BOAR_PS_AHEAD=off:
# each clock pulled as it starts, the worker's own pushes then in the
# shards' answers rather than added by the client); with an evaluation
# after every epoch too (the epoch's first clock is asked with the
# evaluation's keys, collected before the evaluation reads them); and a
# softmax model (K keys a feature) with and without early collects.
. net/tests/lib.sh

for ev in "" "--test $A9AT"; do
	what=${ev:+", with evaluations"}
	one_worker into $ev
	BOAR_PS_AHEAD=keybits one_worker keybits $ev
	BOAR_PS_AHEAD=copy one_worker copy $ev
	BOAR_PS_AHEAD=late one_worker late $ev
	BOAR_PS_AHEAD=off one_worker off $ev
	ahead=$(json_field "$T/into.json" pulls_ahead)
	[ "$ahead" -gt 0 ] || fail "no pull was asked ahead$what"
	[ "$(json_field "$T/off.json" pulls_ahead)" = 0 ] ||
		fail "BOAR_PS_AHEAD=off: pulls were asked ahead$what"
	[ "$(json_field "$T/late.json" pulls_early)" = 0 ] ||
		fail "BOAR_PS_AHEAD=late: pulls were collected early$what"
	# collected after the push, the client adds it (keys_added); with
	# nothing asked ahead, the shards' answers count it
	[ "$(json_field "$T/late.json" keys_added)" -gt 0 ] ||
		fail "BOAR_PS_AHEAD=late: no push was added to an answer$what"
	[ "$(json_field "$T/off.json" keys_added)" = 0 ] ||
		fail "BOAR_PS_AHEAD=off: pushes were added to answers$what"
	# the requests' bitmaps copied from the library's words, or set
	# by the client from the key lists
	[ "$(json_field "$T/into.json" keys_bits_given)" -gt 0 ] ||
		fail "no request took its bitmap from the library's words$what"
	[ "$(json_field "$T/keybits.json" keys_bits_given)" = 0 ] ||
		fail "BOAR_PS_AHEAD=keybits: bitmaps were taken from the library$what"
	cmp "$T/into.model" "$T/keybits.model" ||
		fail "requests' bitmaps from the library's words: the model differs from the client's own$what"
	early=$(json_field "$T/into.json" pulls_early)
	cmp "$T/into.model" "$T/late.model" ||
		fail "$early pulls collected early: the model differs from pulls collected after the push$what"
	cmp "$T/into.model" "$T/copy.model" ||
		fail "answers decoded in place: the model differs from the copied answers'$what"
	cmp "$T/into.model" "$T/off.model" ||
		fail "pulls asked ahead: the model differs from pulls as clocks start$what"
	echo "$ahead pulls asked ahead ($early collected early)$what: the same model every way"
done

# softmax: a feature owns K = 3 keys, and the bias K (the last of every
# clock's, stored, damped and added apart from the one pass); classes
# made from a9a's labels and one feature, as in net_multiclass.sh
awk '{ c = $1 == "+1" ? 1 : 3
       for (i = 2; i <= NF; i++) if ($i ~ /^40:/) c = $1 == "+1" ? 1 : 2
       $1 = c; print }' "$A9A" >"$T/mc.train"
binary=$A9A
A9A=$T/mc.train # the data every worker of lib.sh reads
one_worker mc --loss softmax
BOAR_PS_AHEAD=late one_worker mc_late --loss softmax
A9A=$binary
cmp "$T/mc.model" "$T/mc_late.model" ||
	fail "softmax: $(json_field "$T/mc.json" pulls_early) pulls collected early: the model differs from pulls collected after the push"
echo "softmax: $(json_field "$T/mc.json" pulls_early) of $(json_field "$T/mc.json" pulls_ahead) pulls collected early, the same model"

# a value it does not know is refused by name before anything connects
# (a typo would have measured the default)
expect_refused "BOAR_PS_AHEAD=cpy" \
	env BOAR_PS_AHEAD=cpy "$BOAR" train --ps 127.0.0.1:1 --worker 0/1 -q "$A9A"
grep -q "BOAR_PS_AHEAD is 'cpy'" "$T/err" || fail "BOAR_PS_AHEAD=cpy: $(cat "$T/err")"
exit 0
