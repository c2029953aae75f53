/*
 * test_spread.c - a node that another node of its host shares a CPU with,
 * each node having a core, moves off it (BIP_SPREAD=auto), and only then.
 *  - Apart: the nodes on two CPUs, node 1 computing 1 ms before each
 *    answer, so that node 0's waits yield and look: at most two moves
 *    while node 1 never ran on node 0's CPU (as far as node 1 saw while
 *    it worked, and node 0 before and after each round trip; the
 *    scheduler may yet bring them together unseen, as it did under the
 *    sanitizer build on a loaded machine), where looks that found someone
 *    on their CPU each time would move about 5 times (a gap of 2 ms,
 *    doubled).
 *  - Together: each round, both nodes move onto the lowest CPU they may use
 *    and back to their whole mask (the scheduler then leaves them there
 *    while they wake each other), and ping-pong. A round counts if they
 *    were still on one CPU after their first round trip. With auto, some
 *    counted round must end with a move and the nodes on two CPUs; with
 *    off, no counted round may move.
 * Each node's affinity mask must be what it was. Prints each round's time
 * per round trip.
 * Usage: bip_run -n 2 test_spread auto|off
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bip.h"

#define ROUNDS 8
#define TRIPS 2000
#define APART_TRIPS 50
#define APART_MOVES_MAX 2

static double wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* What node 1 tells node 0 at the end of a round trip: the CPU it answers
 * from, and every CPU (below 64) it ran on while it worked. */
struct answer {
	int64_t cpu;
	uint64_t ran;
};

/* A round trip from node 0; node 1 works work_us before it answers. */
static int trip(bip_ep_t *ep, int node, struct answer *a, double work_us)
{
	int rc, cpu;

	if (node == 0) {
		rc = bip_send(ep, 1, a, sizeof(*a));
		return rc < 0 ? rc : bip_recv(ep, a, sizeof(*a), NULL) < 0;
	}
	rc = bip_recv(ep, a, sizeof(*a), NULL);
	if (rc < 0)
		return rc;
	a->ran = 0;
	for (double t0 = wall_us(); wall_us() - t0 < work_us;)
		if ((cpu = sched_getcpu()) >= 0 && cpu < 64)
			a->ran |= UINT64_C(1) << cpu;
	a->cpu = sched_getcpu();
	return bip_send(ep, 0, a, sizeof(*a)) < 0;
}

/* Whether node 1 ran on cpu during the round trip's work, or answered
 * from it. */
static int shared(const struct answer *a, int cpu)
{
	return a->cpu == cpu ||
	       (cpu >= 0 && cpu < 64 && (a->ran >> cpu & 1));
}

static int64_t moves(bip_ep_t *ep)
{
	struct bip_counters c;

	return bip_get_counters(ep, &c) ? -1 : (int64_t)c.idle_moves;
}

/* Onto cpu alone, then back to mask: the scheduler leaves us there. */
static int place(int cpu, const cpu_set_t *mask)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ||
	       sched_setaffinity(0, sizeof(*mask), mask);
}

/* Node 0's moves, added up from both nodes, -1 on an error. */
static int64_t both_moves(bip_ep_t *ep, int node, int64_t since)
{
	int64_t m = moves(ep) - since, theirs;

	if (node == 1)
		return bip_send(ep, 0, &m, sizeof(m)) < 0 ? -1 : m;
	if (bip_recv(ep, &theirs, sizeof(theirs), NULL) < 0)
		return -1;
	return m + theirs;
}

int main(int argc, char **argv)
{
	bip_ep_t *ep;
	cpu_set_t mask, after;
	int cpus[2] = { -1, -1 }, n = 0, node, rc, fail = 0, want_moves;
	int counted = 0, parted = 0, met = 0;
	int64_t m0, apart = 0, moved = 0;
	struct answer x = { 0, 0 };

	if (argc != 2 || (strcmp(argv[1], "auto") && strcmp(argv[1], "off"))) {
		fprintf(stderr, "usage: test_spread auto|off\n");
		return 2;
	}
	want_moves = strcmp(argv[1], "auto") == 0;
	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	node = bip_node(ep);
	if (sched_getaffinity(0, sizeof(mask), &mask)) {
		perror("sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &mask))
			cpus[n++] = c;
	if (n < 2 || bip_crowded(ep)) {
		if (node == 0)
			printf("skipped: %s\n",
			       n < 2 ? "one CPU: nowhere to move"
				     : "more nodes than cores: they must share");
		bip_close(ep);
		return 0;
	}

	m0 = moves(ep);
	if (trip(ep, node, &x, 0) || place(cpus[node], &mask) ||
	    trip(ep, node, &x, 0))
		return 1;
	for (int i = 0; i < APART_TRIPS; i++) {
		int before = sched_getcpu();

		if (trip(ep, node, &x, 1000))
			return 1;
		met |= node == 0 && (shared(&x, before) ||
				     shared(&x, sched_getcpu()));
	}
	apart = both_moves(ep, node, m0);
	if (apart < 0)
		return 1;

	for (int r = 0; r < ROUNDS; r++) {
		int together;
		double t0, us;
		int64_t got;

		m0 = moves(ep);
		if (trip(ep, node, &x, 0) || place(cpus[0], &mask) ||
		    trip(ep, node, &x, 0))
			return 1;
		together = node == 0 && x.cpu == sched_getcpu();
		t0 = wall_us();
		for (int i = 0; i < TRIPS; i++)
			if (trip(ep, node, &x, 0))
				return 1;
		us = (wall_us() - t0) / TRIPS;
		got = both_moves(ep, node, m0);
		if (got < 0)
			return 1;
		if (node != 0 || !together)
			continue;
		counted++;
		moved += got;
		parted |= got > 0 && x.cpu != sched_getcpu();
		printf("round %d: %.2f us a round trip, %lld moves, ending on "
		       "CPUs %d and %lld\n", r, us, (long long)got,
		       sched_getcpu(), (long long)x.cpu);
	}

	if (sched_getaffinity(0, sizeof(after), &after) ||
	    !CPU_EQUAL(&after, &mask)) {
		printf("FAILED: node %d: the affinity mask changed\n", node);
		fail = 1;
	}
	if (node == 0) {
		printf("apart: %lld moves in %d round trips (want <= %d)%s\n",
		       (long long)apart, APART_TRIPS, APART_MOVES_MAX,
		       met ? "; not checked: the scheduler put them together"
			   : "");
		if (want_moves && !met && apart > APART_MOVES_MAX) {
			printf("FAILED: nodes on two CPUs moved\n");
			fail = 1;
		}
		printf("BIP_SPREAD=%s: together in %d rounds of %d, %lld moves "
		       "(want %s)\n", argv[1], counted, ROUNDS,
		       (long long)moved,
		       want_moves ? "a round that moved them apart" : "0");
		if (!counted)
			printf("skipped the rounds together: the scheduler "
			       "parted the nodes itself every time\n");
		else if (want_moves ? !parted : moved != 0) {
			printf("FAILED: moves\n");
			fail = 1;
		}
	}
	bip_close(ep);
	return fail;
}
