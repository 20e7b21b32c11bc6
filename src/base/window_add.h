/* The step both windowed merges of two ascending key lists share (the
 * client's merge of its own pushes into an answer, net/client_ahead.c;
 * the cluster worker's store and load in one pass, src/engine/engine.c):
 * within a window of 64 keys, each list's keys are a 64-bit mask, the
 * keys both hold are the bits of the masks' AND, and each one's place in
 * either list is the popcount of its mask below it. No branch on the
 * keys: a merge that compared them one by one mispredicted at about
 * every other key where the lists interleave. */
#ifndef BOAR_BASE_WINDOW_ADD_H
#define BOAR_BASE_WINDOW_ADD_H

#include <stdint.h>

/* vals[i] += add[j] for each key both windows hold, where i is its place
 * among vals' keys (mask mv) and j among add's (mask ma). */
static inline void boar_window_add(float *vals, uint64_t mv, const float *add,
				   uint64_t ma)
{
	for (uint64_t both = mv & ma; both; both &= both - 1) {
		uint64_t below = (1ull << __builtin_ctzll(both)) - 1;
		vals[__builtin_popcountll(mv & below)] +=
			add[__builtin_popcountll(ma & below)];
	}
}

#endif
