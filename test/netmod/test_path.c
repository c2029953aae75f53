/*
 * test_path.c - the receiver's choice between reading a long message and
 * asking for it (bip_path.c): each way tried first, the cheaper taken,
 * the other tried every MPIDI_BIP_PATH_EXPLORE choices, a change of
 * costs followed, one outlier ignored, size classes kept apart.
 */
#include <string.h>

#include "bip_path.h"
#include "unit.h"

#define READ MPIDI_BIP_PATH_READ
#define SEND MPIDI_BIP_PATH_SEND

/* Choose for len; the choice costs ns_read or ns_send. Returns it. */
static int step(MPIDI_BIP_paths_t *p, uint64_t len, uint64_t ns_read,
		uint64_t ns_send)
{
	enum MPIDI_BIP_path way = MPIDI_BIP_path_choose(p, len);

	MPIDI_BIP_path_sample(p, way, len, way == READ ? ns_read : ns_send);
	return way;
}

/* Of n choices for len at these costs, how many read. */
static int reads_of(MPIDI_BIP_paths_t *p, int n, uint64_t len,
		    uint64_t ns_read, uint64_t ns_send)
{
	int reads = 0;

	for (int i = 0; i < n; i++)
		reads += step(p, len, ns_read, ns_send) == READ;
	return reads;
}

static void test_first_and_best(void)
{
	MPIDI_BIP_paths_t p;
	int reads;

	memset(&p, 0, sizeof(p));
	CHECK(step(&p, 65536, 4000, 7600) == READ, "a class reads first");
	CHECK(step(&p, 65536, 4000, 7600) == SEND, "then asks");
	/* Reading cheaper: 320 choices read but one in 32. */
	reads = reads_of(&p, 320, 65536, 4000, 7600);
	CHECK(reads == 320 - 320 / MPIDI_BIP_PATH_EXPLORE,
	      "reads %d of 320 when cheaper", reads);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 65536) == 4000 * 1024 / 65536,
	      "cost %u ns/KiB", MPIDI_BIP_path_cost(&p, READ, 65536));

	/* The data changes: reading now costs more; within the next try of
	 * asking and two more samples of reading, asking wins. */
	reads_of(&p, 2 * MPIDI_BIP_PATH_EXPLORE, 65536, 11600, 7600);
	reads = reads_of(&p, 320, 65536, 11600, 7600);
	CHECK(reads == 320 / MPIDI_BIP_PATH_EXPLORE,
	      "reads %d of 320 when dearer", reads);
}

static void test_outlier(void)
{
	MPIDI_BIP_paths_t p;
	int reads;

	memset(&p, 0, sizeof(p));
	reads_of(&p, 100, 131072, 8000, 15000);
	/* One read preempted for a millisecond: the median keeps reading. */
	MPIDI_BIP_path_sample(&p, READ, 131072, 1000000);
	reads = reads_of(&p, 10, 131072, 8000, 15000);
	CHECK(reads == 10, "one slow read moved %d choices", 10 - reads);
}

static void test_classes(void)
{
	MPIDI_BIP_paths_t p;

	memset(&p, 0, sizeof(p));
	/* 32 KiB reads well, 256 KiB does not: each keeps its own. */
	reads_of(&p, 100, 32768, 2000, 5000);
	reads_of(&p, 100, 262144, 30000, 19000);
	CHECK(reads_of(&p, 31, 32768, 2000, 5000) >= 30, "32 KiB reads");
	CHECK(reads_of(&p, 31, 262144, 30000, 19000) <= 1,
	      "256 KiB asks");
	/* Sizes past the last class share it; below 16 KiB the first. */
	CHECK(step(&p, 64u << 20, 1, 1) == READ, "64 MiB: new class");
	CHECK(MPIDI_BIP_path_cost(&p, READ, 1u << 20) != 0,
	      "1 MiB shares it");
	CHECK(step(&p, 8192, 1, 1) == READ &&
		      MPIDI_BIP_path_cost(&p, READ, 16383) != 0,
	      "8 KiB and 16383 B share a class");
	/* Saturation, and never "none". */
	MPIDI_BIP_path_sample(&p, SEND, 16384, UINT64_MAX >> 11);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 16384) == UINT32_MAX,
	      "a stall saturates");
	MPIDI_BIP_path_sample(&p, SEND, 65536 * 8, 0);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 65536 * 8) == 1,
	      "0 ns is 1 ns/KiB, not none");
}

int main(void)
{
	test_first_and_best();
	test_outlier();
	test_classes();
	return unit_result("test_path");
}
