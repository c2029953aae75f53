/*
 * test_direct.c - small messages taken straight from the link (a peer of
 * this host: bip_poll(3) runs a turn of the NIC program only when one is
 * due, and the receive calls take small messages from the ring) and those
 * a turn put in the queue come out in one order, intact. Every other node
 * sends a stream of every width (inline in a header, lent from the ring,
 * up to BIP_SMALL_MAX) with long messages among them; node 0 drains them
 * with a seeded mix of calls: bip_peek_nopoll, bip_peek, runs of bip_poll
 * with a message held (the turns queue newer ones behind it; its bytes
 * must not change), bip_recv_try, bip_drain (whose handler holds each
 * message: the calls that take messages refuse meanwhile). It also sends to itself on the way (the
 * self wire, read by turns only). Every message is checked, in order per
 * node. Then each sender and node 0 play PINGS round trips: on shm, where
 * a message to an idle peer goes outside the sequence, node 0 must take
 * some straight from the ring (counter small_direct; a stream that fills
 * the ring queues sequenced ones, which only turns take), elsewhere none;
 * then bursts that bip_drain takes, every message of them straight from
 * the ring on shm.
 * Usage: bip_run -n N test_direct [messages]    (N <= 4)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"

#define NODES_MAX 4
#define LONG_EVERY 97
#define LONG_LEN (256 * 1024)
#define LONG_TAG 3
#define PINGS 100
#define BURSTS 10
#define BURST 50 /* fits the smallest ring: sent outside the sequence */

static const size_t widths[] = { 1, 8, 16, 24, 32, 33, 64, 100, 1000, 4000 };
#define NWIDTHS (sizeof(widths) / sizeof(widths[0]))

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned draw(unsigned n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned)((rng * 0x2545f4914f6cdd1dull) >> 33) % n;
}

static void fail(int node, const char *what, int rc)
{
	fprintf(stderr, "node %d: %s: %s\n", node, what, bip_strerror(rc));
	exit(1);
}

/* Message i of a stream: its width, and a first word that names it. */
static size_t fill(unsigned char *m, int i)
{
	size_t len = widths[i % NWIDTHS];

	for (size_t j = 0; j < len; j++)
		m[j] = (unsigned char)(i * 31 + j * 7 + 1);
	if (len >= sizeof(int))
		memcpy(m, &i, sizeof(int));
	return len;
}

static int sender(bip_ep_t *ep, int n)
{
	static unsigned char big[LONG_LEN];
	unsigned char m[4000];
	int rc;

	for (size_t j = 0; j < LONG_LEN; j++)
		big[j] = (unsigned char)(j * 3);
	for (int i = 0; i < n; i++) {
		if ((rc = bip_send(ep, 0, m, fill(m, i))))
			fail(1, "bip_send", rc);
		if (i % LONG_EVERY == LONG_EVERY - 1 &&
		    (rc = bip_lsend(ep, 0, LONG_TAG, big, LONG_LEN)))
			fail(1, "bip_lsend", rc);
	}
	/* The round trips once node 0 says so: its drain takes messages in
	 * arrival order from every node. */
	if ((rc = bip_recv(ep, m, sizeof(m), NULL)) < 0)
		fail(1, "bip_recv", rc);
	for (int i = 0; i < PINGS; i++)
		if ((rc = bip_send(ep, 0, &i, sizeof(i))) < 0 ||
		    (rc = bip_recv(ep, m, sizeof(m), NULL)) < 0)
			fail(1, "ping", rc);
	/* Bursts, each once node 0 took the last. */
	for (int b = 0; b < BURSTS; b++)
		for (int i = 0; i < BURST; i++)
			if ((rc = bip_send(ep, 0, &i, sizeof(i))) < 0 ||
			    (i == BURST - 1 &&
			     (rc = bip_recv(ep, m, sizeof(m), NULL)) < 0))
				fail(1, "burst", rc);
	rc = bip_recv(ep, &n, sizeof(n), NULL); /* until node 0 is done */
	bip_close(ep);
	return rc < 0;
}

struct receiver {
	bip_ep_t *ep;
	int next[NODES_MAX]; /* the next message expected from each node */
	int longs;    /* long messages received */
	bip_req_t lreq;
	unsigned char big[LONG_LEN];
};

/* Re-post the long receive once the last one is in, and check it. */
static void long_check(struct receiver *r)
{
	int done, rc;

	if ((rc = bip_test_nopoll(r->ep, &r->lreq, &done, NULL)))
		fail(0, "bip_test_nopoll", rc);
	if (!done)
		return;
	for (size_t j = 0; j < LONG_LEN; j++)
		if (r->big[j] != (unsigned char)(j * 3)) {
			fprintf(stderr, "node 0: long message %d: byte %zu\n",
				r->longs, j);
			exit(1);
		}
	r->longs++;
	memset(r->big, 0, LONG_LEN);
	if ((rc = bip_ilrecv(r->ep, LONG_TAG, r->big, LONG_LEN, &r->lreq)))
		fail(0, "bip_ilrecv", rc);
}

static void check(struct receiver *r, const unsigned char *m,
		  const struct bip_status *st)
{
	unsigned char want[4000];
	int i = r->next[st->node]++;
	size_t len = fill(want, i);

	if (st->len != len || memcmp(m, want, len)) {
		fprintf(stderr, "node 0: message %d from node %d (%zu bytes, "
				"want %zu): wrong or out of order\n",
			i, st->node, st->len, len);
		exit(1);
	}
}

struct drain_arg {
	struct receiver *r;
	int calls, stop_at;
};

/* bip_drain's handler: each message is checked as the others are. Now and
 * then the calls that take messages are tried (they must refuse: this one
 * is held), and turns run while it is held (its bytes must not change).
 * The drain stops at its stop_at-th message. */
static int drained(void *arg, const void *data, size_t len, int node)
{
	struct drain_arg *a = arg;
	struct bip_status st = { .node = node, .tag = -1, .len = len };
	unsigned char copy[4000], b;
	const void *d;
	int rc;

	memcpy(copy, data, len);
	if (draw(4) == 0) {
		if (bip_peek_nopoll(a->r->ep, &d, NULL) != -BIP_EBUSY ||
		    bip_peek(a->r->ep, &d, NULL) != -BIP_EBUSY ||
		    bip_consume(a->r->ep) != -BIP_EBUSY ||
		    bip_recv_try(a->r->ep, &b, 1, NULL) != -BIP_EBUSY ||
		    bip_drain(a->r->ep, 1, drained, a) != -BIP_EBUSY) {
			fprintf(stderr, "node 0: a call took a message that "
					"bip_drain's handler holds\n");
			exit(1);
		}
		for (unsigned k = draw(20); k > 0; k--)
			if ((rc = bip_poll(a->r->ep)) < 0 &&
			    rc != -BIP_EOVERFLOW)
				fail(0, "bip_poll", rc);
		if (memcmp(copy, data, len)) {
			fprintf(stderr, "node 0: a drained message changed\n");
			exit(1);
		}
	}
	check(a->r, copy, &st);
	return ++a->calls == a->stop_at;
}

/* bip_drain of up to max messages, stopped by its handler at a random one:
 * the count it returns is the handler's. */
static int drain_some(struct receiver *r)
{
	struct drain_arg a = { .r = r, .stop_at = 1 + (int)draw(8) };
	int max = (int)draw(8), rc = bip_drain(r->ep, max, drained, &a);

	if (rc < 0 && rc != -BIP_EOVERFLOW)
		fail(0, "bip_drain", rc);
	if (rc < 0 ? a.calls != 0
		   : rc != a.calls || rc > max || rc > a.stop_at) {
		fprintf(stderr, "node 0: bip_drain (max %d, stop at %d) "
				"returned %d for %d messages\n",
			max, a.stop_at, rc, a.calls);
		exit(1);
	}
	return a.calls > 0;
}

/* One step of the drain, chosen at random: 1 when it took a message. */
static int drain_step(struct receiver *r)
{
	unsigned char copy[4000], buf[4000];
	struct bip_status st;
	const void *data;
	int rc;

	switch (draw(6)) {
	case 0:
		rc = bip_peek_nopoll(r->ep, &data, &st);
		break;
	case 1:
		rc = bip_peek(r->ep, &data, &st);
		break;
	case 2:
		/* Held while turns queue what comes behind it. */
		if ((rc = bip_peek(r->ep, &data, &st)) < 0)
			break;
		memcpy(copy, data, st.len);
		for (unsigned k = draw(40); k > 0; k--)
			if ((rc = bip_poll(r->ep)) < 0 &&
			    rc != -BIP_EOVERFLOW)
				fail(0, "bip_poll", rc);
		if (memcmp(copy, data, st.len)) {
			fprintf(stderr, "node 0: a held message changed\n");
			exit(1);
		}
		rc = (int)st.len;
		break;
	case 3:
		if ((rc = bip_recv_try(r->ep, buf, sizeof(buf), &st)) >= 0)
			check(r, buf, &st);
		return rc >= 0;
	case 4:
		return drain_some(r);
	default:
		for (unsigned k = draw(20); k > 0; k--)
			if ((rc = bip_poll(r->ep)) < 0 &&
			    rc != -BIP_EOVERFLOW)
				fail(0, "bip_poll", rc);
		return 0;
	}
	if (rc == -BIP_EAGAIN || rc == -BIP_EOVERFLOW)
		return 0;
	if (rc < 0)
		fail(0, "bip_peek", rc);
	check(r, data, &st);
	if ((rc = bip_consume(r->ep)))
		fail(0, "bip_consume", rc);
	return 1;
}

struct ping {
	int got, node;
	size_t len;
};

static int ping_got(void *arg, const void *data, size_t len, int node)
{
	struct ping *p = arg;

	p->node = node;
	p->len = len;
	if (len == sizeof(p->got))
		memcpy(&p->got, data, len);
	return 0;
}

/* The sender's bursts, drained as they come: on shm every message is
 * taken straight from the ring, the drains' periodic turns too leaving
 * it to them (bipfw_poll_light); elsewhere none is. */
static void bursts(bip_ep_t *ep, int node)
{
	struct bip_counters c0, c1;
	const char *wire, *why;
	int rc;

	if ((rc = bip_get_counters(ep, &c0)) ||
	    (rc = bip_peer_wire(ep, node, &wire, &why)))
		fail(0, "counters", rc);
	for (int b = 0; b < BURSTS; b++) {
		for (int i = 0; i < BURST; i++) {
			struct ping p = { .got = -1 };

			while ((rc = bip_drain(ep, 1, ping_got, &p)) == 0 ||
			       rc == -BIP_EOVERFLOW)
				;
			if (rc != 1 || p.node != node || p.got != i) {
				fprintf(stderr, "node 0: burst message %d from "
						"%d: %d, %d from %d\n",
					i, node, rc, p.got, p.node);
				exit(1);
			}
		}
		if ((rc = bip_send(ep, node, &b, sizeof(b))))
			fail(0, "bip_send", rc);
	}
	if ((rc = bip_get_counters(ep, &c1)))
		fail(0, "counters", rc);
	if (c1.small_direct - c0.small_direct !=
	    (strcmp(wire, "shm") ? 0 : BURSTS * BURST)) {
		fprintf(stderr, "node 0: %llu of %d burst messages from node %d "
				"by %s taken straight from the ring\n",
			(unsigned long long)(c1.small_direct - c0.small_direct),
			BURSTS * BURST, node, wire);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static struct receiver r;
	int n = argc > 1 ? atoi(argv[1]) : 2000, self = n / 10, sent = 0;
	int nodes, longs, rc;
	unsigned char m[4000];
	const char *wire, *why;
	struct bip_counters c;
	bip_ep_t *ep;

	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	nodes = bip_nnodes(ep);
	if (nodes < 2 || nodes > NODES_MAX) {
		fprintf(stderr, "test_direct: 2 to %d nodes\n", NODES_MAX);
		return 1;
	}
	if (bip_node(ep) != 0)
		return sender(ep, n);
	longs = (nodes - 1) * (n / LONG_EVERY);
	r.ep = ep;
	if ((rc = bip_ilrecv(ep, LONG_TAG, r.big, LONG_LEN, &r.lreq)))
		fail(0, "bip_ilrecv", rc);
	for (;;) {
		int node = 1;

		while (node < nodes && r.next[node] == n)
			node++;
		if (node == nodes && r.next[0] == self && r.longs == longs)
			break;
		if (sent < self && draw(8) == 0) {
			if ((rc = bip_send(ep, 0, m, fill(m, sent))))
				fail(0, "bip_send to itself", rc);
			sent++;
		}
		drain_step(&r);
		long_check(&r);
	}
	/* Each sender's round trips in turn, received by bip_drain as the MPI
	 * netmod does (bip_recv's wait would run turns instead). */
	for (int node = 1; node < nodes; node++) {
		if ((rc = bip_send(ep, node, &n, sizeof(n))))
			fail(0, "bip_send", rc);
		for (int i = 0; i < PINGS; i++) {
			struct ping p = { .got = -1 };

			while ((rc = bip_drain(ep, 1, ping_got, &p)) == 0 ||
			       rc == -BIP_EOVERFLOW)
				;
			if (rc != 1 || p.len != sizeof(p.got) ||
			    p.node != node || p.got != i) {
				fprintf(stderr, "node 0: ping %d from %d: "
						"%d, %d from %d\n",
					i, node, rc, p.got, p.node);
				return 1;
			}
			if ((rc = bip_send(ep, node, &i, sizeof(i))))
				fail(0, "pong", rc);
		}
		bursts(ep, node);
	}
	if ((rc = bip_get_counters(ep, &c)) ||
	    (rc = bip_peer_wire(ep, 1, &wire, &why)))
		fail(0, "counters", rc);
	printf("%d messages from each of %d nodes by %s, %d from itself, %d "
	       "long; %llu read in place, %llu taken straight from a ring\n",
	       n, nodes - 1, wire, r.next[0], r.longs,
	       (unsigned long long)c.small_in_place,
	       (unsigned long long)c.small_direct);
	if (strcmp(wire, "shm") ? c.small_direct != 0 : c.small_direct == 0) {
		fprintf(stderr, "node 0: want messages taken straight from "
				"the rings on shm, none elsewhere\n");
		return 1;
	}
	for (int node = 1; node < nodes; node++)
		if ((rc = bip_send(ep, node, &n, sizeof(n))))
			fail(0, "bip_send", rc);
	bip_cancel(ep, &r.lreq);
	bip_close(ep);
	return 0;
}
