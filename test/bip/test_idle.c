/*
 * test_idle.c - a process waiting in BIP must give its core away, and one
 * working between polls must not: node 0 blocks in bip_recv for a second
 * while node 1 sleeps, then waits the same way in a loop of its own
 * (bip_recv_try, bip_idle), and measures the CPU time it used each time.
 * With BIP_IDLE=block (the default) or yield it must stay well below the
 * wall time; with spin it may not (reported only). Then it polls with 20 us
 * of work between polls: bip_idle must never yield or sleep. Last, both
 * nodes move onto one core (after bip_init, so BIP still counts a core
 * each and spins) and ping-pong: each waiter's spin must shrink, or every
 * message waits for its receiver's whole spin (2 x 50 us a round trip);
 * the best of 3 runs of 300 round trips must take under 30 us each.
 * Usage: bip_run -n 2 test_idle [max-cpu-fraction]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The share of a core used waiting for node 1's message, in bip_recv or
 * (own_loop) in a loop of our own. */
static double waiting(bip_ep_t *ep, int own_loop)
{
	double c0 = cpu_s(), w0 = wall_s();
	int rc, x = 0;

	if (own_loop)
		while ((rc = bip_recv_try(ep, &x, sizeof(x), NULL)) ==
		       -BIP_EAGAIN)
			bip_idle(ep, 0, 1);
	else
		rc = bip_recv(ep, &x, sizeof(x), NULL);
	if (rc < 0) {
		fprintf(stderr, "recv: %s\n", bip_strerror(rc));
		return 2;
	}
	return (cpu_s() - c0) / (wall_s() - w0);
}

static uint64_t given_away(bip_ep_t *ep)
{
	struct bip_counters c;

	bip_get_counters(ep, &c);
	return c.idle_yields + c.idle_sleeps;
}

/* Both nodes on the lowest core they may use, then 3 x 300 round trips:
 * node 0 returns the best run's time per round trip in us, 0 if skipped,
 * -1 on an error. */
static double one_core_pingpong(bip_ep_t *ep)
{
	const char *idle = getenv("BIP_IDLE");
	double best = 1e9;
	cpu_set_t cpus, one;
	int node = bip_node(ep), x = 0, rc = 0;

	if (sched_getaffinity(0, sizeof(cpus), &cpus) || CPU_COUNT(&cpus) < 2 ||
	    (idle && strcmp(idle, "spin") == 0))
		return 0;
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &cpus)) {
			CPU_SET(c, &one);
			break;
		}
	if (sched_setaffinity(0, sizeof(one), &one))
		return -1;
	for (int run = 0; run < 3 && rc >= 0; run++) {
		double t0 = wall_s();

		for (int i = 0; i < 300 && rc >= 0; i++) {
			rc = node ? bip_recv(ep, &x, sizeof(x), NULL)
				  : bip_send(ep, 1, &x, sizeof(x));
			if (rc >= 0)
				rc = node ? bip_send(ep, 0, &x, sizeof(x))
					  : bip_recv(ep, &x, sizeof(x), NULL);
		}
		if ((wall_s() - t0) / 300 < best)
			best = (wall_s() - t0) / 300;
	}
	sched_setaffinity(0, sizeof(cpus), &cpus);
	return rc < 0 ? -1 : best * 1e6;
}

int main(int argc, char **argv)
{
	double limit = argc > 1 ? atof(argv[1]) : 0.25, frac[2];
	bip_ep_t *ep;
	uint64_t before;
	double rt;
	int rc, x = 0, fail = 0;

	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	if (bip_node(ep) == 1) {
		for (int i = 0; i < 2 && !rc; i++) {
			usleep(1000000);
			rc = bip_send(ep, 0, &x, sizeof(x));
		}
		if (!rc && one_core_pingpong(ep) < 0)
			rc = 1;
		bip_close(ep);
		return rc != 0;
	}
	for (int own = 0; own < 2; own++) {
		frac[own] = waiting(ep, own);
		printf("waiting in %s used %.1f%% of a core (limit %.0f%%)\n",
		       own ? "bip_recv_try + bip_idle" : "bip_recv",
		       frac[own] * 100, limit * 100);
		fail |= frac[own] > limit;
	}
	/* A compute loop that polls now and then is not waiting. */
	before = given_away(ep);
	for (int i = 0; i < 2000; i++) {
		double t0 = wall_s();

		while (wall_s() - t0 < 20e-6)
			;
		bip_idle(ep, 0, 1);
	}
	printf("20 us of work between polls: %llu yields and sleeps "
	       "(want 0)\n", (unsigned long long)(given_away(ep) - before));
	fail |= given_away(ep) != before;
	rt = one_core_pingpong(ep);
	if (rt == 0)
		printf("one core: skipped (BIP_IDLE=spin never gives a core "
		       "away, or a single core was allowed)\n");
	else
		printf("one core, both nodes: %.1f us a round trip (want < 30)"
		       "\n", rt);
	fail |= rt < 0 || rt >= 30;
	bip_close(ep);
	return fail;
}
