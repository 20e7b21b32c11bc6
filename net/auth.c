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
