/* wire.h - the parameter server's frame format (library-internal).
 *
 * Every message is one frame: a fixed 12-byte header followed by `length`
 * payload bytes. All integers are little-endian.
 *
 *   offset 0  u32 magic   "BOAR" (0x52414f42 read as LE)
 *          4  u8  version WIRE_VERSION; a peer speaking another one is dropped
 *          5  u8  type    enum wire_type
 *          6  u16 flags   WIRE_F_* (value encoding)
 *          8  u32 length  payload bytes, <= the receiver's maximum
 *
 * With a secret, every frame after the handshake ends in a 16-byte tag
 * (auth.h), counted in length and checked before the payload is decoded.
 *
 * A PUSH marked WIRE_F_PULLED carries no key list: its values are for the
 * keys of a PULL this connection sent (named by the pull's req), in their
 * order, as many; a shard keeps the key lists of each connection's last
 * WIRE_PULLS_KEPT pulls for that (a worker pushes the keys it pulled for
 * the clock, and has asked the next clock's pull before the push goes).
 *
 * Key lists are strictly ascending 64-bit keys written as a varint count,
 * the first key as a varint, then each gap minus one as a varint: a dense
 * run of keys costs one byte per key, a sparse list a few. A PULL, or a
 * PUSH that carries its keys, marked WIRE_F_BITS writes them as a bitmap
 * instead: the varint count, the first key (base) as a varint, a varint
 * word count, then the words as u64; bit b of word w is key base + 64 w
 * + b, bit 0 of word 0 is set and the last word is not 0. A worker's
 * clock asks for a third to nine
 * tenths of a shard's range, where the bitmap takes a fraction of a byte
 * a key and the shard walks it in place of a list of 8-byte keys
 * (wire_keys_as_bits says which is smaller). Values follow as float32 or,
 * with WIRE_F_F16, IEEE half precision (f16.h).
 *
 * The decoder trusts nothing: every length, count and key is checked
 * against the bytes actually present and the limits the caller gives, and a
 * frame whose payload has bytes left over is refused. It is fuzzed
 * (tests/fuzz/fuzz_wire.c).
 */
#ifndef BOAR_NET_WIRE_H
#define BOAR_NET_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Float32 values travel as their bytes where the host is little-endian
 * (one memcpy, a shard's answer written in place), elsewhere value by
 * value; float16 goes through f16.h's arrays, which read and write
 * little-endian halves on any host. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WIRE_LE_HOST 1
#else
#define WIRE_LE_HOST 0
#endif

#define WIRE_MAGIC 0x52414f42u
/* 2: PUSH and READY carry push sequence numbers; 3: a PUSH may leave out
 * its keys (WIRE_F_PULLED), which a version-2 shard would misread; 4: a
 * PULL's or a PUSH's keys may be a bitmap (WIRE_F_BITS) */
#define WIRE_VERSION 4
#define WIRE_HDR_LEN 12
/* Largest payload a shard accepts from an authenticated peer, and from a
 * peer that has not finished the handshake (a HELLO or AUTH is tiny). */
#define WIRE_MAX_PAYLOAD (64u << 20)
#define WIRE_MAX_PAYLOAD_PREAUTH 256u
#define WIRE_NONCE_LEN 32
#define WIRE_MAC_LEN 32
/* Keys are model coordinates; anything above this is garbage. */
#define WIRE_MAX_KEY (1ull << 40)
/* A shard keeps the key lists of at least each connection's last this
 * many PULLs for the pushes that name them (WIRE_F_PULLED): a worker
 * refers only to one no more pulls back on the same connection. */
#define WIRE_PULLS_KEPT 4

enum wire_type {
	WIRE_HELLO = 1,        /* worker -> shard: who I am, a nonce */
	WIRE_WELCOME = 2,      /* shard -> worker: my range, my nonce, my proof */
	WIRE_AUTH = 3,         /* worker -> shard: my proof */
	WIRE_PUSH = 4,         /* keys + deltas to add, numbered per worker
				  and shard (seq) so a resent one is known */
	WIRE_PULL = 5,         /* keys wanted, at the worker's clock */
	WIRE_PULL_REPLY = 6,   /* values of the keys asked, in order */
	WIRE_CLOCK = 7,        /* the worker finished a clock */
	WIRE_HEARTBEAT = 8,    /* still alive (any frame counts) */
	WIRE_DONE = 9,         /* the worker finished training */
	WIRE_GATHER = 10,      /* a range of final values */
	WIRE_GATHER_REPLY = 11,
	WIRE_STATS = 12,
	WIRE_STATS_REPLY = 13,
	WIRE_SHUTDOWN = 14,    /* checkpoint and exit */
	WIRE_ERROR = 15,       /* why the peer is about to be dropped */
	WIRE_READY = 16,       /* shard -> worker: joined, at this clock; the
				  last push seq of this worker it holds and
				  whether it logs pushes (then unanswered
				  pushes are to be resent after a reconnect) */
	WIRE_TYPE_MAX = 16,
};

/* An ERROR code outside the BOAR_E* range: the rank named in HELLO is
 * held by another live connection. The client retries it (the holder may
 * be a dead worker's socket not yet timed out) until its reconnect
 * deadline. */
#define WIRE_ERR_RANK_TAKEN 1000
/* An ERROR code: a backup shard (replica.h) serves workers only once its
 * primary is gone. The client retries (on the primary's address too). */
#define WIRE_ERR_STANDBY 1001

enum {
	WIRE_F_F16 = 1,  /* values are IEEE half precision; on a PULL: answer
			    so where every value is a finite half */
	WIRE_F_HELD = 2, /* PULL_REPLY: held until the asker's own clock
			    reached the pull's, so it counts every push the
			    asker sent before that CLOCK; without it, an
			    answer as the request arrived (client.h) */
	WIRE_F_REPLICA = 4, /* HELLO: a primary's link to its backup (for
			       worker R), not worker R itself */
	WIRE_F_PULLED = 8, /* PUSH: no key list; the values are for the keys
			      of this connection's PULL number req */
	WIRE_F_BITS = 16,  /* PULL, PUSH with keys: they are a bitmap
			      (above) */
	WIRE_F_ALL = WIRE_F_F16 | WIRE_F_HELD | WIRE_F_REPLICA | WIRE_F_PULLED |
		     WIRE_F_BITS,
};

struct wire_hdr {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t length;
};

struct wire_stats {
	uint64_t max_staleness; /* largest clock gap a pull was served with */
	uint64_t pushes, pulls;
	uint64_t keys_pushed, keys_pulled;
	uint64_t bytes_in, bytes_out;
	uint64_t min_clock;     /* slowest live worker's clock */
	uint32_t live_workers;
	uint32_t dropped_workers;
};

/* A decoded frame. Scalars that a type does not carry are left zero; keys
 * and vals point into the wire_msg's own arrays (grown by the decoder,
 * released by wire_msg_free), valid until the next decode. */
struct wire_msg {
	uint8_t type;
	uint16_t flags;
	uint32_t rank, n_workers;   /* HELLO */
	uint32_t shard, n_shards;   /* WELCOME */
	uint32_t req;               /* PULL, GATHER, STATS and their replies;
				       PUSH with WIRE_F_PULLED: the pull */
	uint32_t staleness;         /* PULL_REPLY: the gap it was served with */
	uint8_t auth;               /* WELCOME: an AUTH must follow */
	uint64_t dim, clock, lo, hi;
	uint64_t seq;               /* PUSH: its number; READY: the last held */
	uint8_t durable;            /* READY: the shard logs pushes */
	uint32_t count;             /* GATHER: values wanted */
	uint8_t nonce[WIRE_NONCE_LEN];
	uint8_t mac[WIRE_MAC_LEN];
	int32_t code;               /* ERROR */
	char text[256];             /* ERROR, NUL-terminated */
	struct wire_stats stats;    /* STATS_REPLY */
	uint32_t n_keys;            /* PUSH, PULL: keys (a PUSH with
				       WIRE_F_PULLED: 0); */
	uint32_t n_vals;            /* PUSH, *_REPLY: values */
	uint64_t *keys;             /* a list's keys (not WIRE_F_BITS) */
	float *vals;
	uint32_t keys_cap, vals_cap;
	/* A PULL or PUSH with WIRE_F_BITS: its n_keys keys as the bitmap of
	 * n_words words bits from key base (keys is not filled:
	 * wire_msg_list_keys does that for a peer that wants a list) */
	uint64_t *bits, base;
	uint32_t n_words, bits_cap;
	/* Set by the caller, kept by the decoder: a PULL_REPLY or
	 * GATHER_REPLY with exactly n_into values decodes them into `into`
	 * (the caller's array) and
	 * sets in_place, not into vals: a clock's answer is megabytes, and
	 * a copy out of vals was one more pass over them. */
	float *into;
	uint32_t n_into;
	uint8_t in_place;
	/* Set by the caller, kept by the decoder: a PUSH's float32 values
	 * may stay in the payload where the wire's floats are the host's
	 * (a shard applies them from there: a copy into vals was one more
	 * pass over a clock's megabytes). */
	uint8_t borrow_push_vals;
	/* PUSH: its n_vals values, host floats at any alignment: the
	 * payload's bytes where borrow_push_vals allowed them (valid while
	 * the payload is), else vals. */
	const void *push_vals;
};

/* An output buffer frames are appended to. */
struct wire_out {
	uint8_t *buf;
	size_t len, cap;
	size_t frame;  /* offset of the frame being written */
	int failed;    /* an allocation failed: the buffer is unusable */
	int f16_lost;  /* a value of this frame written as float16 is not a
			  finite half (too large, or not finite before) */
};

/* ---- decoding */

/* Checks the header at buf (at least WIRE_HDR_LEN bytes).
 * @return 0 and *h; -1 if the magic, version, type, flags or length (over
 *         max_payload) is wrong: the peer must be dropped. */
int wire_parse_header(const uint8_t *buf, uint32_t max_payload,
		      struct wire_hdr *h);

/* Decodes one payload of a header already accepted by wire_parse_header.
 * @return 0, -1 on any malformed field (truncated, over a limit, keys not
 *         ascending, trailing bytes), -2 when out of memory. */
int wire_decode(const struct wire_hdr *h, const uint8_t *payload,
		struct wire_msg *m);

/* Header + payload in one buffer of len bytes (used by the fuzzer and the
 * tests). @return as wire_decode, -1 also for a short or long buffer. */
int wire_decode_frame(const uint8_t *buf, size_t len, uint32_t max_payload,
		      struct wire_msg *m);

void wire_msg_free(struct wire_msg *m);

/* A PULL's or PUSH's keys as a list in m->keys, from its bitmap where it
 * came as one (then the flag WIRE_F_BITS is cleared). @return 0, or -2
 * when out of memory. */
int wire_msg_list_keys(struct wire_msg *m);

/* ---- encoding: wire_begin, wire_put_*, wire_end per frame */

void wire_out_init(struct wire_out *o);
void wire_out_free(struct wire_out *o);
void wire_out_reset(struct wire_out *o);
void wire_begin(struct wire_out *o, int type, int flags);
void wire_put_u8(struct wire_out *o, uint8_t v);
void wire_put_u32(struct wire_out *o, uint32_t v);
void wire_put_u64(struct wire_out *o, uint64_t v);
void wire_put_bytes(struct wire_out *o, const void *p, size_t n);
void wire_put_varint(struct wire_out *o, uint64_t v);
/* keys must be strictly ascending. */
void wire_put_keys(struct wire_out *o, const uint64_t *keys, uint32_t n);
/* Whether n ascending keys take fewer bytes as a bitmap (WIRE_F_BITS)
 * than as a list. */
int wire_keys_as_bits(const uint64_t *keys, uint32_t n);
/* The bitmap form of n >= 1 strictly ascending keys. */
void wire_put_key_bits(struct wire_out *o, const uint64_t *keys, uint32_t n);
/* The same bytes, from words the caller set already: bit i of bits[w]
 * is set exactly where key bits_base + 64 w + i is one of a set whose
 * keys from keys[0] to keys[n - 1] are keys[0..n) (bits_base a multiple
 * of 64): the frame's words shifted out of them, not a bit set a key. */
void wire_put_key_bits_from(struct wire_out *o, const uint64_t *keys,
			    uint32_t n, const uint64_t *bits,
			    uint64_t bits_base);
/* keys as a bitmap (bits: the frame is marked WIRE_F_BITS) or a list. */
void wire_put_keys_as(struct wire_out *o, const uint64_t *keys, uint32_t n,
		      int bits);
void wire_put_vals(struct wire_out *o, const float *v, uint32_t n, int f16);
/* Values base[keys[i] - off] for i < n: a pull reply straight from a shard. */
void wire_put_vals_at(struct wire_out *o, const float *base,
		      const uint64_t *keys, uint32_t n, uint64_t off, int f16);
/* n bytes appended to the frame for the caller to fill, or NULL when an
 * allocation failed. */
uint8_t *wire_put_space(struct wire_out *o, size_t n);
/* v as the wire's float32 (little-endian) at p. */
static inline void wire_f32_at(uint8_t *p, float v)
{
	uint32_t b;
	memcpy(&b, &v, 4);
	p[0] = (uint8_t)b;
	p[1] = (uint8_t)(b >> 8);
	p[2] = (uint8_t)(b >> 16);
	p[3] = (uint8_t)(b >> 24);
}
/* Patches the header's length. @return 0, or -1 if an allocation failed
 * or the payload is over WIRE_MAX_PAYLOAD (the frame is then removed). */
int wire_end(struct wire_out *o);

/* Ready-made frames. */
/* The start of a PUSH of n values for the keys of this connection's pull
 * number req (WIRE_F_PULLED): the caller appends the n values
 * (wire_put_vals) and ends the frame. */
void wire_begin_push_pulled(struct wire_out *o, uint64_t clock, uint64_t seq,
			    uint32_t req, uint32_t n, int f16);
/* READY: the clock the worker continues from, the last push seq of it
 * the shard holds, whether the shard logs pushes. */
int wire_put_ready(struct wire_out *o, uint64_t clock, uint64_t seq,
		   int durable);
int wire_put_error(struct wire_out *o, int32_t code, const char *text);
int wire_put_stats(struct wire_out *o, uint32_t req,
		   const struct wire_stats *s);

/* Bytes a varint of v takes (1..10). */
static inline unsigned wire_varint_len(uint64_t v)
{
	unsigned n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

#endif
