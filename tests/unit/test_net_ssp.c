/* test_net_ssp.c - the SSP clock table on its own, no sockets.
 *
 * The rule (a pull at clock c waits until every counted worker reached
 * c - s), the staleness it reports, how dead, away, done and rejoining
 * workers are counted, and the heartbeat expiry.
 */
#include "net/ssp.h"
#include "testutil.h"

int main(void)
{
	struct ssp s;
	uint64_t gap;

	CHECK(ssp_init(&s, 3, 1, 5.0, 100.0) == 0, "init");
	/* everyone PENDING at clock 0: a pull at 1 is within s = 1 */
	CHECK(ssp_can_serve(&s, 1, &gap) && gap == 1, "pull at 1, gap %llu",
	      (unsigned long long)gap);
	CHECK(!ssp_can_serve(&s, 2, &gap) && gap == 2, "pull at 2 must wait");
	CHECK_EQ_INT(ssp_join(&s, 0, 0, 100), 0);
	CHECK_EQ_INT(ssp_join(&s, 1, 0, 100), 0);
	CHECK_EQ_INT(ssp_join(&s, 2, 0, 100), 0);
	ssp_clock(&s, 0, 3, 101);
	ssp_clock(&s, 1, 2, 101);
	ssp_clock(&s, 2, 1, 101);
	CHECK_EQ_INT(ssp_min_clock(&s), 1);
	CHECK(!ssp_can_serve(&s, 3, &gap), "worker 0 at 3 vs min 1, s = 1");
	ssp_clock(&s, 2, 2, 102);
	CHECK(ssp_can_serve(&s, 3, &gap) && gap == 1, "served at gap 1");
	ssp_served(&s, gap);
	/* clocks never go back */
	ssp_clock(&s, 2, 0, 102);
	CHECK_EQ_INT(ssp_min_clock(&s), 2);

	/* worker 2 disconnects: still counted until the timeout */
	ssp_away(&s, 2, 103);
	ssp_clock(&s, 0, 5, 103);
	ssp_clock(&s, 1, 5, 103);
	CHECK(!ssp_can_serve(&s, 5, &gap), "away worker still holds back");
	CHECK_EQ_INT(ssp_expire(&s, 107.9), 0);
	ssp_seen(&s, 0, 108);
	ssp_seen(&s, 1, 108);
	CHECK_EQ_INT(ssp_expire(&s, 108.5), 1);
	CHECK_EQ_INT(s.dropped, 1);
	CHECK(ssp_can_serve(&s, 5, &gap) && gap == 0, "dead worker ignored");
	/* a live but silent worker dies too (worker 0, last seen at 108) */
	ssp_seen(&s, 1, 113);
	CHECK_EQ_INT(ssp_expire(&s, 113.5), 1);
	CHECK_EQ_INT(ssp_live(&s), 1);
	CHECK_EQ_INT(s.dropped, 2);

	/* the dead worker 2 rejoins at the slowest counted clock (5), not 0 */
	CHECK_EQ_INT(ssp_join_clock(&s, 2, 0), 5);
	CHECK_EQ_INT(ssp_join(&s, 2, 0, 114), 5);
	CHECK_EQ_INT(s.dropped, 1);
	/* an away worker that comes back keeps the clock we knew */
	ssp_away(&s, 2, 115);
	ssp_clock(&s, 2, 6, 115);
	CHECK_EQ_INT(ssp_join(&s, 2, 1, 116), 6);

	/* done workers stop counting; all done or dead: finished */
	CHECK(!ssp_finished(&s), "not finished yet");
	ssp_done(&s, 1);
	ssp_done(&s, 2);
	CHECK(ssp_finished(&s), "every worker done or dead");
	CHECK(ssp_can_serve(&s, 1000, &gap) && gap == 0,
	      "nothing to wait for");
	ssp_free(&s);

	/* s = inf never waits but still reports the gap */
	ssp_init(&s, 2, SSP_INF, 5, 0);
	ssp_join(&s, 0, 0, 0);
	ssp_join(&s, 1, 0, 0);
	ssp_clock(&s, 0, 50, 0);
	CHECK(ssp_can_serve(&s, 50, &gap) && gap == 50, "async gap %llu",
	      (unsigned long long)gap);
	ssp_free(&s);

	/* s = 0 is bulk-synchronous */
	ssp_init(&s, 2, 0, 5, 0);
	ssp_join(&s, 0, 0, 0);
	ssp_join(&s, 1, 0, 0);
	ssp_clock(&s, 0, 1, 0);
	CHECK(!ssp_can_serve(&s, 1, &gap), "BSP: must wait for worker 1");
	ssp_clock(&s, 1, 1, 0);
	CHECK(ssp_can_serve(&s, 1, &gap) && gap == 0, "BSP: served");
	ssp_free(&s);
	return TEST_RESULT();
}
