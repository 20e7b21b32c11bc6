/* auth.c - shared-secret proofs for the shard handshake, on libsodium,
 * and frame tags on libsodium or OpenSSL's libcrypto.
 *
 * No home-made cryptography: key derivation and handshake proofs are
 * libsodium's keyed BLAKE2b (crypto_generichash), frame tags the
 * ChaCha20-Poly1305 AEAD (RFC 8439) with an empty message (the frame is
 * the associated data), randomness is randombytes_buf, comparison is
 * sodium_memcmp. See auth.h for the exchange.
 *
 * A tag is the same 16 bytes whichever library computes it. libsodium
 * 1.0.18's Poly1305 is its SSE2 code, ~1.6-3 GB/s; OpenSSL 3's uses
 * AVX2/AVX-512 where the CPU has them, ~5-9 GB/s on large frames (a
 * clock's push or answer of a few MB: the tag was 29% of a busy shard
 * lane and the largest item of a worker's client thread), but setting
 * up its context costs ~1 us: so large frames are tagged by libcrypto,
 * small ones by libsodium.
 */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
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

/* The 96-bit AEAD nonce of frame `counter`: unique per key, since each
 * direction has its own key and counts from 0. */
static void nonce_of(uint64_t counter,
		     uint8_t n[crypto_aead_chacha20poly1305_IETF_NPUBBYTES])
{
	memset(n, 0, crypto_aead_chacha20poly1305_IETF_NPUBBYTES);
	for (int i = 0; i < 8; i++)
		n[4 + i] = (uint8_t)(counter >> (8 * i));
}

_Static_assert(NET_TAG_LEN == crypto_aead_chacha20poly1305_IETF_ABYTES,
	       "a tag is a ChaCha20-Poly1305 tag");
_Static_assert(NET_KEY_LEN == crypto_aead_chacha20poly1305_IETF_KEYBYTES,
	       "session keys are AEAD keys");

/* Frames of at least this many bytes are tagged by libcrypto. */
#define TAG_LIBCRYPTO_MIN (16u << 10)

static EVP_CIPHER *chacha_poly;
static pthread_once_t chacha_poly_once = PTHREAD_ONCE_INIT;

static void fetch_chacha_poly(void)
{
	/* fetched once: an implicit fetch at every init costs more */
	chacha_poly = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL);
}

/* The tag of the empty message with data[0..len) as the associated data,
 * by libcrypto. @return 0, or -1 (no cipher, out of memory). */
static int tag_libcrypto(const uint8_t key[NET_KEY_LEN],
			 const uint8_t *nonce, const uint8_t *data,
			 size_t len, uint8_t tag[NET_TAG_LEN])
{
	pthread_once(&chacha_poly_once, fetch_chacha_poly);
	if (!chacha_poly || len > (size_t)INT32_MAX)
		return -1;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n, ok = ctx && EVP_EncryptInit_ex2(ctx, chacha_poly, key, nonce,
					       NULL) &&
		    EVP_EncryptUpdate(ctx, NULL, &n, data, (int)len) &&
		    EVP_EncryptFinal_ex(ctx, NULL, &n) &&
		    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG,
					NET_TAG_LEN, tag);
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* The frame tag of data[0..len) under key and the counter's nonce.
 * @return 0, or -1 (libcrypto failed). */
static int tag_of(const uint8_t key[NET_KEY_LEN], uint64_t counter,
		  const uint8_t *data, size_t len, uint8_t tag[NET_TAG_LEN])
{
	uint8_t nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
	nonce_of(counter, nonce);
	if (len >= TAG_LIBCRYPTO_MIN)
		return tag_libcrypto(key, nonce, data, len, tag);
	uint8_t none[1] = {0}; /* the empty message and its ciphertext */
	unsigned long long tag_len;
	crypto_aead_chacha20poly1305_ietf_encrypt_detached(
		none, tag, &tag_len, none, 0, data, len, NULL, nonce, key);
	return 0;
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
	/* ChaCha20-Poly1305 with nothing to encrypt: the frame is the
	 * associated data, so the tag covers it without hiding it. */
	uint8_t tag[NET_TAG_LEN];
	if (tag_of(s->send_key, s->sent++, b, o->len, tag))
		return -1;
	wire_put_bytes(o, tag, sizeof tag);
	return o->failed ? -1 : 0;
}

long net_unseal(struct net_session *s, const uint8_t *hdr,
		const uint8_t *payload, uint32_t len)
{
	if (len < NET_TAG_LEN || payload != hdr + WIRE_HDR_LEN)
		return -1;
	len -= NET_TAG_LEN;
	uint8_t want[NET_TAG_LEN];
	if (tag_of(s->recv_key, s->received, hdr, WIRE_HDR_LEN + (size_t)len,
		   want) ||
	    CRYPTO_memcmp(want, payload + len, NET_TAG_LEN))
		return -1;
	s->received++;
	return (long)len;
}
