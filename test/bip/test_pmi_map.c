/*
 * test_pmi_map.c - the launcher's process mapping, read as MPICH reads it:
 * each rank's host, the number of hosts and of ranks on the rank's host,
 * mappings that repeat, and malformed or out-of-range text refused.
 */
#include <string.h>

#include "pmi_line.h"
#include "unit.h"

struct want {
	const char *map;
	int size;
	int hosts[8]; /* of ranks 0..size-1 */
	int nhosts;
	int local[8]; /* ranks on the host of ranks 0..size-1 */
};

static void check_map(const struct want *w)
{
	for (int r = 0; r < w->size; r++) {
		struct bip_pmi_place pl = { -1, -1, -1 };
		int rc = bip_pmi_map_place(w->map, r, w->size, &pl);

		CHECK(rc == 0 && pl.host == w->hosts[r] &&
			      pl.nhosts == w->nhosts && pl.local == w->local[r],
		      "%s, rank %d of %d: rc %d, host %d of %d with %d ranks "
		      "(want %d of %d with %d)",
		      w->map, r, w->size, rc, pl.host, pl.nhosts, pl.local,
		      w->hosts[r], w->nhosts, w->local[r]);
	}
}

int main(void)
{
	static const struct want good[] = {
		{ "(vector,(0,1,4))", 4, { 0, 0, 0, 0 }, 1, { 4, 4, 4, 4 } },
		{ "(vector,(0,2,2))", 4, { 0, 0, 1, 1 }, 2, { 2, 2, 2, 2 } },
		{ "(vector,(0,4,1))", 4, { 0, 1, 2, 3 }, 4, { 1, 1, 1, 1 } },
		/* Shorter than the job: the mapping repeats (round robin). */
		{ "(vector,(0,2,1))", 5, { 0, 1, 0, 1, 0 }, 2,
		  { 3, 2, 3, 2, 3 } },
		{ "(vector,(0,2,2),(2,1,3))", 7, { 0, 0, 1, 1, 2, 2, 2 }, 3,
		  { 2, 2, 2, 2, 3, 3, 3 } },
		{ "(vector,(1,1,2),(0,1,2))", 4, { 1, 1, 0, 0 }, 2,
		  { 2, 2, 2, 2 } },
		/* A host named twice holds the ranks of both blocks. */
		{ "(vector,(0,1,1),(1,1,1),(0,1,1))", 3, { 0, 1, 0 }, 2,
		  { 2, 1, 2 } },
	};
	static const char *const bad[] = {
		"", "(vector)", "(vector,)", "(vector,(0,2,2)", "(vector,(0,2))",
		"(vector,(0,0,2))", "(vector,(0,2,0))", "(vector,(0,9,1))",
		"(vector,(3,2,1))", "(vector,(-1,2,2))", "(vector,(0,2,2)),",
		"(vector,(0,2,2)) ", "vector,(0,2,2)", "(vector,(0,2,2)(0,1,1))",
		"(vector,(0,99999999999,2))", "(vector,(0,1,2 ))",
	};
	struct bip_pmi_place pl;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		check_map(&good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(bip_pmi_map_place(bad[i], 0, 4, &pl) == -1,
		      "\"%s\" was taken", bad[i]);
	CHECK(bip_pmi_map_place("(vector,(0,1,4))", 4, 4, &pl) == -1,
	      "rank 4 of 4 was placed");
	CHECK(bip_pmi_map_place("(vector,(0,1,4))", -1, 4, &pl) ==
		      -1,
	      "rank -1 was placed");
	return unit_result("process mapping");
}
