/* wire.c - encoding of parameter-server frames (the format: wire.h; the
 * decoder: wire_decode.c).
 */
#include <stdlib.h>
#include <string.h>

#include "net/f16.h"
#include "net/wire.h"

void wire_out_init(struct wire_out *o)
{
	memset(o, 0, sizeof *o);
}

void wire_out_free(struct wire_out *o)
{
	free(o->buf);
	wire_out_init(o);
}

void wire_out_reset(struct wire_out *o)
{
	o->len = 0;
	o->frame = 0;
	o->failed = 0;
}

static uint8_t *reserve(struct wire_out *o, size_t n)
{
	if (o->failed)
		return NULL;
	if (o->cap - o->len < n) {
		size_t cap = o->cap ? o->cap : 256;
		while (cap - o->len < n)
			cap *= 2;
		uint8_t *b = realloc(o->buf, cap);
		if (!b) {
			o->failed = 1;
			return NULL;
		}
		o->buf = b;
		o->cap = cap;
	}
	uint8_t *p = o->buf + o->len;
	o->len += n;
	return p;
}

static void store_le64(uint8_t *p, uint64_t v)
{
	for (unsigned j = 0; j < 8; j++)
		p[j] = (uint8_t)(v >> (8 * j));
}

static void le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

void wire_begin(struct wire_out *o, int type, int flags)
{
	o->frame = o->len;
	o->f16_lost = 0;
	uint8_t *p = reserve(o, WIRE_HDR_LEN);
	if (!p)
		return;
	le32(p, WIRE_MAGIC);
	p[4] = WIRE_VERSION;
	p[5] = (uint8_t)type;
	p[6] = (uint8_t)flags;
	p[7] = (uint8_t)(flags >> 8);
	le32(p + 8, 0);
}

void wire_put_u8(struct wire_out *o, uint8_t v)
{
	uint8_t *p = reserve(o, 1);
	if (p)
		*p = v;
}

void wire_put_u32(struct wire_out *o, uint32_t v)
{
	uint8_t *p = reserve(o, 4);
	if (p)
		le32(p, v);
}

void wire_put_u64(struct wire_out *o, uint64_t v)
{
	wire_put_u32(o, (uint32_t)v);
	wire_put_u32(o, (uint32_t)(v >> 32));
}

void wire_put_bytes(struct wire_out *o, const void *src, size_t n)
{
	uint8_t *p = reserve(o, n);
	if (p && n)
		memcpy(p, src, n);
}

/* Writes v as a varint at p. @return the byte after it. */
static uint8_t *put_varint_at(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

void wire_put_varint(struct wire_out *o, uint64_t v)
{
	uint8_t *p = reserve(o, wire_varint_len(v));
	if (p)
		put_varint_at(p, v);
}

/* Keys encoded per reserve: room for the worst case (10 bytes a key) of a
 * block is taken, the block written straight into it, and what it did not
 * use given back, so the buffer never grows past the frame's size by more
 * than one block's worst case. */
#define KEYS_BLOCK 4096

void wire_put_keys(struct wire_out *o, const uint64_t *keys, uint32_t n)
{
	wire_put_varint(o, n);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n;) {
		uint32_t m = n - i < KEYS_BLOCK ? n - i : KEYS_BLOCK;
		uint8_t *p = reserve(o, (size_t)m * 10), *at = p;
		if (!p)
			return;
		uint32_t e = i + m;
		if (i == 0) {
			p = put_varint_at(p, keys[0]);
			prev = keys[0];
			i++;
		}
		for (; i < e; i++) {
			uint64_t d = keys[i] - prev - 1;
			prev = keys[i];
			if (d < 0x80)
				*p++ = (uint8_t)d;
			else
				p = put_varint_at(p, d);
		}
		o->len -= (size_t)m * 10 - (size_t)(p - at);
	}
}

/* The bitmap takes 8 bytes per 64 keys of the span, a list at least a
 * byte a key. */
int wire_keys_as_bits(const uint64_t *keys, uint32_t n)
{
	return n && (keys[n - 1] - keys[0]) / 64 * 8 + 8 < n;
}

/* A bitmap's count, first key and words (*words) of keys[0..n), and the
 * room for its words (NULL: out of memory). */
static uint8_t *put_bits_head(struct wire_out *o, const uint64_t *keys,
			      uint32_t n, uint64_t *words)
{
	*words = (keys[n - 1] - keys[0]) / 64 + 1;
	wire_put_varint(o, n);
	wire_put_varint(o, keys[0]);
	wire_put_varint(o, *words);
	return reserve(o, (size_t)*words * 8);
}

void wire_put_key_bits(struct wire_out *o, const uint64_t *keys, uint32_t n)
{
	uint64_t base = keys[0], words;
	uint8_t *p = put_bits_head(o, keys, n, &words);
	if (!p)
		return;
	memset(p, 0, (size_t)words * 8);
	/* a word's bits so far kept in a register and stored whole with
	 * every key, no branch: setting them byte by byte read back each
	 * last store, and storing a word only as the keys left it
	 * mispredicted (bench/wire_rate, 45% dense: 0.64 and 0.92 ns a key
	 * against 0.60) */
	uint64_t w = 0, x = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t d = keys[i] - base;
		x = (d >> 6 == w ? x : 0) | 1ull << (d & 63);
		w = d >> 6;
		store_le64(p + 8 * w, x);
	}
}

void wire_put_key_bits_from(struct wire_out *o, const uint64_t *keys,
			    uint32_t n, const uint64_t *bits,
			    uint64_t bits_base)
{
	uint64_t base = keys[0], words;
	uint8_t *p = put_bits_head(o, keys, n, &words);
	if (!p)
		return;
	/* word w of the frame: the source's bits from base + 64 w on, two
	 * source words shifted together (none past keys[n - 1]'s) */
	const uint64_t *src = bits + ((base - bits_base) >> 6);
	unsigned s = (unsigned)((base - bits_base) & 63);
	uint64_t last = (keys[n - 1] - bits_base) / 64 - (base - bits_base) / 64;
	/* the last word ends at keys[n - 1]: the next shard's keys off */
	unsigned top = (unsigned)((keys[n - 1] - base) & 63);
	uint64_t end_mask = top < 63 ? (2ull << top) - 1 : ~0ull;
	for (uint64_t w = 0; w < words; w++) {
		uint64_t x = src[w] >> s;
		if (s && w + 1 <= last)
			x |= src[w + 1] << (64 - s);
		store_le64(p + 8 * w, w + 1 == words ? x & end_mask : x);
	}
}

void wire_put_keys_as(struct wire_out *o, const uint64_t *keys, uint32_t n,
		      int bits)
{
	if (bits)
		wire_put_key_bits(o, keys, n);
	else
		wire_put_keys(o, keys, n);
}

uint8_t *wire_put_space(struct wire_out *o, size_t n)
{
	return reserve(o, n);
}

void wire_put_vals(struct wire_out *o, const float *v, uint32_t n, int f16)
{
	uint8_t *p = reserve(o, (size_t)n * (f16 ? 2 : 4));
	if (!p)
		return;
	if (f16) {
		f16_encode(p, v, n);
		o->f16_lost |= !f16_all_finite(p, n);
	} else if (WIRE_LE_HOST && n)
		memcpy(p, v, (size_t)n * 4);
	else
		for (uint32_t i = 0; i < n; i++)
			wire_f32_at(p + (size_t)i * 4, v[i]);
}

void wire_put_vals_at(struct wire_out *o, const float *base,
		      const uint64_t *keys, uint32_t n, uint64_t off, int f16)
{
	uint8_t *p = reserve(o, (size_t)n * (f16 ? 2 : 4));
	if (!p)
		return;
	if (f16) {
		f16_encode_at(p, base, keys, n, off);
		o->f16_lost |= !f16_all_finite(p, n);
	} else if (WIRE_LE_HOST)
		for (uint32_t i = 0; i < n; i++)
			memcpy(p + (size_t)i * 4, &base[keys[i] - off], 4);
	else
		for (uint32_t i = 0; i < n; i++)
			wire_f32_at(p + (size_t)i * 4, base[keys[i] - off]);
}

int wire_end(struct wire_out *o)
{
	if (o->failed)
		return -1;
	size_t payload = o->len - o->frame - WIRE_HDR_LEN;
	if (payload > WIRE_MAX_PAYLOAD) {
		o->len = o->frame;
		return -1;
	}
	le32(o->buf + o->frame + 8, (uint32_t)payload);
	return 0;
}

int wire_put_ready(struct wire_out *o, uint64_t clock, uint64_t seq,
		   int durable)
{
	wire_begin(o, WIRE_READY, 0);
	wire_put_u64(o, clock);
	wire_put_u64(o, seq);
	wire_put_u8(o, durable ? 1 : 0);
	return wire_end(o);
}

void wire_begin_push_pulled(struct wire_out *o, uint64_t clock, uint64_t seq,
			    uint32_t req, uint32_t n, int f16)
{
	wire_begin(o, WIRE_PUSH, WIRE_F_PULLED | (f16 ? WIRE_F_F16 : 0));
	wire_put_u64(o, clock);
	wire_put_u64(o, seq);
	wire_put_u32(o, req);
	wire_put_varint(o, n);
}

int wire_put_error(struct wire_out *o, int32_t code, const char *text)
{
	size_t n = strlen(text);
	if (n > 255)
		n = 255;
	wire_begin(o, WIRE_ERROR, 0);
	wire_put_u32(o, (uint32_t)code);
	wire_put_varint(o, n);
	wire_put_bytes(o, text, n);
	return wire_end(o);
}

int wire_put_stats(struct wire_out *o, uint32_t req,
		   const struct wire_stats *s)
{
	wire_begin(o, WIRE_STATS_REPLY, 0);
	wire_put_u32(o, req);
	wire_put_u64(o, s->max_staleness);
	wire_put_u64(o, s->pushes);
	wire_put_u64(o, s->pulls);
	wire_put_u64(o, s->keys_pushed);
	wire_put_u64(o, s->keys_pulled);
	wire_put_u64(o, s->bytes_in);
	wire_put_u64(o, s->bytes_out);
	wire_put_u64(o, s->min_clock);
	wire_put_u32(o, s->live_workers);
	wire_put_u32(o, s->dropped_workers);
	return wire_end(o);
}
