/*
 * test_lend.c - small messages lent in place. Node 1 sends a stream of
 * messages too wide for a header (so on shm they stay in its ring, lent to
 * node 0's queue). Node 0 peeks the first one and keeps it unconsumed
 * while its NIC program takes in what else comes, then checks the first
 * one's bytes are still there: a lent record's ring space must not go back
 * to the sender before it is consumed. Then it takes every message in
 * order, checks every byte, and checks the counter: every message was
 * lent on shm, none elsewhere.
 * Usage: bip_run -n 2 test_lend [messages]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bip.h"

#define LEN 4000 /* wider than any inline payload, within BIP_SMALL_MAX */

static void fail(const char *what, int rc)
{
	fprintf(stderr, "node 0: %s: %s\n", what, bip_strerror(rc));
	exit(1);
}

static void fill(unsigned char *m, int i)
{
	for (int j = 0; j < LEN; j++)
		m[j] = (unsigned char)(i * 7 + j * 13);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int sender(bip_ep_t *ep, int n)
{
	unsigned char m[LEN];
	int rc;

	for (int i = 0; i < n; i++) {
		fill(m, i);
		if ((rc = bip_send(ep, 0, m, LEN))) {
			fprintf(stderr, "node 1: send %d: %s\n", i,
				bip_strerror(rc));
			return 1;
		}
	}
	rc = bip_recv(ep, &n, sizeof(n), NULL); /* until node 0 is done */
	bip_close(ep);
	return rc < 0;
}

/* The oldest message, waiting for it. */
static const unsigned char *oldest(bip_ep_t *ep, struct bip_status *st)
{
	const void *data;
	int rc;

	/* An overflow (a tiny BIP_SMALL_QUEUE) is reported, and loses
	 * nothing: look again. */
	while ((rc = bip_peek(ep, &data, st)) == -BIP_EAGAIN ||
	       rc == -BIP_EOVERFLOW)
		;
	if (rc < 0)
		fail("bip_peek", rc);
	return data;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, rc;
	unsigned char want[LEN], first[LEN];
	const unsigned char *m;
	const char *wire, *why;
	struct bip_counters c;
	struct bip_status st;
	bip_ep_t *ep;
	double t0;

	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	if (bip_node(ep) == 1)
		return sender(ep, n);

	m = oldest(ep, &st);
	memcpy(first, m, LEN);
	/* 50 ms of the NIC program's turns with the first message held: the
	 * sender fills what room it gets meanwhile. */
	for (t0 = now(); now() - t0 < 0.05;)
		if ((rc = bip_poll(ep)) < 0 && rc != -BIP_EOVERFLOW)
			fail("bip_poll", rc);
	if (oldest(ep, &st) != m || memcmp(m, first, LEN)) {
		fprintf(stderr, "node 0: the held message changed\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		m = oldest(ep, &st);
		fill(want, i);
		if (st.node != 1 || st.len != LEN || memcmp(m, want, LEN)) {
			fprintf(stderr, "node 0: message %d from %d, %zu "
					"bytes: wrong\n",
				i, st.node, st.len);
			return 1;
		}
		if ((rc = bip_consume(ep)))
			fail("bip_consume", rc);
	}
	if ((rc = bip_get_counters(ep, &c)) ||
	    (rc = bip_peer_wire(ep, 1, &wire, &why)))
		fail("counters", rc);
	printf("%d messages by %s, %llu read in place\n", n, wire,
	       (unsigned long long)c.small_in_place);
	if (strcmp(wire, "shm") ? c.small_in_place != 0
				: c.small_in_place != (unsigned long long)n) {
		fprintf(stderr, "node 0: want %d in place on shm, 0 "
				"elsewhere\n",
			n);
		return 1;
	}
	if ((rc = bip_send(ep, 1, &n, sizeof(n))))
		fail("bip_send", rc);
	bip_close(ep);
	return 0;
}
