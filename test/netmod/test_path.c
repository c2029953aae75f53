/*
 * test_path.c - the receiver's choice between reading a long message and
 * asking for it (bip_path.c): each way tried first, the cheaper taken,
 * trials of the other ever rarer while they change nothing, a way that
 * gets cheaper with use found, a change of costs followed, one outlier
 * ignored, size classes kept apart.
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
	int asks;

	memset(&p, 0, sizeof(p));
	CHECK(step(&p, 65536, 4000, 7600) == READ, "a class reads first");
	CHECK(step(&p, 65536, 4000, 7600) == SEND, "then asks");
	CHECK(MPIDI_BIP_path_cost(&p, READ, 65536) == 4000 * 1024 / 65536,
	      "cost %u ns/KiB", MPIDI_BIP_path_cost(&p, READ, 65536));
	/* Reading cheaper at constant costs: a trial asks three times (the
	 * first cost after a change of way is not kept, the third is no
	 * cheaper than the second), after 32, 64, 128, then every 256
	 * choices. */
	asks = 320 - reads_of(&p, 320, 65536, 4000, 7600);
	CHECK(asks >= 3 * 3 && asks <= 3 * 4, "asked %d of the first 320",
	      asks);
	reads_of(&p, 2000, 65536, 4000, 7600);
	asks = 1024 - reads_of(&p, 1024, 65536, 4000, 7600);
	CHECK(asks >= 3 * 3 && asks <= 3 * 5,
	      "asked %d of 1024 in the steady state", asks);

	/* The data changes: reading now costs more; the next trial finds
	 * asking cheaper, and from then on the trials read. */
	asks = MPIDI_BIP_PATH_EXPLORE_MAX + MPIDI_BIP_PATH_TRIAL -
	       reads_of(&p, MPIDI_BIP_PATH_EXPLORE_MAX + MPIDI_BIP_PATH_TRIAL,
			65536, 11600, 7600);
	CHECK(asks >= 2, "the change went unseen: asked %d", asks);
	CHECK(reads_of(&p, 320, 65536, 11600, 7600) <= 3 * 4,
	      "reads when dearer");
}

/* Reading that gets cheaper with use, as measured with OSU's buffers:
 * the first reads of a buffer get cheaper one after the other (each
 * halves the gap to warm); once warm, the first read after asks costs
 * cold again (the sender's copies pulled the lines back) and the next
 * ones warm. */
struct warming {
	int run;   /* reads in a row */
	int warm;  /* the buffer has been warm */
};

static int warm_step(MPIDI_BIP_paths_t *p, struct warming *w, uint64_t cold,
		     uint64_t warm, uint64_t ask)
{
	uint64_t read = warm + ((cold - warm) >> (w->run < 16 ? w->run : 16));
	int way;

	if (w->warm)
		read = w->run ? warm : cold;
	way = step(p, 65536, read, ask);
	w->run = way == READ ? w->run + 1 : 0;
	w->warm |= w->run >= 8;
	return way;
}

static void test_warming(void)
{
	MPIDI_BIP_paths_t p;
	struct warming w = { 0, 0 };
	int reads = 0;

	/* Cold reads cost 3 x asking, warm ones half of it: reads one at a
	 * time never see it; a trial does. */
	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 1000; i++)
		warm_step(&p, &w, 24000, 4000, 8000);
	for (int i = 0; i < 1000; i++)
		reads += warm_step(&p, &w, 24000, 4000, 8000) == READ;
	CHECK(reads >= 980, "read %d of 1000 that warm up", reads);

	/* Reads that never warm (data the sender just wrote, always in its
	 * cache): a trial stops at its third read. */
	memset(&p, 0, sizeof(p));
	memset(&w, 0, sizeof(w));
	for (int i = 0; i < 1000; i++)
		reads += warm_step(&p, &w, 12000, 12000, 8000) == READ;
	CHECK(reads - 1000 <= 3 * 6 + 1, "read %d of 1000 that stay cold",
	      reads - 1000);
}

/* Reading a little cheaper by its own timing is not taken: it leaves the
 * sender's next write to pay. */
static void test_margin(void)
{
	MPIDI_BIP_paths_t p;
	int reads;

	memset(&p, 0, sizeof(p));
	reads = reads_of(&p, 1000, 32768, 130 * 32, 155 * 32);
	CHECK(reads <= 3 * 6 + 1, "read %d of 1000 at 130 against 155",
	      reads);
	memset(&p, 0, sizeof(p));
	reads = reads_of(&p, 1000, 32768, 110 * 32, 155 * 32);
	CHECK(reads >= 1000 - 3 * 6 - 1, "read %d of 1000 at 110 against 155",
	      reads);
}

/* A stream: windows of choices made before any of their costs come. A
 * trial takes one choice at a time, so a window holds at most one. */
static void test_stream(void)
{
	MPIDI_BIP_paths_t p;
	int worst = 0, asks = 0;

	memset(&p, 0, sizeof(p));
	for (int w = 0; w < 200; w++) {
		enum MPIDI_BIP_path way[16];
		int n = 0;

		for (int i = 0; i < 16; i++) {
			way[i] = MPIDI_BIP_path_choose(&p, 131072);
			n += way[i] == SEND;
		}
		for (int i = 0; i < 16; i++)
			MPIDI_BIP_path_sample(&p, way[i], 131072,
					      way[i] == READ ? 5000 : 90000);
		worst = n > worst ? n : worst;
		asks += n;
	}
	CHECK(worst <= 1, "a window of 16 asked %d times", worst);
	CHECK(asks >= 3 && asks <= 3 * (4 + 3200 / MPIDI_BIP_PATH_EXPLORE_MAX),
	      "asked %d of 3200", asks);
}

static void test_outlier(void)
{
	MPIDI_BIP_paths_t p;
	int reads;

	memset(&p, 0, sizeof(p));
	reads_of(&p, 100, 131072, 8000, 15000);
	/* One read preempted for a millisecond: still reading, at the same
	 * cost (a trial of asking may fall among the next choices). */
	MPIDI_BIP_path_sample(&p, READ, 131072, 1000000);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 131072) == 8000 * 1024 / 131072,
	      "one slow read moved the cost to %u",
	      MPIDI_BIP_path_cost(&p, READ, 131072));
	reads = reads_of(&p, 10, 131072, 8000, 15000);
	CHECK(reads >= 10 - 3, "one slow read moved %d choices", 10 - reads);
}

static void test_classes(void)
{
	MPIDI_BIP_paths_t p;

	memset(&p, 0, sizeof(p));
	/* 32 KiB reads well, 256 KiB does not: each keeps its own. */
	reads_of(&p, 100, 32768, 2000, 5000);
	reads_of(&p, 100, 262144, 30000, 19000);
	CHECK(reads_of(&p, 31, 32768, 2000, 5000) >= 31 - 3, "32 KiB reads");
	CHECK(reads_of(&p, 31, 262144, 30000, 19000) <= 3,
	      "256 KiB asks");
	/* Sizes past the last class share it; below 16 KiB the first. */
	CHECK(step(&p, 64u << 20, 1, 1) == READ, "64 MiB: new class");
	CHECK(MPIDI_BIP_path_cost(&p, READ, 4u << 20) != 0 &&
		      MPIDI_BIP_path_cost(&p, READ, 2u << 20) == 0,
	      "4 MiB shares it, 2 MiB does not");
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
	test_warming();
	test_margin();
	test_stream();
	test_outlier();
	test_classes();
	return unit_result("test_path");
}
