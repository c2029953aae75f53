/*
 * bip_path.h - which way a long message the receiver may read travels:
 * read by the receiver from the sender's memory (bip_read: one copy, by
 * one process) or sent by the sender through BIP (a long message: on one
 * host two copies through the rings, both processes copying at once),
 * chosen by what each way cost lately. Free of MPICH, like bip_ctl.h.
 *
 * Neither way wins everywhere, and what decides is the data, not the
 * machine alone: a read pulls the sender's lines across cores, fast while
 * they are clean in a shared cache (data sent again and again unchanged:
 * 64 KiB in 3.9 us here against 7.6 by the rings), slow while they are
 * dirty in the sender's own cache (data it just wrote: 11.6 us against
 * 7.6), where the rings' two copies overlap. So the receiver measures:
 * each size class keeps the last few costs of each way, takes the
 * cheaper one, and now and then the other, to notice when the data
 * changes its habits.
 *
 * A way can also get cheaper with use: the receiver's cache keeps what
 * its last read brought over, so reads of data sent again unchanged
 * (OSU's buffers) measured 120-260 ns/KiB when they came one in 32,
 * between asks, and 37-50 from the second in a row (a fresh buffer took
 * a dozen to get there). So the other way is tried in a trial of
 * consecutive choices, for as long as it keeps getting cheaper, and a
 * way's first message after the other's is not counted.
 *
 * A way that completes later (asking; a read shared with the sender) is
 * measured as a throughput: the time its messages of a class were in
 * flight over the bytes that came. A message alone costs its wait; in a
 * stream each waits behind the others (1 MiB windows: 8000 ns/KiB from
 * its choice against 110 for a read), but the stream's cost is its
 * bytes' time. A read done at the choice costs its own time either way.
 * On a quiet host with a core per rank the rings' two copies overlap, and
 * streams of 64 KiB-1 MiB went 1.5 x faster asked than read; while the
 * hypervisor takes a core from under one of the two, the rings stall and
 * reading is 3-4 x faster. Both happen on the same machine within
 * seconds, so the choice stays measured. So that each way's time is its
 * own, a trial begins only once nothing is in flight in that class, and
 * takes every choice until its first cost is in (a window's worth at
 * most); the time we spend reading meanwhile all the same (a read is done
 * by us, at once, and holds up our side of the rings) is not asking's.
 */
#ifndef BIP_PATH_H_INCLUDED
#define BIP_PATH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

enum MPIDI_BIP_path {
	MPIDI_BIP_PATH_SEND, /* ask the sender for the data */
	MPIDI_BIP_PATH_READ, /* read it ourselves */
	MPIDI_BIP_NPATHS
};

/* Sizes by powers of two from 8 KiB (the smallest BIP lets a peer read
 * by default) to 4 MiB and over. */
#define MPIDI_BIP_PATH_CLASSES 10
/* Costs kept per way: the median of three ignores one preempted run. */
#define MPIDI_BIP_PATH_SAMPLES 3
/* Choices between trials of the other way: from the first, doubled after
 * each trial that changed nothing, back to the first when one did, when
 * its first cost alone would have, or when the costs swapped without a
 * trial. */
#define MPIDI_BIP_PATH_EXPLORE 32
#define MPIDI_BIP_PATH_EXPLORE_MAX 1024
/* And at least so many that the trials at the other way's measured cost
 * take no more than a BUDGET-th of the time more than the cheaper way
 * would (a trial of 64 asks at 4 x a read's cost: 6144 choices), up to
 * PERIOD_MAX: a way far dearer is looked at rarely (streams of 512 KiB
 * messages asked at 3-4 x their reads' cost, trials every 32 to 2048
 * choices, came to 0.74 x the throughput of reading alone). */
#define MPIDI_BIP_PATH_BUDGET 32
#define MPIDI_BIP_PATH_PERIOD_MAX 16384
/* The longest trial of messages alone, in choices. */
#define MPIDI_BIP_PATH_TRIAL 16
/* The most choices a trial takes before its first cost is in: a window of
 * OSU's benchmarks (up to 256 MiB of 4 MiB messages the dearer way). */
#define MPIDI_BIP_PATH_TRIAL_STREAM 64
/* Messages that came before their throughput is a sample, though more are
 * in flight: a stream that never pauses still gets measured. Arrivals
 * come in bursts (a window of rendezvous messages asked fragment by
 * fragment all end in its last round: 4 MiB ones, 16 of 64 in 12 ms, the
 * next 16 in 60 us), so a sample waits for a pause, or for 4 x the asks
 * BIP's long tags let be in flight (64 by default): a burst at its edge
 * then errs by a quarter at most. Also the most choices a trial that is
 * due waits for what is in flight. */
#define MPIDI_BIP_PATH_STREAM 256
/* Messages done at their choice while the other way's were in flight,
 * not kept in a row, before one is kept all the same. */
#define MPIDI_BIP_PATH_SHARED 16

/* The messages of a way and class in flight since t0, the bytes of those
 * that came meanwhile, in came messages, and the time spent reading when
 * it began (MPIDI_BIP_paths_t): its next sample. */
typedef struct {
	uint32_t out, came;
	uint64_t t0, bytes, reading;
} MPIDI_BIP_path_busy_t;

typedef struct {
	/* Nanoseconds per KiB of the last samples of each way, 0: none. */
	uint32_t cost[MPIDI_BIP_NPATHS][MPIDI_BIP_PATH_SAMPLES];
	uint32_t first;  /* the trial's first cost, 0: none yet */
	uint16_t since;  /* choices since the last trial began */
	uint16_t period; /* choices between trials, 0: the first */
	uint8_t next[MPIDI_BIP_NPATHS]; /* where the next sample goes */
	uint8_t trying;  /* the way on trial + 1, 0: none */
	uint16_t tries;  /* choices the trial made */
	uint8_t heard;   /* costs of them that came */
	uint8_t best;    /* the cheaper way when the last trial began + 1 */
	uint8_t last;    /* the way of the last sample + 1 */
	uint16_t waited; /* choices a due trial waited for what was in flight */
	uint32_t served; /* our messages the peer asked for, in flight */
	uint8_t unkept;  /* messages done at their choice not kept in a row */
	MPIDI_BIP_path_busy_t busy[MPIDI_BIP_NPATHS];
} MPIDI_BIP_path_class_t;

typedef struct {
	MPIDI_BIP_path_class_t cls[MPIDI_BIP_PATH_CLASSES];
	uint64_t reading; /* nanoseconds of reads done at their choice */
} MPIDI_BIP_paths_t;

/* The way for a message of len bytes: reading first, for a period
 * (MPIDI_BIP_PATH_EXPLORE choices after the first), then a trial of
 * asking, then the cheaper, with trials of the other. */
enum MPIDI_BIP_path MPIDI_BIP_path_choose(MPIDI_BIP_paths_t *p, uint64_t len);
/* A message of len bytes took ns nanoseconds by way, done at its choice
 * (a read alone). */
void MPIDI_BIP_path_sample(MPIDI_BIP_paths_t *p, enum MPIDI_BIP_path way,
			   uint64_t len, uint64_t ns);
/* A message of len bytes that completes later went by way at now (ns); it
 * came (ok) or failed at now: the way's throughput is sampled when none
 * of its class is in flight any more, or MPIDI_BIP_PATH_STREAM came. */
void MPIDI_BIP_path_start(MPIDI_BIP_paths_t *p, enum MPIDI_BIP_path way,
			  uint64_t len, uint64_t now);
void MPIDI_BIP_path_done(MPIDI_BIP_paths_t *p, enum MPIDI_BIP_path way,
			 uint64_t len, int ok, uint64_t now);
/* A peer asked us for a message of len bytes that it could have read: if
 * reading is our way in that class, a trial of asking begins at our next
 * choice, not before half the period between trials has passed. Each
 * side's asks wait on the other's progress, and a side that reads (at
 * once, by itself) holds up the other's asks: one side's trial alone
 * finds asking dearer than it is for both (64 KiB both ways: 9-10 GB/s
 * read, 20 asked, and trials alone kept reading). Until the message is
 * sent (MPIDI_BIP_path_served), our reads in that class share the
 * machine with its copies into the rings: not reading's cost, as with
 * our own asks in flight. */
void MPIDI_BIP_path_invited(MPIDI_BIP_paths_t *p, uint64_t len);
void MPIDI_BIP_path_served(MPIDI_BIP_paths_t *p, uint64_t len);
/* A way's cost (ns per KiB, the median of the samples kept; 0: none
 * yet), for tests and counters. The choice goes by it, but for the way
 * that was the cheaper when the last trial began, by its lowest. */
uint32_t MPIDI_BIP_path_cost(const MPIDI_BIP_paths_t *p,
			     enum MPIDI_BIP_path way, uint64_t len);
/* The costs as text for the counters: " 64K read 62 ask 118" per class
 * with samples (the class's smallest size, ns per KiB, 0: none yet). */
void MPIDI_BIP_path_format(const MPIDI_BIP_paths_t *p, char *buf,
			   size_t len);

#endif
