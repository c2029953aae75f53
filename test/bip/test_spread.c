/*
 * test_spread.c - two nodes that the scheduler keeps on one core while each
 * may use every core must not stay there (BIP_SPREAD=auto). Each round, both
 * move onto the lowest core they may use and back to their whole mask (the
 * scheduler then leaves them together while they wake each other), and
 * ping-pong: with auto a waiter must move off in at least one round (BIP's
 * counter idle_moves; the scheduler may part them first by itself, hence
 * several rounds), with off none may. Either way each node's affinity mask
 * must be what it was. Prints each round's time per round trip.
 * Usage: bip_run -n 2 test_spread auto|off
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bip.h"

#define ROUNDS 5
#define TRIPS 2000

static double wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int trip(bip_ep_t *ep, int node, uint64_t *x)
{
	int rc = node ? bip_recv(ep, x, sizeof(*x), NULL)
		      : bip_send(ep, 1, x, sizeof(*x));

	if (rc >= 0)
		rc = node ? bip_send(ep, 0, x, sizeof(*x))
			  : bip_recv(ep, x, sizeof(*x), NULL);
	return rc < 0 ? rc : 0;
}

static uint64_t moves(bip_ep_t *ep)
{
	struct bip_counters c;

	return bip_get_counters(ep, &c) ? 0 : c.idle_moves;
}

/* One round: both nodes onto one core, then TRIPS round trips. Returns the
 * moves this node made, or -1; *us gets the time per round trip. */
static long round_on_one_core(bip_ep_t *ep, const cpu_set_t *mask, double *us)
{
	int node = bip_node(ep);
	uint64_t x = 0, before = moves(ep);
	cpu_set_t one;
	double t0;

	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, mask)) {
			CPU_SET(c, &one);
			break;
		}
	if (trip(ep, node, &x) || sched_setaffinity(0, sizeof(one), &one) ||
	    sched_setaffinity(0, sizeof(*mask), mask) || trip(ep, node, &x))
		return -1;
	t0 = wall_us();
	for (int i = 0; i < TRIPS; i++)
		if (trip(ep, node, &x))
			return -1;
	*us = (wall_us() - t0) / TRIPS;
	return (long)(moves(ep) - before);
}

int main(int argc, char **argv)
{
	bip_ep_t *ep;
	cpu_set_t mask, after;
	uint64_t theirs;
	long total = 0, mine;
	double us;
	int rc, node, fail = 0, want_moves;

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
	if (CPU_COUNT(&mask) < 2 || bip_crowded(ep)) {
		if (node == 0)
			printf("skipped: %s\n", CPU_COUNT(&mask) < 2
							? "one core: nowhere to move"
							: "more nodes than cores: "
							  "they must share");
		bip_close(ep);
		return 0;
	}
	for (int r = 0; r < ROUNDS; r++) {
		mine = round_on_one_core(ep, &mask, &us);
		if (mine < 0) {
			fprintf(stderr, "node %d: round %d failed\n", node, r);
			return 1;
		}
		theirs = (uint64_t)mine;
		if (node == 1 && bip_send(ep, 0, &theirs, sizeof(theirs)) < 0)
			return 1;
		if (node == 0) {
			if (bip_recv(ep, &theirs, sizeof(theirs), NULL) < 0)
				return 1;
			total += mine + (long)theirs;
			printf("round %d: %.2f us a round trip, moves %ld + %llu\n",
			       r, us, mine, (unsigned long long)theirs);
		}
	}
	if (sched_getaffinity(0, sizeof(after), &after) ||
	    !CPU_EQUAL(&after, &mask)) {
		printf("FAILED: node %d: the affinity mask changed\n", node);
		fail = 1;
	}
	if (node == 0) {
		printf("BIP_SPREAD=%s: %ld moves in %d rounds (want %s)\n",
		       argv[1], total, ROUNDS, want_moves ? "> 0" : "0");
		if (want_moves ? total == 0 : total != 0) {
			printf("FAILED: moves\n");
			fail = 1;
		}
	}
	bip_close(ep);
	return fail;
}
