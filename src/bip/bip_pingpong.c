/*
 * bip_pingpong.c - BIP point-to-point performance the way the MPI-BIP paper
 * measured it: for each size, the median of 100 round trips, halved, gives
 * the one-way time; bandwidth = size / one-way time; N1/2 = the smallest
 * size reaching half of the best bandwidth. Run on 2 nodes (bip_run -n 2).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bip.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int warm_go; /* node 1: length of the last small message received */

static void die(const char *what, int rc)
{
	fprintf(stderr, "bip_pingpong: %s: %s\n", what, bip_strerror(rc));
	exit(1);
}

/* One message each way. Small sizes use small messages; larger ones long
 * messages, with the receive posted ahead (tag 0 toward node 1, 1 back). */
static void exchange(bip_ep_t *ep, int me, char *buf, size_t len)
{
	int peer = 1 - me, rc;

	if (len <= BIP_SMALL_MAX) {
		if (me == 0) {
			if ((rc = bip_send(ep, peer, buf, len)) < 0)
				die("send", rc);
			if ((rc = bip_recv(ep, buf, len, NULL)) < 0)
				die("recv", rc);
		} else {
			if ((rc = bip_recv(ep, buf, BIP_SMALL_MAX, NULL)) < 0)
				die("recv", rc);
			warm_go = rc;
			if ((rc = bip_send(ep, peer, buf, (size_t)rc)) < 0)
				die("send", rc);
		}
		return;
	}
	if (me == 0) {
		bip_req_t r;

		if ((rc = bip_ilrecv(ep, 1, buf, len, &r)) ||
		    (rc = bip_lsend(ep, peer, 0, buf, len)) ||
		    (rc = bip_wait(ep, &r, NULL)))
			die("long exchange", rc);
	} else {
		if ((rc = bip_lrecv(ep, 0, buf, len, NULL)) ||
		    (rc = bip_lsend(ep, peer, 1, buf, len)))
			die("long exchange", rc);
	}
}

int main(int argc, char **argv)
{
	size_t max = 4u << 20, half = 0;
	int reps = 100, warm = 10, opt, rc, me;
	double best_bw = 0, *t, *bw;
	bip_ep_t *ep;
	char *buf, *end;
	int nsizes = 0;

	while ((opt = getopt(argc, argv, "m:r:h")) != -1) {
		switch (opt) {
		case 'm':
			max = strtoull(optarg, &end, 0);
			if (*end == 'k' || *end == 'K')
				max <<= 10, end++;
			else if (*end == 'm' || *end == 'M')
				max <<= 20, end++;
			if (*end || *optarg == '-')
				max = SIZE_MAX;
			break;
		case 'r':
			reps = (int)strtol(optarg, &end, 10);
			if (*end)
				reps = 0;
			break;
		default:
			fprintf(stderr, "usage: bip_pingpong [-m max_bytes] "
					"[-r round_trips]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (reps < 1 || max > (1u << 30)) {
		fprintf(stderr, "bip_pingpong: -r takes a count >= 1, -m a size "
				"(k/m suffixes) up to 1g\n");
		return 2;
	}
	if ((rc = bip_init(&ep)))
		die("bip_init", rc);
	if (bip_nnodes(ep) < 2) {
		fprintf(stderr, "bip_pingpong: needs 2 nodes (bip_run -n 2)\n");
		bip_close(ep);
		return 2;
	}
	me = bip_node(ep);
	buf = calloc(1, max > BIP_SMALL_MAX ? max : BIP_SMALL_MAX);
	t = calloc((size_t)reps, sizeof(*t));
	bw = calloc(64, sizeof(*bw));
	if (!buf || !t || !bw)
		die("memory", -BIP_ENOMEM);
	if (me == 0)
		printf("# bytes one-way-usec MB/s   (median of %d round trips "
		       "/ 2)\n",
		       reps);
	/* Warm up for 200 ms first: right after start-up the scheduler may
	 * still have both processes on one core. Node 0 decides when to stop
	 * (a 1-byte message says go on, an empty one says stop). */
	if (me <= 1) {
		double until = now_us() + 200000;
		int go = 1;

		while (go) {
			if (me == 0)
				go = now_us() < until;
			exchange(ep, me, buf, (size_t)go);
			if (me == 1)
				go = warm_go;
		}
	}
	for (size_t len = 0; len <= max; len = len ? len * 2 : 1, nsizes++) {
		if (me > 1)
			continue;
		for (int i = 0; i < warm; i++)
			exchange(ep, me, buf, len);
		for (int i = 0; i < reps; i++) {
			double t0 = now_us();

			exchange(ep, me, buf, len);
			t[i] = now_us() - t0;
		}
		qsort(t, (size_t)reps, sizeof(*t), cmp_double);
		if (me == 0) {
			double one_way = t[reps / 2] / 2;

			bw[nsizes] = len / one_way;
			printf("%zu %.3f %.1f\n", len, one_way, bw[nsizes]);
			fflush(stdout);
			if (bw[nsizes] > best_bw)
				best_bw = bw[nsizes];
		}
	}
	if (me == 0) {
		int i = 0;

		/* N1/2: the first size reaching half the best bandwidth. */
		for (size_t len = 0; len <= max; len = len ? len * 2 : 1, i++)
			if (!half && best_bw > 0 && bw[i] >= best_bw / 2)
				half = len;
		printf("# N1/2 = %zu bytes (half of the best %.1f MB/s)\n",
		       half, best_bw);
	}
	free(buf);
	free(t);
	free(bw);
	rc = bip_close(ep);
	return rc ? 1 : 0;
}
