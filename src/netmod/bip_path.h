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
 * each trial that changed nothing, back to the first when one did. */
#define MPIDI_BIP_PATH_EXPLORE 32
#define MPIDI_BIP_PATH_EXPLORE_MAX 256
/* The longest trial, in choices. */
#define MPIDI_BIP_PATH_TRIAL 16

typedef struct {
	/* Nanoseconds per KiB of the last samples of each way, 0: none. */
	uint32_t cost[MPIDI_BIP_NPATHS][MPIDI_BIP_PATH_SAMPLES];
	uint32_t first;  /* the trial's first cost, 0: none yet */
	uint16_t since;  /* choices since the last trial began */
	uint16_t period; /* choices between trials, 0: the first */
	uint8_t next[MPIDI_BIP_NPATHS]; /* where the next sample goes */
	uint8_t trying;  /* the way on trial + 1, 0: none */
	uint8_t tries;   /* choices the trial made */
	uint8_t heard;   /* costs of them that came */
	uint8_t best;    /* the cheaper way when the last trial began + 1 */
	uint8_t last;    /* the way of the last sample + 1 */
} MPIDI_BIP_path_class_t;

typedef struct {
	MPIDI_BIP_path_class_t cls[MPIDI_BIP_PATH_CLASSES];
} MPIDI_BIP_paths_t;

/* The way for a message of len bytes: a way never measured in its class
 * first (reading, then sending), then the cheaper, with trials of the
 * other (see MPIDI_BIP_PATH_EXPLORE). */
enum MPIDI_BIP_path MPIDI_BIP_path_choose(MPIDI_BIP_paths_t *p, uint64_t len);
/* A message of len bytes took ns nanoseconds by way, from the choice until
 * its last byte was here. */
void MPIDI_BIP_path_sample(MPIDI_BIP_paths_t *p, enum MPIDI_BIP_path way,
			   uint64_t len, uint64_t ns);
/* The cost the choice goes by (ns per KiB, the median of the samples
 * kept; 0: none yet), for tests and counters. */
uint32_t MPIDI_BIP_path_cost(const MPIDI_BIP_paths_t *p,
			     enum MPIDI_BIP_path way, uint64_t len);
/* The costs as text for the counters: " 64K read 62 ask 118" per class
 * with samples (the class's smallest size, ns per KiB, 0: none yet). */
void MPIDI_BIP_path_format(const MPIDI_BIP_paths_t *p, char *buf,
			   size_t len);

#endif
