/* pushlog.h - a shard's log of what it applied since its checkpoint
 * (library-internal).
 *
 * DIR/shard-I-of-S.log holds, in order, every push a shard applied (its
 * frame's payload, with the worker's rank) and every clock a worker
 * finished, since the checkpoint beside it; a checkpoint empties it. A
 * shard appends a push before applying it and before it answers any later
 * frame of that worker, so a push the worker has seen answered is in the
 * checkpoint or the log. A restarted shard loads the checkpoint and replays
 * the log: nothing it had applied is lost to a kill -9.
 *
 * Each record is one writev() to a file opened O_APPEND (whole, or torn at
 * the end when the process dies inside the call):
 *
 *   u32 "PLOG", u32 payload length, u8 kind, u8 0, u16 frame flags,
 *   u32 rank, u64 seq (push) or clock, payload, u32 crc32 of the
 *   bytes from kind to the end of the payload.
 *
 * The replay stops at the first record that is not whole and correct and
 * cuts the file there (a torn last record was never applied). Records go
 * to the page cache, not to the disk: they survive the shard's process
 * dying, not the machine losing power.
 */
#ifndef BOAR_NET_PUSHLOG_H
#define BOAR_NET_PUSHLOG_H

#include <limits.h>
#include <stdint.h>

#include "boar.h"

enum { PUSHLOG_PUSH = 1, PUSHLOG_CLOCK = 2, PUSHLOG_DONE = 3 };

struct pushlog {
	int fd;
	char path[PATH_MAX];
	uint64_t cut; /* bytes of a torn or damaged tail the open cut off */
};

/* What the replay hands over, record by record; non-zero stops it (the
 * record is refused: the log is then reported corrupt at that record). */
typedef int (*pushlog_fn)(void *ctx, int kind, uint16_t flags, uint32_t rank,
			  uint64_t a, const uint8_t *payload, uint32_t len);

/* Replays DIR's log of shard I of S (none: nothing to do), cutting a torn
 * tail, then opens it for appending. *n: records replayed.
 * @return 0, or BOAR_EIO / BOAR_ECORRUPT with *err naming the file. */
int pushlog_open(struct pushlog *pl, const char *dir, uint32_t shard,
		 uint32_t n_shards, pushlog_fn fn, void *ctx, uint64_t *n,
		 boar_error *err);
/* @return 0, or -1 with errno. */
int pushlog_append(struct pushlog *pl, int kind, uint16_t flags,
		   uint32_t rank, uint64_t a, const uint8_t *payload,
		   uint32_t len);
/* Empties the log (its records are in a checkpoint now). */
int pushlog_reset(struct pushlog *pl);
void pushlog_close(struct pushlog *pl);

#endif
