/* ssp.c - the clock table behind stale synchronous parallel pulls.
 *
 * Pure bookkeeping, no I/O: the shard calls in when frames arrive and on
 * every tick, and asks ssp_can_serve() for each waiting pull. See ssp.h.
 */
#include <stdlib.h>

#include "net/ssp.h"

static int counted(int state)
{
	return state == SSP_PENDING || state == SSP_LIVE || state == SSP_AWAY;
}

int ssp_init(struct ssp *s, uint32_t n, uint64_t staleness, double timeout,
	     double now)
{
	s->w = calloc(n ? n : 1, sizeof *s->w);
	if (!s->w)
		return -1;
	s->n = n;
	s->staleness = staleness;
	s->timeout = timeout;
	s->max_served = 0;
	s->dropped = 0;
	for (uint32_t i = 0; i < n; i++) {
		s->w[i].state = SSP_PENDING;
		s->w[i].since = now;
	}
	return 0;
}

void ssp_free(struct ssp *s)
{
	free(s->w);
	s->w = NULL;
	s->n = 0;
}

uint64_t ssp_min_clock(const struct ssp *s)
{
	uint64_t m = SSP_INF;
	for (uint32_t i = 0; i < s->n; i++)
		if (counted(s->w[i].state) && s->w[i].clock < m)
			m = s->w[i].clock;
	return m;
}

uint64_t ssp_join_clock(const struct ssp *s, uint32_t rank, uint64_t clock)
{
	const struct ssp_worker *w = &s->w[rank];
	if (w->state == SSP_DEAD || w->state == SSP_DONE) {
		/* Rejoining: start from the slowest of the others, never from
		 * behind them, or everyone would wait for the newcomer. */
		uint64_t m = ssp_min_clock(s);
		if (m != SSP_INF && m > clock)
			clock = m;
	} else if (w->clock > clock) {
		clock = w->clock; /* we know it got further than it says */
	}
	return clock;
}

uint64_t ssp_join(struct ssp *s, uint32_t rank, uint64_t clock, double now)
{
	struct ssp_worker *w = &s->w[rank];
	clock = ssp_join_clock(s, rank, clock);
	if (w->state == SSP_DEAD && s->dropped)
		s->dropped--;
	w->state = SSP_LIVE;
	w->clock = clock;
	w->since = now;
	return clock;
}

void ssp_seen(struct ssp *s, uint32_t rank, double now)
{
	if (s->w[rank].state == SSP_LIVE)
		s->w[rank].since = now;
}

void ssp_clock(struct ssp *s, uint32_t rank, uint64_t clock, double now)
{
	struct ssp_worker *w = &s->w[rank];
	if (clock > w->clock)
		w->clock = clock;
	if (w->state == SSP_LIVE)
		w->since = now;
}

void ssp_away(struct ssp *s, uint32_t rank, double now)
{
	if (s->w[rank].state == SSP_LIVE) {
		s->w[rank].state = SSP_AWAY;
		s->w[rank].since = now;
	}
}

void ssp_done(struct ssp *s, uint32_t rank)
{
	s->w[rank].state = SSP_DONE;
}

int ssp_expire(struct ssp *s, double now)
{
	int died = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		struct ssp_worker *w = &s->w[i];
		if (counted(w->state) && now - w->since > s->timeout) {
			w->state = SSP_DEAD;
			s->dropped++;
			died++;
		}
	}
	return died;
}

int ssp_can_serve(const struct ssp *s, uint64_t clock, uint64_t *gap)
{
	uint64_t m = ssp_min_clock(s);
	*gap = (m == SSP_INF || clock <= m) ? 0 : clock - m;
	if (s->staleness == SSP_INF)
		return 1;
	return *gap <= s->staleness;
}

void ssp_served(struct ssp *s, uint64_t gap)
{
	if (gap > s->max_served)
		s->max_served = gap;
}

int ssp_finished(const struct ssp *s)
{
	return ssp_min_clock(s) == SSP_INF;
}

uint32_t ssp_live(const struct ssp *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n; i++)
		n += s->w[i].state == SSP_LIVE;
	return n;
}
