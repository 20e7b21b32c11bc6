/* auth.h - the shard's challenge-response handshake (library-internal).
 *
 * Both sides hold a key derived from a shared secret file (BLAKE2b of its
 * bytes, libsodium's crypto_generichash). The worker sends a random nonce
 * in HELLO, the shard answers with its own nonce and a proof
 * MAC(key, "S" | worker nonce | shard nonce); the worker checks it (so it
 * never pushes to an impostor) and answers MAC(key, "C" | shard nonce |
 * worker nonce). The MAC is keyed BLAKE2b; proofs are compared in constant
 * time. Fresh nonces on both sides make a recorded exchange useless.
 */
#ifndef BOAR_NET_AUTH_H
#define BOAR_NET_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "boar.h"

#define NET_KEY_LEN 32

/* Reads the secret file (at least 16 bytes) and derives the key.
 * @return 0, BOAR_EIO or BOAR_EINVAL with *err. */
int net_auth_load(const char *path, uint8_t key[NET_KEY_LEN],
		  boar_error *err);
/* Derives the key from secret bytes already in memory. */
int net_auth_key(const void *secret, size_t len, uint8_t key[NET_KEY_LEN]);
/* Fills buf with cryptographically random bytes. */
int net_random(void *buf, size_t n);
/* proof = MAC(key, role | a | b), a and b 32-byte nonces. */
void net_auth_proof(const uint8_t key[NET_KEY_LEN], char role,
		    const uint8_t *a, const uint8_t *b, uint8_t proof[32]);
/* @return 1 if proof is right, 0 if not (constant time). */
int net_auth_check(const uint8_t key[NET_KEY_LEN], char role,
		   const uint8_t *a, const uint8_t *b, const uint8_t *proof);

#endif
