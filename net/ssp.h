/* ssp.h - stale synchronous parallel clocks of one shard (library-internal).
 *
 * Every worker has a clock: the number of clocks (batches of sync-every
 * examples) whose updates it has pushed. A pull from a worker at clock c may
 * be answered once every counted worker has clock >= c - s: the values then
 * include every update of clocks up to c - s - 1 from every worker. s = 0 is
 * bulk-synchronous; SSP_INF never waits (fully asynchronous).
 *
 * Counted workers are those that may still push: PENDING (announced by the
 * cluster size but not connected yet), LIVE, and AWAY (connection lost, may
 * come back). A worker PENDING or AWAY for longer than the heartbeat
 * timeout, or LIVE but silent that long, becomes DEAD and stops holding the
 * others back; DONE workers finished their training. A DEAD worker that
 * connects again rejoins at the slowest counted clock, so it does not drag
 * everyone back to where it restarted.
 */
#ifndef BOAR_NET_SSP_H
#define BOAR_NET_SSP_H

#include <stdint.h>

#define SSP_INF UINT64_MAX

enum ssp_state { SSP_PENDING = 0, SSP_LIVE, SSP_AWAY, SSP_DEAD, SSP_DONE };

struct ssp_worker {
	int state;
	uint64_t clock;
	double since; /* last sign of life (LIVE) or when it went missing */
};

struct ssp {
	uint32_t n;
	struct ssp_worker *w;
	uint64_t staleness;   /* s, or SSP_INF */
	double timeout;       /* heartbeat timeout, seconds */
	uint64_t max_served;  /* largest c - min_clock a pull was served at */
	uint32_t dropped;     /* workers declared dead so far */
};

/* @return 0, or -1 when out of memory. */
int ssp_init(struct ssp *s, uint32_t n, uint64_t staleness, double timeout,
	     double now);
void ssp_free(struct ssp *s);

/* Slowest counted clock, SSP_INF if no worker is counted any more. */
uint64_t ssp_min_clock(const struct ssp *s);
/* A worker (re)connects announcing its clock; @return the clock it is to
 * continue from (>= the one announced). */
uint64_t ssp_join(struct ssp *s, uint32_t rank, uint64_t clock, double now);
/* What ssp_join would return, without joining. */
uint64_t ssp_join_clock(const struct ssp *s, uint32_t rank, uint64_t clock);
void ssp_seen(struct ssp *s, uint32_t rank, double now);
/* The worker finished clock - 1; clocks never go back. */
void ssp_clock(struct ssp *s, uint32_t rank, uint64_t clock, double now);
void ssp_away(struct ssp *s, uint32_t rank, double now);
void ssp_done(struct ssp *s, uint32_t rank);
/* Declares dead the workers silent for longer than the timeout.
 * @return how many died now. */
int ssp_expire(struct ssp *s, double now);
/* Whether a pull at clock may be answered now; *gap = its staleness. */
int ssp_can_serve(const struct ssp *s, uint64_t clock, uint64_t *gap);
/* Records that a pull was answered with this gap. */
void ssp_served(struct ssp *s, uint64_t gap);
/* No worker can push any more (all DONE or DEAD). */
int ssp_finished(const struct ssp *s);
uint32_t ssp_live(const struct ssp *s);

#endif
