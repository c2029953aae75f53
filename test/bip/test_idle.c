/*
 * test_idle.c - a process waiting in BIP must give its core away: node 0
 * blocks in bip_recv for a second while node 1 sleeps, and measures the CPU
 * time it used meanwhile. With BIP_IDLE=block (the default) or yield it must
 * stay well below the wall time; with spin it may not (reported only).
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

int main(int argc, char **argv)
{
	double limit = argc > 1 ? atof(argv[1]) : 0.25, c0, w0, frac;
	bip_ep_t *ep;
	int rc, x = 0;

	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	if (bip_node(ep) == 1) {
		usleep(1000000);
		rc = bip_send(ep, 0, &x, sizeof(x));
		bip_close(ep);
		return rc != 0;
	}
	c0 = cpu_s();
	w0 = wall_s();
	rc = bip_recv(ep, &x, sizeof(x), NULL);
	frac = (cpu_s() - c0) / (wall_s() - w0);
	bip_close(ep);
	if (rc < 0) {
		fprintf(stderr, "recv: %s\n", bip_strerror(rc));
		return 1;
	}
	printf("waiting used %.1f%% of a core (limit %.0f%%)\n", frac * 100,
	       limit * 100);
	return frac <= limit ? 0 : 1;
}
