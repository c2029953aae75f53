/*
 * test_pmi_map.c - the launcher's process mapping, read as MPICH reads it:
 * each rank's host and the number of hosts, mappings that repeat, and
 * malformed or out-of-range text refused.
 */
#include <string.h>

#include "pmi_line.h"
#include "unit.h"

struct want {
	const char *map;
	int size;
	int hosts[8]; /* of ranks 0..size-1 */
	int nhosts;
};

static void check_map(const struct want *w)
{
	for (int r = 0; r < w->size; r++) {
		int host = -1, nhosts = -1;
		int rc = bip_pmi_map_host(w->map, r, w->size, &host, &nhosts);

		CHECK(rc == 0 && host == w->hosts[r] && nhosts == w->nhosts,
		      "%s, rank %d of %d: rc %d, host %d of %d (want %d of %d)",
		      w->map, r, w->size, rc, host, nhosts, w->hosts[r],
		      w->nhosts);
	}
}

int main(void)
{
	static const struct want good[] = {
		{ "(vector,(0,1,4))", 4, { 0, 0, 0, 0 }, 1 },
		{ "(vector,(0,2,2))", 4, { 0, 0, 1, 1 }, 2 },
		{ "(vector,(0,4,1))", 4, { 0, 1, 2, 3 }, 4 },
		/* Shorter than the job: the mapping repeats (round robin). */
		{ "(vector,(0,2,1))", 5, { 0, 1, 0, 1, 0 }, 2 },
		{ "(vector,(0,2,2),(2,1,3))", 7, { 0, 0, 1, 1, 2, 2, 2 }, 3 },
		{ "(vector,(1,1,2),(0,1,2))", 4, { 1, 1, 0, 0 }, 2 },
	};
	static const char *const bad[] = {
		"", "(vector)", "(vector,)", "(vector,(0,2,2)", "(vector,(0,2))",
		"(vector,(0,0,2))", "(vector,(0,2,0))", "(vector,(0,9,1))",
		"(vector,(3,2,1))", "(vector,(-1,2,2))", "(vector,(0,2,2)),",
		"(vector,(0,2,2)) ", "vector,(0,2,2)", "(vector,(0,2,2)(0,1,1))",
		"(vector,(0,99999999999,2))", "(vector,(0,1,2 ))",
	};
	int host, nhosts;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		check_map(&good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(bip_pmi_map_host(bad[i], 0, 4, &host, &nhosts) == -1,
		      "\"%s\" was taken", bad[i]);
	CHECK(bip_pmi_map_host("(vector,(0,1,4))", 4, 4, &host, &nhosts) == -1,
	      "rank 4 of 4 was placed");
	CHECK(bip_pmi_map_host("(vector,(0,1,4))", -1, 4, &host, &nhosts) ==
		      -1,
	      "rank -1 was placed");
	return unit_result("process mapping");
}
