/* fuzz_wire.c - libFuzzer harness for the frame decoder.
 *
 * Feeds arbitrary bytes to wire_decode_frame() under both receiver limits
 * (before and after the handshake), and re-encodes what decoded so that the
 * encoder's view of a valid message is exercised too (key lists of PUSH and
 * PULL, as lists and as bitmaps; a PUSH naming its pull, WIRE_F_PULLED; READY with its push
 * sequence number and durable flag), and decodes a PUSH's values left in
 * the frame (borrow_push_vals) as it decodes them copied. `make fuzz
 * FUZZ=wire` runs it under libFuzzer; tests/unit/test_net_fuzz_corpus.c
 * and the replay of tests/fuzz/corpus/wire/ (fuzz.h) run it in every
 * `make check`.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_msg m;
	memset(&m, 0, sizeof m);
	wire_decode_frame(data, size, WIRE_MAX_PAYLOAD_PREAUTH, &m);
	if (wire_decode_frame(data, size, WIRE_MAX_PAYLOAD, &m) == 0 &&
	    (m.type == WIRE_PUSH || m.type == WIRE_PULL) &&
	    wire_msg_list_keys(&m) == 0) {
		/* A decoded key list (or bitmap, listed) is strictly
		 * ascending: re-encoding it as a list, and as a bitmap where
		 * that is the smaller form (a sparse list's bitmap could be
		 * gigabytes), must give a frame that decodes to the same
		 * keys. */
		int forms = wire_keys_as_bits(m.keys, m.n_keys) ? 2 : 1;
		for (int bits = 0; bits < forms; bits++) {
			struct wire_out o;
			struct wire_msg back;
			memset(&back, 0, sizeof back);
			wire_out_init(&o);
			wire_begin(&o, WIRE_PULL, bits ? WIRE_F_BITS : 0);
			wire_put_u32(&o, m.req);
			wire_put_u64(&o, m.clock);
			wire_put_keys_as(&o, m.keys, m.n_keys, bits);
			if (wire_end(&o) == 0 &&
			    (wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD,
					       &back) != 0 ||
			     wire_msg_list_keys(&back) != 0 ||
			     back.n_keys != m.n_keys ||
			     (m.n_keys && memcmp(back.keys, m.keys,
						 m.n_keys * sizeof *m.keys))))
				__builtin_trap();
			wire_out_free(&o);
			wire_msg_free(&back);
		}
	}
	if (wire_decode_frame(data, size, WIRE_MAX_PAYLOAD, &m) == 0 &&
	    m.type == WIRE_PUSH && (m.flags & WIRE_F_PULLED)) {
		/* a push naming its pull carries no keys; re-encoded, it
		 * decodes to the same pull, count and value bits */
		struct wire_out o;
		struct wire_msg back;
		int f16 = (m.flags & WIRE_F_F16) != 0;
		memset(&back, 0, sizeof back);
		wire_out_init(&o);
		if (m.n_keys)
			__builtin_trap();
		wire_begin_push_pulled(&o, m.clock, m.seq, m.req, m.n_vals, f16);
		wire_put_vals(&o, m.vals, m.n_vals, f16);
		if (wire_end(&o) == 0 &&
		    (wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD,
				       &back) != 0 ||
		     back.req != m.req || back.n_vals != m.n_vals ||
		     back.seq != m.seq || back.clock != m.clock ||
		     (!f16 && m.n_vals &&
		      memcmp(back.vals, m.vals, m.n_vals * sizeof *m.vals))))
			__builtin_trap();
		wire_out_free(&o);
		wire_msg_free(&back);
	}
	if (wire_decode_frame(data, size, WIRE_MAX_PAYLOAD, &m) == 0 &&
	    m.type == WIRE_READY) {
		/* READY (clock, last push seq held, durable) round-trips */
		struct wire_out o;
		struct wire_msg back;
		memset(&back, 0, sizeof back);
		wire_out_init(&o);
		if (wire_put_ready(&o, m.clock, m.seq, m.durable) == 0 &&
		    (wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD,
				       &back) != 0 ||
		     back.clock != m.clock || back.seq != m.seq ||
		     back.durable != m.durable))
			__builtin_trap();
		wire_out_free(&o);
		wire_msg_free(&back);
	}
	/* a push's values left in the frame (as a shard's lanes take them,
	 * borrow_push_vals) are those the copy gives, and a frame is
	 * refused alike either way */
	struct wire_msg lent;
	memset(&lent, 0, sizeof lent);
	lent.borrow_push_vals = 1;
	int copied = wire_decode_frame(data, size, WIRE_MAX_PAYLOAD, &m);
	if (copied != wire_decode_frame(data, size, WIRE_MAX_PAYLOAD, &lent) ||
	    (copied == 0 && m.type == WIRE_PUSH &&
	     (lent.n_vals != m.n_vals ||
	      (m.n_vals && memcmp(lent.push_vals, m.push_vals,
				  (size_t)m.n_vals * 4)))))
		__builtin_trap();
	wire_msg_free(&lent);
	wire_msg_free(&m);
	return 0;
}
