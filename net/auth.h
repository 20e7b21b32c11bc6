/* auth.h - the shard's challenge-response handshake (library-internal).
 *
 * Both sides hold a key derived from a shared secret file (BLAKE2b of its
 * bytes, libsodium's crypto_generichash). The worker sends a random nonce
 * in HELLO, the shard answers with its own nonce and a proof
 * MAC(key, "S" | worker nonce | shard nonce); the worker checks it (so it
 * never pushes to an impostor) and answers MAC(key, "C" | shard nonce |
 * worker nonce). The MAC is keyed BLAKE2b; proofs are compared in constant
 * time. Fresh nonces on both sides make a recorded exchange useless.
 *
 * The handshake also gives the connection a session (net_session): one key
 * per direction, MAC(key, "c2s"/"s2c" | worker nonce | shard nonce), and a
 * frame counter per direction. Every frame after the AUTH, both ways,
 * carries a NET_TAG_LEN-byte tag: libsodium's ChaCha20-Poly1305 (IETF)
 * under the direction's key, the counter as nonce, nothing encrypted and
 * header | payload as the associated data (Poly1305 runs about six times
 * faster than keyed BLAKE2b here, bench/RESULTS-net.md); the tag is
 * counted in the header's length. The counter is not sent: each side counts the frames it has sent
 * and received, so a frame injected by an on-path relay (no key), replayed
 * (wrong counter), reordered, dropped (every later counter is off) or
 * reflected back to its sender (the other direction's key) fails its tag,
 * and the connection is dropped.
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

#define NET_TAG_LEN 16

struct net_session {
	int on; /* tags are sent and required */
	uint8_t send_key[NET_KEY_LEN], recv_key[NET_KEY_LEN];
	uint64_t sent, received; /* frames so far in each direction */
};

/* Starts the session of a finished handshake. nonce_c is the worker's,
 * nonce_s the shard's; is_shard says which side we are. */
void net_session_start(struct net_session *s, const uint8_t key[NET_KEY_LEN],
		       int is_shard, const uint8_t *nonce_c,
		       const uint8_t *nonce_s);
/* Forgets the keys (the connection is gone). */
void net_session_end(struct net_session *s);

struct wire_out;
/* Tags the one whole frame in o (from wire_begin .. wire_end at offset 0):
 * adds NET_TAG_LEN to its length and appends the tag. Sealing is the
 * send order: call it once per frame, just before the frame is sent.
 * @return 0, or -1 if o failed or does not hold exactly one frame. */
int net_seal(struct net_session *s, struct wire_out *o);
/* Checks the tag at the end of a received frame (hdr: its WIRE_HDR_LEN
 * header bytes, payload: len bytes right after them, tag included) and
 * counts it.
 * @return the payload length without the tag, or -1: not authentic. */
long net_unseal(struct net_session *s, const uint8_t *hdr,
		const uint8_t *payload, uint32_t len);

#endif
