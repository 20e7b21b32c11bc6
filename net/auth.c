/* auth.c - shared-secret proofs for the shard handshake, on libsodium.
 *
 * No home-made cryptography: key derivation and MACs are libsodium's keyed
 * BLAKE2b (crypto_generichash), randomness is randombytes_buf, comparison is
 * sodium_memcmp. See auth.h for the exchange.
 */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "net/auth.h"
#include "net/wire.h"

static int ready(void)
{
	/* Idempotent and thread-safe: libsodium guards its own setup. */
	return sodium_init() < 0 ? -1 : 0;
}

int net_auth_key(const void *secret, size_t len, uint8_t key[NET_KEY_LEN])
{
	static const char ctx[] = "boar parameter server v1";
	if (ready())
		return -1;
	/* Domain-separate the derived key from any other use of the secret. */
	return crypto_generichash(key, NET_KEY_LEN, secret, len,
				  (const unsigned char *)ctx, sizeof ctx - 1);
}

int net_auth_load(const char *path, uint8_t key[NET_KEY_LEN],
		  boar_error *err)
{
	unsigned char buf[4096];
	FILE *f = fopen(path, "rb");
	if (!f)
		return boar_fail(err, BOAR_EIO, "%s: %s", path, strerror(errno));
	size_t n = fread(buf, 1, sizeof buf, f);
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return boar_fail(err, BOAR_EIO, "%s: read error", path);
	/* A trailing newline from `echo secret > file` is not part of it. */
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n < 16)
		return boar_fail(err, BOAR_EINVAL,
				 "%s: a secret needs at least 16 bytes", path);
	int rc = net_auth_key(buf, n, key);
	sodium_memzero(buf, sizeof buf);
	if (rc)
		return boar_fail(err, BOAR_EINVAL, "libsodium failed to start");
	return 0;
}

int net_random(void *buf, size_t n)
{
	if (ready())
		return -1;
	randombytes_buf(buf, n);
	return 0;
}

void net_auth_proof(const uint8_t key[NET_KEY_LEN], char role,
		    const uint8_t *a, const uint8_t *b, uint8_t proof[32])
{
	crypto_generichash_state st;
	crypto_generichash_init(&st, key, NET_KEY_LEN, 32);
	crypto_generichash_update(&st, (const unsigned char *)&role, 1);
	crypto_generichash_update(&st, a, 32);
	crypto_generichash_update(&st, b, 32);
	crypto_generichash_final(&st, proof, 32);
}

int net_auth_check(const uint8_t key[NET_KEY_LEN], char role,
		   const uint8_t *a, const uint8_t *b, const uint8_t *proof)
{
	uint8_t want[32];
	net_auth_proof(key, role, a, b, want);
	return sodium_memcmp(want, proof, 32) == 0;
}

/* ------------------------------------------------------------- sessions */

static void derive(const uint8_t key[NET_KEY_LEN], const char *label,
		   const uint8_t *nonce_c, const uint8_t *nonce_s,
		   uint8_t out[NET_KEY_LEN])
{
	crypto_generichash_state st;
	crypto_generichash_init(&st, key, NET_KEY_LEN, NET_KEY_LEN);
	crypto_generichash_update(&st, (const unsigned char *)label,
				  strlen(label));
	crypto_generichash_update(&st, nonce_c, WIRE_NONCE_LEN);
	crypto_generichash_update(&st, nonce_s, WIRE_NONCE_LEN);
	crypto_generichash_final(&st, out, NET_KEY_LEN);
}

void net_session_start(struct net_session *s, const uint8_t key[NET_KEY_LEN],
		       int is_shard, const uint8_t *nonce_c,
		       const uint8_t *nonce_s)
{
	uint8_t c2s[NET_KEY_LEN], s2c[NET_KEY_LEN];
	/* Labels unlike the proofs' one-letter roles: a proof is never a
	 * session key. */
	derive(key, "session c2s", nonce_c, nonce_s, c2s);
	derive(key, "session s2c", nonce_c, nonce_s, s2c);
	memcpy(s->send_key, is_shard ? s2c : c2s, NET_KEY_LEN);
	memcpy(s->recv_key, is_shard ? c2s : s2c, NET_KEY_LEN);
	sodium_memzero(c2s, sizeof c2s);
	sodium_memzero(s2c, sizeof s2c);
	s->sent = s->received = 0;
	s->on = 1;
}

void net_session_end(struct net_session *s)
{
	sodium_memzero(s, sizeof *s);
}

static void tag_of(const uint8_t key[NET_KEY_LEN], uint64_t counter,
		   const uint8_t *hdr, const uint8_t *payload, size_t len,
		   uint8_t tag[NET_TAG_LEN])
{
	uint8_t ctr[8];
	for (int i = 0; i < 8; i++)
		ctr[i] = (uint8_t)(counter >> (8 * i));
	crypto_generichash_state st;
	crypto_generichash_init(&st, key, NET_KEY_LEN, NET_TAG_LEN);
	crypto_generichash_update(&st, ctr, sizeof ctr);
	crypto_generichash_update(&st, hdr, WIRE_HDR_LEN);
	crypto_generichash_update(&st, payload, len);
	crypto_generichash_final(&st, tag, NET_TAG_LEN);
}

int net_seal(struct net_session *s, struct wire_out *o)
{
	if (o->failed || o->len < WIRE_HDR_LEN)
		return -1;
	uint8_t *b = o->buf;
	uint32_t len = (uint32_t)b[8] | (uint32_t)b[9] << 8 |
		       (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
	if (o->len != WIRE_HDR_LEN + (size_t)len)
		return -1; /* not exactly one frame */
	len += NET_TAG_LEN;
	for (int i = 0; i < 4; i++)
		b[8 + i] = (uint8_t)(len >> (8 * i));
	uint8_t tag[NET_TAG_LEN];
	tag_of(s->send_key, s->sent++, b, b + WIRE_HDR_LEN,
	       o->len - WIRE_HDR_LEN, tag);
	wire_put_bytes(o, tag, sizeof tag);
	return o->failed ? -1 : 0;
}

long net_unseal(struct net_session *s, const uint8_t *hdr,
		const uint8_t *payload, uint32_t len)
{
	if (len < NET_TAG_LEN)
		return -1;
	uint8_t want[NET_TAG_LEN];
	len -= NET_TAG_LEN;
	tag_of(s->recv_key, s->received, hdr, payload, len, want);
	if (sodium_memcmp(want, payload + len, NET_TAG_LEN))
		return -1;
	s->received++;
	return (long)len;
}
