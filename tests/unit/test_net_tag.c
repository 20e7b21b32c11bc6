/* test_net_tag.c - a frame's tag is RFC 8439's ChaCha20-Poly1305 tag of
 * the empty message with the frame as associated data, whichever library
 * computes it (auth.c: libsodium for small frames, libcrypto for large
 * ones): checked against libsodium's for frame sizes on both sides of the
 * switch, on a sealed frame read back (unseal), and a flipped byte
 * anywhere in a large frame (its header, its payload, its tag) refused.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "net/auth.h"
#include "net/wire.h"
#include "testutil.h"

/* libsodium's tag of data[0..len) under key, frame counter n. */
static void sodium_tag(const uint8_t *key, uint64_t n, const uint8_t *data,
		       size_t len, uint8_t tag[NET_TAG_LEN])
{
	uint8_t nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES] = {0};
	for (int i = 0; i < 8; i++)
		nonce[4 + i] = (uint8_t)(n >> (8 * i));
	uint8_t none[1] = {0};
	unsigned long long tl;
	crypto_aead_chacha20poly1305_ietf_encrypt_detached(
		none, tag, &tl, none, 0, data, len, NULL, nonce, key);
}

/* A PUSH-like frame of payload bytes (a raw blob), sealed. */
static void frame(struct wire_out *o, size_t payload, unsigned seed)
{
	o->len = 0;
	wire_begin(o, WIRE_PUSH, 0);
	uint8_t *blob = malloc(payload ? payload : 1);
	for (size_t i = 0; i < payload; i++)
		blob[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
	wire_put_bytes(o, blob, payload);
	free(blob);
	wire_end(o);
}

int main(void)
{
	CHECK(sodium_init() >= 0, "libsodium");
	uint8_t key[NET_KEY_LEN], nc[WIRE_NONCE_LEN], ns[WIRE_NONCE_LEN];
	for (int i = 0; i < NET_KEY_LEN; i++)
		key[i] = (uint8_t)(3 * i + 1);
	memset(nc, 7, sizeof nc);
	memset(ns, 9, sizeof ns);
	struct net_session tx, rx;
	net_session_start(&tx, key, 0, nc, ns);
	net_session_start(&rx, key, 1, nc, ns);
	struct wire_out o = {0};
	const size_t sizes[] = { 0, 1, 100, 16 * 1024 - WIRE_HDR_LEN - 1,
				 16 * 1024 - WIRE_HDR_LEN, 16 * 1024,
				 70000, 1u << 20, (3u << 20) + 5 };
	for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
		frame(&o, sizes[t], (unsigned)t);
		uint64_t n = tx.sent;
		CHECK(net_seal(&tx, &o) == 0, "seal of %zu bytes", sizes[t]);
		size_t body = o.len - NET_TAG_LEN;
		uint8_t want[NET_TAG_LEN];
		sodium_tag(tx.send_key, n, o.buf, body, want);
		CHECK(!memcmp(want, o.buf + body, NET_TAG_LEN),
		      "the tag of a %zu-byte frame is not libsodium's",
		      body);
		CHECK(net_unseal(&rx, o.buf, o.buf + WIRE_HDR_LEN,
				 (uint32_t)(o.len - WIRE_HDR_LEN)) ==
			      (long)(body - WIRE_HDR_LEN),
		      "unseal of a %zu-byte frame", body);
	}
	/* a large frame with one byte flipped, at the header, the middle
	 * and the tag: refused, and the counter does not move */
	const size_t at[] = { 9, 12 + 500000, 0 };
	for (int k = 0; k < 3; k++) {
		frame(&o, 1u << 20, 99);
		CHECK(net_seal(&tx, &o) == 0, "seal");
		size_t pos = at[k] ? at[k] : o.len - 3;
		o.buf[pos] ^= 0x10;
		uint64_t before = rx.received;
		CHECK(net_unseal(&rx, o.buf, o.buf + WIRE_HDR_LEN,
				 (uint32_t)(o.len - WIRE_HDR_LEN)) == -1,
		      "a frame with byte %zu flipped was accepted", pos);
		CHECK(rx.received == before, "a refused frame was counted");
		rx.received++; /* as if it had come: the next one lines up */
	}
	free(o.buf);
	net_session_end(&tx);
	net_session_end(&rx);
	return TEST_RESULT();
}
