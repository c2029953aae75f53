/*
 * test_idle.c - a process waiting in BIP must give its core away, and one
 * working between polls must not: node 0 blocks in bip_recv for a second
 * while node 1 sleeps, then waits the same way in a loop of its own
 * (bip_recv_try, bip_idle), and measures the CPU time it used each time.
 * With BIP_IDLE=block (the default) or yield it must stay well below the
 * wall time; with spin it may not (reported only). Then it polls with 20 us
 * of work between polls: bip_idle must never yield or sleep.
 * Usage: bip_run -n 2 test_idle [max-cpu-fraction]
 */
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	double limit = argc > 1 ? atof(argv[1]) : 0.25, frac[2];
	bip_ep_t *ep;
	uint64_t before;
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
	bip_close(ep);
	return fail;
}
