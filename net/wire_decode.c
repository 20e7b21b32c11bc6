/* wire_decode.c - bounds-checked decoding of parameter-server frames.
 *
 * The format is described in wire.h. Decoding goes through a cursor (struct
 * rd) whose every read checks the bytes left first and latches a failure, so
 * a message decoder reads its fields in order and looks at the latch once at
 * the end; no read ever goes past the payload the header promised.
 */
#include <stdlib.h>
#include <string.h>

#include "net/f16.h"
#include "net/wire.h"

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint8_t rd_u8(struct rd *r)
{
	if (r->bad || r->end - r->p < 1) {
		r->bad = 1;
		return 0;
	}
	return *r->p++;
}

static uint32_t rd_u32(struct rd *r)
{
	if (r->bad || r->end - r->p < 4) {
		r->bad = 1;
		return 0;
	}
	uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 |
		     (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	return v;
}

static uint64_t rd_u64(struct rd *r)
{
	uint64_t lo = rd_u32(r);
	uint64_t hi = rd_u32(r);
	return lo | hi << 32;
}

static void rd_bytes(struct rd *r, void *out, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p, n);
	r->p += n;
}

/* LEB128, at most 10 bytes, and the 10th may only carry the top bit.
 * With 10 bytes left no byte can be missing, so the loop skips the
 * per-byte check (the common case: every varint but a frame's last few). */
static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;
	if (!r->bad && r->end - r->p >= 10) {
		const uint8_t *p = r->p;
		for (unsigned shift = 0; shift < 64; shift += 7) {
			uint8_t b = *p++;
			if (shift == 63 && b > 1)
				break;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80)) {
				r->p = p;
				return v;
			}
		}
		r->bad = 1;
		return 0;
	}
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b = rd_u8(r);
		if (r->bad)
			return 0;
		if (shift == 63 && b > 1) {
			r->bad = 1;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

/* Room for n elements of `size` bytes in *p (capacity *cap), the
 * message's arrays kept from frame to frame. @return 0, or -2 out of
 * memory. */
static int grow(void **p, uint32_t *cap, uint64_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	void *q = realloc(*p, (size_t)n * size);
	if (!q)
		return -2;
	*p = q;
	*cap = (uint32_t)n;
	return 0;
}

/* 8 bytes at p as a little-endian word (one load where the host is). */
static uint64_t load_le64(const uint8_t *p)
{
	uint64_t w = 0;
	for (unsigned j = 0; j < 8; j++)
		w |= (uint64_t)p[j] << (8 * j);
	return w;
}

/* The key after key: gap minus one d as sent. @return -1 past
 * WIRE_MAX_KEY. */
static int next_key(uint64_t *key, uint64_t d)
{
	if (d >= WIRE_MAX_KEY - *key)
		return -1;
	*key += d + 1;
	return *key >= WIRE_MAX_KEY ? -1 : 0;
}

/* Keys out[0..) after key from the one-byte gaps at the start of word w
 * (up to 8, at most max): the bytes before the first with its
 * continuation bit set. A dense run of keys is all such bytes, so this
 * decodes it a word at a time. The caller keeps key at least 8 * 128
 * below WIRE_MAX_KEY, so no key here can reach it. @return the keys
 * (bytes) taken. */
static unsigned one_byte_gaps(uint64_t w, unsigned max, uint64_t *key,
			      uint64_t *out)
{
	uint64_t stop = w & 0x8080808080808080ull;
	unsigned k = stop ? (unsigned)__builtin_ctzll(stop) >> 3 : 8;
	if (k > max)
		k = max;
	uint64_t v = *key;
	/* the whole word's loop apart: a constant count the compiler
	 * unrolls, for the run that is most of a dense list */
	if (k == 8) {
		for (unsigned j = 0; j < 8; j++) {
			v += ((w >> (8 * j)) & 0xff) + 1;
			out[j] = v;
		}
	} else {
		for (unsigned j = 0; j < k; j++) {
			v += ((w >> (8 * j)) & 0xff) + 1;
			out[j] = v;
		}
	}
	*key = v;
	return k;
}

/* A key list. The count is checked against the bytes left (every key takes
 * at least one byte) before anything is allocated, so a lying count cannot
 * make us allocate more than the frame's own size. Runs of one-byte gaps
 * are decoded 8 at a time (one_byte_gaps) wherever 8 bytes are left and
 * the keys cannot reach WIRE_MAX_KEY there; every other key goes through
 * rd_varint and next_key's checks. */
static int rd_keys(struct rd *r, struct wire_msg *m)
{
	uint64_t n = rd_varint(r);
	if (r->bad || n > (uint64_t)(r->end - r->p))
		return -1;
	int rc = grow((void **)&m->keys, &m->keys_cap, n, sizeof *m->keys);
	if (rc)
		return rc;
	uint64_t key = 0, i = 0;
	if (n) {
		key = rd_varint(r);
		if (r->bad || key >= WIRE_MAX_KEY)
			return -1;
		m->keys[i++] = key;
	}
	while (i < n) {
		if (r->end - r->p >= 8 && key < WIRE_MAX_KEY - 8 * 128) {
			uint64_t left = n - i;
			unsigned k = one_byte_gaps(load_le64(r->p),
						   left < 8 ? (unsigned)left : 8,
						   &key, m->keys + i);
			r->p += k;
			i += k;
			if (k == 8 || i == n)
				continue;
		}
		/* gap - 1 was sent: the next key is key + d + 1 */
		uint64_t d = rd_varint(r);
		if (r->bad || next_key(&key, d))
			return -1;
		m->keys[i++] = key;
	}
	m->n_keys = (uint32_t)n;
	return 0;
}

/* A key bitmap (wire.h): checked whole before it is taken (the first
 * bit set, the last word not 0, the last key below WIRE_MAX_KEY, the
 * count the bits' own), copied into m->bits. */
static int rd_key_bits(struct rd *r, struct wire_msg *m)
{
	uint64_t n = rd_varint(r), base = rd_varint(r), words = rd_varint(r);
	if (r->bad || n == 0 || words == 0 ||
	    words > (uint64_t)(r->end - r->p) / 8 || base >= WIRE_MAX_KEY ||
	    words > (WIRE_MAX_KEY - base + 63) / 64)
		return -1;
	int rc = grow((void **)&m->bits, &m->bits_cap, words, sizeof *m->bits);
	if (rc)
		return rc;
	uint64_t count = 0, *b = m->bits;
	for (uint64_t w = 0; w < words; w++) {
		b[w] = load_le64(r->p + 8 * w);
		count += (uint64_t)__builtin_popcountll(b[w]);
	}
	r->p += 8 * words;
	uint64_t last = base + 64 * (words - 1) + 63 -
			(uint64_t)__builtin_clzll(b[words - 1] | 1);
	if (!(b[0] & 1) || !b[words - 1] || last >= WIRE_MAX_KEY || count != n)
		return -1;
	m->base = base;
	m->n_words = (uint32_t)words;
	m->n_keys = (uint32_t)n;
	return 0;
}

/* A frame's keys in the form its flags say: a bitmap or a list. */
static int rd_key_set(struct rd *r, struct wire_msg *m, int bits)
{
	return bits ? rd_key_bits(r, m) : rd_keys(r, m);
}

/* n values into m->vals, or into m->into where `place` allows it and
 * the caller asked for exactly n there (in_place). */
static int rd_vals_at(struct rd *r, struct wire_msg *m, uint64_t n, int f16,
		      int place)
{
	size_t each = f16 ? 2 : 4;
	if (r->bad || n > (uint64_t)(r->end - r->p) / each)
		return -1;
	float *v = m->into;
	m->in_place = place && v && n == m->n_into;
	if (!m->in_place) {
		int rc = grow((void **)&m->vals, &m->vals_cap, n,
			      sizeof *m->vals);
		if (rc)
			return rc;
		v = m->vals;
	}
	if (f16) {
		f16_decode(v, r->p, (size_t)n);
	} else if (WIRE_LE_HOST) {
		if (n)
			memcpy(v, r->p, (size_t)n * 4);
	} else {
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *p = r->p + 4 * i;
			uint32_t b = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
				     (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24;
			memcpy(&v[i], &b, 4);
		}
	}
	r->p += n * each;
	m->n_vals = (uint32_t)n;
	return 0;
}

static int rd_vals(struct rd *r, struct wire_msg *m, uint64_t n, int f16)
{
	return rd_vals_at(r, m, n, f16, 0);
}

/* A PUSH's n values: left in the payload (push_vals) where the caller
 * allows it and they need no conversion, else decoded into vals. */
static int rd_push_vals(struct rd *r, struct wire_msg *m, uint64_t n,
			int f16)
{
	if (!m->borrow_push_vals || f16 || !WIRE_LE_HOST) {
		int rc = rd_vals(r, m, n, f16);
		m->push_vals = m->vals;
		return rc;
	}
	if (r->bad || n > (uint64_t)(r->end - r->p) / 4)
		return -1;
	m->push_vals = r->p;
	m->n_vals = (uint32_t)n;
	r->p += n * 4;
	return 0;
}

int wire_parse_header(const uint8_t *b, uint32_t max_payload,
		      struct wire_hdr *h)
{
	uint32_t magic = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
			 (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	uint32_t len = (uint32_t)b[8] | (uint32_t)b[9] << 8 |
		       (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
	uint16_t flags = (uint16_t)(b[6] | b[7] << 8);
	if (magic != WIRE_MAGIC || b[4] != WIRE_VERSION)
		return -1;
	if (b[5] == 0 || b[5] > WIRE_TYPE_MAX || (flags & ~WIRE_F_ALL))
		return -1;
	if ((flags & WIRE_F_PULLED) && b[5] != WIRE_PUSH)
		return -1;
	/* a bitmap is a key list's other form: a PULL's, or a PUSH's that
	 * carries its keys */
	if ((flags & WIRE_F_BITS) &&
	    ((b[5] != WIRE_PULL && b[5] != WIRE_PUSH) ||
	     (flags & WIRE_F_PULLED)))
		return -1;
	if (len > max_payload || len > WIRE_MAX_PAYLOAD)
		return -1;
	h->version = b[4];
	h->type = b[5];
	h->flags = flags;
	h->length = len;
	return 0;
}

int wire_decode(const struct wire_hdr *h, const uint8_t *payload,
		struct wire_msg *m)
{
	struct rd r = { payload, payload + h->length, 0 };
	int f16 = h->flags & WIRE_F_F16;
	int rc = 0;

	/* Reset the scalars; keep the arrays for reuse, and the caller's
	 * place for an answer's values. */
	uint64_t *keys = m->keys, *bits = m->bits;
	float *vals = m->vals, *into = m->into;
	uint32_t kc = m->keys_cap, vc = m->vals_cap, n_into = m->n_into;
	uint32_t bc = m->bits_cap;
	uint8_t borrow = m->borrow_push_vals;
	memset(m, 0, sizeof *m);
	m->keys = keys;
	m->vals = vals;
	m->bits = bits;
	m->keys_cap = kc;
	m->vals_cap = vc;
	m->bits_cap = bc;
	m->into = into;
	m->n_into = n_into;
	m->borrow_push_vals = borrow;
	m->type = h->type;
	m->flags = h->flags;

	switch (h->type) {
	case WIRE_HELLO:
		m->rank = rd_u32(&r);
		m->n_workers = rd_u32(&r);
		m->dim = rd_u64(&r);
		m->clock = rd_u64(&r);
		rd_bytes(&r, m->nonce, WIRE_NONCE_LEN);
		if (!r.bad && (m->n_workers == 0 || m->rank >= m->n_workers ||
			       m->n_workers > 65536 || m->dim == 0 ||
			       m->dim > WIRE_MAX_KEY))
			return -1;
		break;
	case WIRE_WELCOME:
		m->shard = rd_u32(&r);
		m->n_shards = rd_u32(&r);
		m->lo = rd_u64(&r);
		m->hi = rd_u64(&r);
		m->clock = rd_u64(&r);
		m->auth = rd_u8(&r);
		rd_bytes(&r, m->nonce, WIRE_NONCE_LEN);
		rd_bytes(&r, m->mac, WIRE_MAC_LEN);
		if (!r.bad && (m->n_shards == 0 || m->shard >= m->n_shards ||
			       m->lo > m->hi || m->hi > WIRE_MAX_KEY ||
			       m->auth > 1))
			return -1;
		break;
	case WIRE_AUTH:
		rd_bytes(&r, m->mac, WIRE_MAC_LEN);
		break;
	case WIRE_PUSH:
		m->clock = rd_u64(&r);
		m->seq = rd_u64(&r);
		if (h->flags & WIRE_F_PULLED) { /* the keys of pull req */
			m->req = rd_u32(&r);
			if ((rc = rd_push_vals(&r, m, rd_varint(&r), f16)))
				return rc;
			break;
		}
		if ((rc = rd_key_set(&r, m, h->flags & WIRE_F_BITS)) ||
		    (rc = rd_push_vals(&r, m, m->n_keys, f16)))
			return rc;
		break;
	case WIRE_PULL:
		m->req = rd_u32(&r);
		m->clock = rd_u64(&r);
		if ((rc = rd_key_set(&r, m, h->flags & WIRE_F_BITS)))
			return rc;
		break;
	case WIRE_PULL_REPLY:
		m->req = rd_u32(&r);
		m->staleness = rd_u32(&r);
		if ((rc = rd_vals_at(&r, m, rd_varint(&r), f16, 1)))
			return rc;
		break;
	case WIRE_CLOCK:
	case WIRE_DONE:
		m->clock = rd_u64(&r);
		break;
	case WIRE_READY:
		m->clock = rd_u64(&r);
		m->seq = rd_u64(&r);
		m->durable = rd_u8(&r);
		if (!r.bad && m->durable > 1)
			return -1;
		break;
	case WIRE_HEARTBEAT:
	case WIRE_SHUTDOWN:
		break;
	case WIRE_GATHER:
		m->req = rd_u32(&r);
		m->lo = rd_u64(&r);
		m->count = rd_u32(&r);
		if (!r.bad && m->lo >= WIRE_MAX_KEY)
			return -1;
		break;
	case WIRE_GATHER_REPLY: /* in place too: a model's slice */
		m->req = rd_u32(&r);
		m->lo = rd_u64(&r);
		if ((rc = rd_vals_at(&r, m, rd_varint(&r), f16, 1)))
			return rc;
		break;
	case WIRE_STATS:
		m->req = rd_u32(&r);
		break;
	case WIRE_STATS_REPLY:
		m->req = rd_u32(&r);
		m->stats.max_staleness = rd_u64(&r);
		m->stats.pushes = rd_u64(&r);
		m->stats.pulls = rd_u64(&r);
		m->stats.keys_pushed = rd_u64(&r);
		m->stats.keys_pulled = rd_u64(&r);
		m->stats.bytes_in = rd_u64(&r);
		m->stats.bytes_out = rd_u64(&r);
		m->stats.min_clock = rd_u64(&r);
		m->stats.live_workers = rd_u32(&r);
		m->stats.dropped_workers = rd_u32(&r);
		break;
	case WIRE_ERROR: {
		m->code = (int32_t)rd_u32(&r);
		uint64_t n = rd_varint(&r);
		if (r.bad || n >= sizeof m->text)
			return -1;
		rd_bytes(&r, m->text, (size_t)n);
		m->text[n] = '\0';
		break;
	}
	default:
		return -1;
	}
	if (r.bad || r.p != r.end)
		return -1;
	return 0;
}

int wire_decode_frame(const uint8_t *buf, size_t len, uint32_t max_payload,
		      struct wire_msg *m)
{
	struct wire_hdr h;
	if (len < WIRE_HDR_LEN || wire_parse_header(buf, max_payload, &h))
		return -1;
	if (len - WIRE_HDR_LEN != h.length)
		return -1;
	return wire_decode(&h, buf + WIRE_HDR_LEN, m);
}

void wire_msg_free(struct wire_msg *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	free(m->bits);
	m->keys = NULL;
	m->vals = NULL;
	m->bits = NULL;
	m->keys_cap = m->vals_cap = m->bits_cap = 0;
}

int wire_msg_list_keys(struct wire_msg *m)
{
	if (!(m->flags & WIRE_F_BITS))
		return 0;
	int rc = grow((void **)&m->keys, &m->keys_cap, m->n_keys,
		      sizeof *m->keys);
	if (rc)
		return rc;
	uint32_t i = 0;
	for (uint32_t w = 0; w < m->n_words; w++)
		for (uint64_t x = m->bits[w]; x; x &= x - 1)
			m->keys[i++] = m->base + 64 * (uint64_t)w +
				       (uint64_t)__builtin_ctzll(x);
	m->flags &= (uint16_t)~WIRE_F_BITS;
	return 0;
}
