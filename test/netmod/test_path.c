/*
 * test_path.c - the receiver's choice between reading a long message and
 * asking for it (bip_path.c): each way tried first, the cheaper taken,
 * trials of the other ever rarer while they change nothing, a way that
 * gets cheaper with use found, a change of costs followed, one outlier
 * ignored, size classes kept apart; asking measured as a throughput in
 * streams.
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
	/* A class reads first, for a period (its first read's cost is not
	 * its steady one), then asks. */
	CHECK(reads_of(&p, 1 + MPIDI_BIP_PATH_EXPLORE, 65536, 4000, 7600) ==
		      1 + MPIDI_BIP_PATH_EXPLORE,
	      "a class reads first");
	CHECK(step(&p, 65536, 4000, 7600) == SEND, "then asks");
	CHECK(MPIDI_BIP_path_cost(&p, READ, 65536) == 4000 * 1024 / 65536,
	      "cost %u ns/KiB", MPIDI_BIP_path_cost(&p, READ, 65536));
	/* Reading cheaper at constant costs: a trial asks three times (the
	 * first cost after a change of way is not kept, the third is no
	 * cheaper than the second), after 32, 64, 128, ..., then every
	 * MPIDI_BIP_PATH_EXPLORE_MAX choices. */
	asks = 320 - reads_of(&p, 320, 65536, 4000, 7600);
	CHECK(asks >= 3 * 3 && asks <= 3 * 4, "asked %d of the first 320",
	      asks);
	reads_of(&p, 4000, 65536, 4000, 7600);
	asks = 4 * MPIDI_BIP_PATH_EXPLORE_MAX -
	       reads_of(&p, 4 * MPIDI_BIP_PATH_EXPLORE_MAX, 65536, 4000, 7600);
	CHECK(asks >= 3 * 3 && asks <= 3 * 5,
	      "asked %d of %d in the steady state", asks,
	      4 * MPIDI_BIP_PATH_EXPLORE_MAX);

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
	CHECK(reads - 1000 <= MPIDI_BIP_PATH_EXPLORE + 3 * 6 + 1,
	      "read %d of 1000 that stay cold", reads - 1000);
}

/* Reading a little cheaper by its own timing is not taken: it leaves the
 * sender's next write to pay. */
static void test_margin(void)
{
	MPIDI_BIP_paths_t p;
	int reads;

	memset(&p, 0, sizeof(p));
	reads = reads_of(&p, 1000, 32768, 130 * 32, 155 * 32);
	CHECK(reads <= MPIDI_BIP_PATH_EXPLORE + 3 * 6 + 1,
	      "read %d of 1000 at 130 against 155", reads);
	memset(&p, 0, sizeof(p));
	reads = reads_of(&p, 1000, 32768, 110 * 32, 155 * 32);
	CHECK(reads >= 1000 - 3 * 6 - 1, "read %d of 1000 at 110 against 155",
	      reads);
}

/* At most how many trials begin in n choices: the first, then one after
 * each period, doubled from MPIDI_BIP_PATH_EXPLORE. */
static int trials_in(int n)
{
	int t = 1, period = MPIDI_BIP_PATH_EXPLORE;

	for (int at = period; at < n; at += period) {
		t++;
		if (period < MPIDI_BIP_PATH_EXPLORE_MAX)
			period *= 2;
	}
	return t + 1;
}

/* A stream on a simulated clock: windows of n choices made before any of
 * their costs come. A read is done at its choice (read ns); the asks then
 * come one after the other, each ask ns after the last (a throughput:
 * each waits far longer than that from its choice). Returns how many of
 * the windows' choices asked. */
static int stream(MPIDI_BIP_paths_t *p, uint64_t *now, int windows, int n,
		  uint64_t len, uint64_t read, uint64_t ask)
{
	int asks = 0;

	for (int w = 0; w < windows; w++) {
		int k = 0;

		for (int i = 0; i < n; i++) {
			if (MPIDI_BIP_path_choose(p, len) == READ) {
				*now += read;
				MPIDI_BIP_path_sample(p, READ, len, read);
				continue;
			}
			MPIDI_BIP_path_start(p, SEND, len, *now);
			k++;
		}
		for (int i = 0; i < k; i++) {
			*now += ask;
			MPIDI_BIP_path_done(p, SEND, len, 1, *now);
		}
		asks += k;
	}
	return asks;
}

/* Asking's throughput is what counts in a stream, not each message's wait
 * behind the others. */
static void test_stream(void)
{
	MPIDI_BIP_paths_t p;
	uint64_t now = 1;
	int asks, windows = 0;

	/* The rings' throughput 1.5 x a read's (1 MiB windows, quiet host):
	 * once tried, asking is taken though each ask waits up to 64 x. */
	memset(&p, 0, sizeof(p));
	stream(&p, &now, 20, 64, 1 << 20, 60000, 40000);
	asks = stream(&p, &now, 50, 64, 1 << 20, 60000, 40000);
	CHECK(asks >= 3200 - 64 * trials_in(3200), "asked %d of 3200 at 1.5 x",
	      asks);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 1 << 20) == 40000 * 1024 >> 20,
	      "asking costs %u ns/KiB, want the throughput's %u",
	      MPIDI_BIP_path_cost(&p, SEND, 1 << 20), 40000 * 1024 >> 20);

	/* The host now stalls the rings (4 x slower than a read): reading
	 * is taken once three windows' costs moved all asking's (the way
	 * that was the cheaper goes by the lowest it kept), not after
	 * the period between trials (MPIDI_BIP_PATH_EXPLORE_MAX choices by
	 * now), and asks become rare trials, each a window's rest at most. */
	for (asks = 64; asks > 8 && windows < 16; windows++)
		asks = stream(&p, &now, 1, 64, 1 << 20, 60000, 240000);
	CHECK(windows <= 6, "%d windows of 64 before reading", windows);
	stream(&p, &now, 20, 64, 1 << 20, 60000, 240000);
	asks = stream(&p, &now, 50, 64, 1 << 20, 60000, 240000);
	CHECK(asks <= 64 * trials_in(3200), "asked %d of 3200 at 0.25 x",
	      asks);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 1 << 20) == 60000 * 1024 >> 20,
	      "reading costs %u ns/KiB", MPIDI_BIP_path_cost(&p, READ, 1 << 20));

	/* Reading cheaper from the start: the reads go on, with a trial of
	 * asking now and then. */
	memset(&p, 0, sizeof(p));
	asks = stream(&p, &now, 200, 16, 131072, 5000, 9000);
	CHECK(asks >= 3 && asks <= 16 * trials_in(3200), "asked %d of 3200",
	      asks);
}

/* A way far dearer is tried rarely: asking at 4 x a read's cost, a trial
 * of a window every 6000 choices or more (MPIDI_BIP_PATH_BUDGET), where
 * doubling alone stops at MPIDI_BIP_PATH_EXPLORE_MAX; asking that becomes
 * the cheaper is still found within MPIDI_BIP_PATH_PERIOD_MAX choices. */
static void test_budget(void)
{
	MPIDI_BIP_paths_t p;
	uint64_t now = 1;
	int asks, windows = 0;

	memset(&p, 0, sizeof(p));
	stream(&p, &now, 100, 64, 1 << 20, 60000, 240000);
	asks = stream(&p, &now, 200, 64, 1 << 20, 60000, 240000);
	CHECK(asks <= 3 * 64, "asked %d of 12800 at 4 x a read", asks);
	CHECK(asks >= 64, "no trial of asking in 12800 choices");
	while (windows++ <= MPIDI_BIP_PATH_PERIOD_MAX / 64 + 2 &&
	       stream(&p, &now, 1, 64, 1 << 20, 60000, 30000) < 32)
		;
	CHECK(windows <= MPIDI_BIP_PATH_PERIOD_MAX / 64 + 2,
	      "asking at half a read's cost unseen for %d windows", windows);
	/* The trial's cost alone does not move asking's median of three:
	 * a second trial follows within the first period, then asks. */
	CHECK(stream(&p, &now, 1, 64, 1 << 20, 60000, 30000) >= 16,
	      "no second trial of asking");
	CHECK(stream(&p, &now, 4, 64, 1 << 20, 60000, 30000) >= 4 * 64 - 16,
	      "asking not taken");

	/* A class's first trial of asking, a window at twice a read's
	 * cost, sets the wait by the budget at once: no second window of
	 * asks follows within the first period. */
	memset(&p, 0, sizeof(p));
	asks = stream(&p, &now, 8, 64, 1 << 20, 60000, 120000);
	CHECK(asks <= 64, "asked %d of the first 512 at 2 x a read", asks);

	/* A class's first read cold (3 x the next ones): the trial of
	 * asking waits for reading's steady cost, and takes a window. */
	memset(&p, 0, sizeof(p));
	CHECK(MPIDI_BIP_path_choose(&p, 1 << 20) == READ, "no first read");
	MPIDI_BIP_path_sample(&p, READ, 1 << 20, 200000);
	asks = stream(&p, &now, 8, 64, 1 << 20, 60000, 120000);
	CHECK(asks <= 64, "asked %d of 512 after a cold first read", asks);

	/* Two slow reads in a row (the peer busy, a preemption) move
	 * reading's median past asking's but not its lowest: reading stays
	 * the way, and the next window reads. */
	memset(&p, 0, sizeof(p));
	stream(&p, &now, 100, 64, 1 << 20, 60000, 240000);
	for (int i = 0; i < 2; i++) {
		CHECK(MPIDI_BIP_path_choose(&p, 1 << 20) == READ,
		      "slow read %d not read", i);
		MPIDI_BIP_path_sample(&p, READ, 1 << 20, 900000);
	}
	CHECK(MPIDI_BIP_path_cost(&p, READ, 1 << 20) >
		      MPIDI_BIP_path_cost(&p, SEND, 1 << 20),
	      "two slow reads left reading's median the cheaper");
	asks = stream(&p, &now, 1, 64, 1 << 20, 60000, 240000);
	CHECK(asks <= 1, "asked %d of 64 after two slow reads", asks);
	/* Three make asking the cheaper: reading is tried again within a
	 * window or two, not after the long period set while it was the
	 * cheaper. */
	for (int i = 0; i < 3; i++)
		MPIDI_BIP_path_sample(&p, READ, 1 << 20, 900000);
	asks = stream(&p, &now, 3, 64, 1 << 20, 60000, 240000);
	CHECK(asks >= 1 && asks < 3 * 64 - 16,
	      "asked %d of 192 after three slow reads", asks);
}

/* A read done while asks of its class are in flight shares the machine
 * with them: not reading's cost, unless reading has none yet. */
static void test_read_among_asks(void)
{
	MPIDI_BIP_paths_t p;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < MPIDI_BIP_PATH_SAMPLES; i++)
		MPIDI_BIP_path_sample(&p, READ, 65536, 4000);
	MPIDI_BIP_path_start(&p, SEND, 65536, 1000);
	MPIDI_BIP_path_sample(&p, READ, 65536, 40000);
	MPIDI_BIP_path_sample(&p, READ, 65536, 40000);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 65536) == 4000 * 1024 / 65536,
	      "reads among asks made reading cost %u ns/KiB",
	      MPIDI_BIP_path_cost(&p, READ, 65536));
	MPIDI_BIP_path_done(&p, SEND, 65536, 1, 9000);
	MPIDI_BIP_path_sample(&p, READ, 65536, 40000);
	MPIDI_BIP_path_sample(&p, READ, 65536, 40000);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 65536) == 40000 * 1024 / 65536,
	      "reads with nothing in flight not kept");
}

/* A read done while we send what the peer asked of us shares the machine
 * with those copies: not reading's cost either, until they are sent. */
static void test_read_among_served(void)
{
	MPIDI_BIP_paths_t p;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < MPIDI_BIP_PATH_SAMPLES; i++)
		MPIDI_BIP_path_sample(&p, READ, 1 << 20, 60000);
	MPIDI_BIP_path_invited(&p, 1 << 20);
	MPIDI_BIP_path_invited(&p, 1 << 20);
	MPIDI_BIP_path_served(&p, 1 << 20);
	for (int i = 0; i < MPIDI_BIP_PATH_SAMPLES; i++)
		MPIDI_BIP_path_sample(&p, READ, 1 << 20, 600000);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 1 << 20) == 60000 * 1024 >> 20,
	      "reads while the peer's asks were sent cost %u ns/KiB",
	      MPIDI_BIP_path_cost(&p, READ, 1 << 20));
	/* A peer that always asks: one read in MPIDI_BIP_PATH_SHARED is
	 * kept all the same, reading's cost does not freeze. */
	for (int i = 0; i < MPIDI_BIP_PATH_SAMPLES * MPIDI_BIP_PATH_SHARED; i++)
		MPIDI_BIP_path_sample(&p, READ, 1 << 20, 600000);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 1 << 20) == 600000 * 1024 >> 20,
	      "reading's cost froze while the peer always asked");
	MPIDI_BIP_path_served(&p, 1 << 20);
	MPIDI_BIP_path_served(&p, 1 << 20); /* one too many: no underflow */
	for (int i = 0; i < MPIDI_BIP_PATH_SAMPLES; i++)
		MPIDI_BIP_path_sample(&p, READ, 1 << 20, 300000);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 1 << 20) == 300000 * 1024 >> 20,
	      "reads after the peer's asks were sent not kept");
}

/* Of choices for len made while none of their costs comes, how many read
 * before the first ask. */
static int reads_unheard(MPIDI_BIP_paths_t *p, uint64_t len, uint64_t now)
{
	int n = 0;

	while (n < 2 * MPIDI_BIP_PATH_STREAM &&
	       MPIDI_BIP_path_choose(p, len) == READ) {
		MPIDI_BIP_path_start(p, READ, len, now);
		n++;
	}
	return n;
}

/* Asking measured cheaper than reading for len, and a trial of reading
 * due. */
static void trial_due(MPIDI_BIP_paths_t *p, uint64_t len)
{
	memset(p, 0, sizeof(*p));
	MPIDI_BIP_path_sample(p, READ, len, 2 * len / 8);
	MPIDI_BIP_path_sample(p, SEND, len, len / 8);
	for (int i = 0; i < MPIDI_BIP_PATH_EXPLORE; i++)
		(void)MPIDI_BIP_path_choose(p, len);
}

/* A trial waits until the way it interrupts has nothing in flight, then
 * takes every choice until its first cost is in (MPIDI_BIP_PATH_STREAM at
 * most), and no more once a stream's cost came; a peer that asks for our
 * data has us try asking at once. */
static void test_trial_alone(void)
{
	MPIDI_BIP_paths_t p;
	uint64_t now = 1000;
	int i, n;

	/* Asking measured cheaper, and asks in flight. */
	memset(&p, 0, sizeof(p));
	MPIDI_BIP_path_sample(&p, READ, 65536, 8000);
	MPIDI_BIP_path_sample(&p, SEND, 65536, 4000);
	for (i = 0; i < MPIDI_BIP_PATH_EXPLORE + MPIDI_BIP_PATH_STREAM; i++) {
		CHECK(MPIDI_BIP_path_choose(&p, 65536) == SEND,
		      "choice %d with asks in flight read", i);
		MPIDI_BIP_path_start(&p, SEND, 65536, now);
	}
	for (i = 0; i < MPIDI_BIP_PATH_EXPLORE + MPIDI_BIP_PATH_STREAM; i++)
		MPIDI_BIP_path_done(&p, SEND, 65536, 1,
				    now += 4000 * (i % 16 == 15 ? 16 : 0));
	/* Nothing in flight: the trial of reading comes, and takes every
	 * choice while its cost is not in (reads split with the sender
	 * complete later too): 40 of them; their stream's cost, dearer,
	 * ends it. */
	for (n = 0; n < 40; n++) {
		CHECK(MPIDI_BIP_path_choose(&p, 65536) == READ,
		      "choice %d of the trial asked, its cost not in", n);
		MPIDI_BIP_path_start(&p, READ, 65536, now);
	}
	for (i = 0; i < n; i++)
		MPIDI_BIP_path_done(&p, READ, 65536, 1, now += 12000);
	CHECK(MPIDI_BIP_path_cost(&p, READ, 65536) ==
		      (8000 + 12000) / 2 * 1024 / 65536,
	      "reading costs %u ns/KiB after the trial's stream",
	      MPIDI_BIP_path_cost(&p, READ, 65536));
	CHECK(MPIDI_BIP_path_choose(&p, 65536) == SEND,
	      "the trial went on after its stream's dearer cost");

	/* At most a window's worth of choices unheard. */
	trial_due(&p, 1 << 20);
	n = reads_unheard(&p, 1 << 20, now);
	CHECK(n == MPIDI_BIP_PATH_TRIAL_STREAM, "a trial of %d reads unheard",
	      n);

	/* One ask that never completes (a leak) holds a due trial back for
	 * MPIDI_BIP_PATH_STREAM choices, not for ever. */
	trial_due(&p, 65536);
	MPIDI_BIP_path_start(&p, SEND, 65536, now);
	for (n = 0; n < 2 * MPIDI_BIP_PATH_STREAM &&
		    MPIDI_BIP_path_choose(&p, 65536) == SEND;
	     n++)
		;
	CHECK(n == MPIDI_BIP_PATH_STREAM, "a due trial waited %d choices", n);
}

/* A peer asks us for data we could have read: where reading is our way,
 * our trial of asking comes at the next choice, but not before half the
 * period between trials has passed. */
static void test_invited(void)
{
	MPIDI_BIP_paths_t p;
	uint64_t now = 1000;
	int n;

	memset(&p, 0, sizeof(p));
	MPIDI_BIP_path_sample(&p, READ, 65536, 4000);
	MPIDI_BIP_path_start(&p, SEND, 65536, now);
	MPIDI_BIP_path_done(&p, SEND, 65536, 1, now += 8000);
	CHECK(MPIDI_BIP_path_choose(&p, 65536) == READ, "reading is dearer");
	MPIDI_BIP_path_invited(&p, 65536);
	CHECK(MPIDI_BIP_path_choose(&p, 65536) == READ,
	      "invited after 1 choice of %d", MPIDI_BIP_PATH_EXPLORE);
	for (n = 1; n < MPIDI_BIP_PATH_EXPLORE / 2; n++)
		(void)MPIDI_BIP_path_choose(&p, 65536);
	MPIDI_BIP_path_invited(&p, 65536);
	CHECK(MPIDI_BIP_path_choose(&p, 65536) == SEND,
	      "invited half a period on: no trial of asking");
}

/* Asks in flight are one sample when the last came. Reads done at their
 * choice meanwhile held the asks up: their time is not asking's, and a
 * time spent mostly reading is no sample. A failed message is no longer
 * in flight; a stream that never pauses is sampled all the same. */
static void test_in_flight(void)
{
	MPIDI_BIP_paths_t p;
	uint64_t now = 1000;

	memset(&p, 0, sizeof(p));
	MPIDI_BIP_path_start(&p, SEND, 65536, now);
	MPIDI_BIP_path_start(&p, SEND, 65536, now);
	MPIDI_BIP_path_sample(&p, READ, 65536, 3000);
	now += 3000 + 2 * 4000;
	MPIDI_BIP_path_done(&p, SEND, 65536, 1, now);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 65536) == 0,
	      "a sample with an ask in flight");
	MPIDI_BIP_path_done(&p, SEND, 65536, 1, now);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 65536) == 4000 * 1024 / 65536,
	      "asking costs %u ns/KiB with a read among, want %u",
	      MPIDI_BIP_path_cost(&p, SEND, 65536), 4000 * 1024 / 65536);
	memset(&p, 0, sizeof(p));
	MPIDI_BIP_path_start(&p, SEND, 65536, now);
	MPIDI_BIP_path_sample(&p, READ, 65536, 9000);
	now += 10000;
	MPIDI_BIP_path_done(&p, SEND, 65536, 1, now);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 65536) == 0,
	      "sampled a time mostly spent reading");

	MPIDI_BIP_path_start(&p, SEND, 262144, now);
	MPIDI_BIP_path_done(&p, SEND, 262144, 0, now + 1000000);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 262144) == 0,
	      "a failed ask sampled");
	now += 2000000;
	MPIDI_BIP_path_start(&p, SEND, 262144, now);
	MPIDI_BIP_path_done(&p, SEND, 262144, 1, now + 16000);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 262144) == 16000 * 1024 / 262144,
	      "after a failed ask: %u ns/KiB",
	      MPIDI_BIP_path_cost(&p, SEND, 262144));
	MPIDI_BIP_path_done(&p, SEND, 262144, 1, now + 20000);
	CHECK(MPIDI_BIP_path_cost(&p, SEND, 262144) == 16000 * 1024 / 262144,
	      "an arrival with none in flight counted");

	/* Never a pause: a sample each MPIDI_BIP_PATH_STREAM that came. */
	memset(&p, 0, sizeof(p));
	MPIDI_BIP_path_start(&p, READ, 32768, now);
	for (int i = 0; i < MPIDI_BIP_PATH_STREAM; i++) {
		MPIDI_BIP_path_start(&p, READ, 32768, now);
		now += 2000;
		MPIDI_BIP_path_done(&p, READ, 32768, 1, now);
	}
	CHECK(MPIDI_BIP_path_cost(&p, READ, 32768) == 2000 * 1024 / 32768,
	      "a stream without pause: %u ns/KiB",
	      MPIDI_BIP_path_cost(&p, READ, 32768));
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
	test_budget();
	test_read_among_asks();
	test_read_among_served();
	test_trial_alone();
	test_invited();
	test_in_flight();
	test_outlier();
	test_classes();
	return unit_result("test_path");
}
