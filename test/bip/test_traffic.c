/*
 * test_traffic.c - every node sends every node, itself included (by the
 * self wire), a stream of small and long messages whose sizes straddle
 * each threshold (BIP_SMALL_MAX and the packet size, -1/0/+1 byte) plus
 * random ones, long ones spread over many tags. Receivers check every byte (by pattern), the order of small
 * messages, and that nothing is lost or duplicated. Some small messages
 * go by bip_sendv_more, flushed by whatever send or poll comes next.
 * Usage: bip_run -n N test_traffic [messages-per-pair [seed]]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "bip_wire.h" /* its inline limits: sizes worth a try */

#define MAXLONG (1u << 20)
#define MAXOUT 16 /* long sends in flight per node */

static int me, nn, per; /* tags per source */
static unsigned m;
static unsigned long seed;
static struct bip_limits lim;

static void fail(const char *what, int rc)
{
	fprintf(stderr, "node %d: %s: %s\n", me, what, bip_strerror(rc));
	exit(1);
}

static unsigned hash(unsigned a, unsigned b, unsigned c)
{
	unsigned h = (a * 2654435761u) ^ (b * 40503u) ^ (c * 2246822519u) ^
		     (unsigned)seed;

	h ^= h >> 15;
	return h * 2654435761u;
}

/* Message k from s to d: long or small, and its size. */
static bool is_long(int s, int d, unsigned k)
{
	return hash((unsigned)s, (unsigned)d, k) % 3 == 0;
}

static size_t size_of(int s, int d, unsigned k)
{
	unsigned h = hash((unsigned)s + 7, (unsigned)d, k);
	size_t p = lim.packet_size;

	if (!is_long(s, d, k)) {
		/* The largest payloads carried inline in a header (lossy
		 * and lossless wires) and their neighbours. */
		size_t t[] = { 0, 1, BIP_SMALL_MAX - 1, BIP_SMALL_MAX, 8,
			       BIP_PKT_INLINE_MAX_SEALED,
			       BIP_PKT_INLINE_MAX_SEALED + 1,
			       BIP_PKT_INLINE_MAX, BIP_PKT_INLINE_MAX + 1,
			       h % BIP_SMALL_MAX };
		return t[h / 7 % 10];
	}
	size_t t[] = { BIP_SMALL_MAX + 1, p - 1, p, p + 1, 2 * p - 1, 2 * p,
		       2 * p + 1, 0, 1, h % MAXLONG };
	return t[h / 7 % 10];
}

static unsigned char byte_of(int s, int d, unsigned k, size_t i)
{
	return (unsigned char)(hash((unsigned)s, (unsigned)d, k) + i * 131 +
			       (i >> 9));
}

static void fill(unsigned char *b, int s, int d, unsigned k, size_t len)
{
	for (size_t i = 0; i < len; i++)
		b[i] = byte_of(s, d, k, i);
}

static void check(const unsigned char *b, size_t len, int s, int d,
		  unsigned k, const char *kind)
{
	if (len != size_of(s, d, k)) {
		fprintf(stderr, "node %d: %s #%u from %d: %zu bytes, want %zu\n",
			me, kind, k, s, len, size_of(s, d, k));
		exit(1);
	}
	for (size_t i = 0; i < len; i++)
		if (b[i] != byte_of(s, d, k, i)) {
			fprintf(stderr, "node %d: %s #%u from %d: byte %zu "
					"corrupted\n",
				me, kind, k, s, i);
			exit(1);
		}
}

/* Sender state per destination; receiver state per source. */
struct peer {
	unsigned next_send;  /* index of the next message to send */
	unsigned next_small; /* index of the next small message expected */
	unsigned longs_posted, longs_done;
	unsigned small_got;
	/* posted long receives: one per tag of this source */
	bip_req_t rreq[64];
	unsigned rk[64];   /* message index awaited on each tag */
	unsigned char *rbuf[64];
	bool rposted[64];
};

struct lsend {
	bip_req_t req;
	unsigned char *buf;
};

/* The j-th long message from s to d: its index k (receiver side). */
static unsigned long_index(int s, int d, unsigned j)
{
	for (unsigned k = 0, n = 0; k < m; k++)
		if (is_long(s, d, k) && n++ == j)
			return k;
	return m;
}

static unsigned count_long(int s, int d)
{
	unsigned n = 0;

	for (unsigned k = 0; k < m; k++)
		n += is_long(s, d, k);
	return n;
}

int main(int argc, char **argv)
{
	bip_ep_t *ep;
	struct peer *peers;
	struct lsend out[MAXOUT];
	int nout = 0, rc;
	unsigned char *sbuf;
	bool done = false;
	unsigned long long bytes = 0;

	m = argc > 1 ? (unsigned)atoi(argv[1]) : 500;
	seed = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;
	if ((rc = bip_init(&ep)))
		fail("bip_init", rc);
	me = bip_node(ep);
	nn = bip_nnodes(ep);
	bip_limits(ep, &lim);
	per = (int)lim.long_tags / nn;
	if (per > 64)
		per = 64;
	if (per < 1) {
		fprintf(stderr, "need BIP_LONG_TAGS >= nodes\n");
		return 1;
	}
	peers = calloc((size_t)nn, sizeof(*peers));
	sbuf = malloc(MAXLONG);
	for (int s = 0; s < nn; s++)
		for (int t = 0; t < per; t++)
			peers[s].rbuf[t] = malloc(MAXLONG);

	while (!done) {
		int progress = 0;

		/* Send: small ones at once, long ones up to MAXOUT. */
		for (int d = 0; d < nn; d++) {
			struct peer *p = &peers[d];
			unsigned k = p->next_send;
			size_t len;

			if (k >= m)
				continue;
			len = size_of(me, d, k);
			if (!is_long(me, d, k) && k % 2) {
				fill(sbuf, me, d, k, len);
				rc = bip_send_try(ep, d, sbuf, len);
			} else if (!is_long(me, d, k)) {
				/* Gathered from two pieces, cut anywhere; every
				 * other one says more follow (held in BIP until
				 * the next send or poll flushes it). */
				struct iovec iov[2] = {
					{ sbuf, len ? k % len : 0 },
					{ sbuf + (len ? k % len : 0), 0 }
				};

				iov[1].iov_len = len - iov[0].iov_len;
				fill(sbuf, me, d, k, len);
				rc = k % 4 == 2 ? bip_sendv_more(ep, d, iov, 2)
						: bip_sendv_try(ep, d, iov, 2);
			} else {
				unsigned j = 0;

				if (nout == MAXOUT)
					continue;
				for (unsigned i = 0; i < k; i++)
					j += is_long(me, d, i);
				out[nout].buf = malloc(len ? len : 1);
				fill(out[nout].buf, me, d, k, len);
				rc = bip_ilsend(ep, d, me * per + (int)(j % (unsigned)per),
						out[nout].buf, len, &out[nout].req);
				if (rc)
					free(out[nout].buf);
				else
					nout++;
			}
			if (rc == -BIP_EAGAIN)
				continue;
			if (rc)
				fail("send", rc);
			bytes += len;
			p->next_send++;
			progress++;
		}
		/* Receive small messages, in order per source. */
		for (;;) {
			const void *data;
			struct bip_status st;
			int len = bip_peek(ep, &data, &st);

			/* Gone: every peer closed, having sent all (the
			 * counts below tell if anything is missing). */
			if (len == -BIP_EAGAIN || len == -BIP_EPEERGONE)
				break;
			if (len < 0)
				fail("peek", len);
			struct peer *p = &peers[st.node];

			while (is_long(st.node, me, p->next_small))
				p->next_small++;
			check(data, (size_t)len, st.node, me, p->next_small,
			      "small");
			p->next_small++;
			p->small_got++;
			bip_consume(ep);
			progress++;
		}
		/* Long receives: keep one posted per tag of each source. */
		done = true;
		for (int s = 0; s < nn; s++) {
			struct peer *p = &peers[s];
			unsigned nl = count_long(s, me);

			for (int t = 0; t < per; t++) {
				int fin;
				struct bip_status st;

				if (!p->rposted[t]) {
					unsigned j = p->longs_posted;

					if (j >= nl || j % (unsigned)per != (unsigned)t)
						continue;
					rc = bip_ilrecv(ep, s * per + t, p->rbuf[t],
							MAXLONG, &p->rreq[t]);
					if (rc)
						fail("ilrecv", rc);
					p->rk[t] = long_index(s, me, j);
					p->rposted[t] = true;
					p->longs_posted++;
				}
				rc = bip_test(ep, &p->rreq[t], &fin, &st);
				if (rc)
					fail("long receive", rc);
				if (!fin)
					continue;
				if (st.node != s)
					fail("long from the wrong node", -BIP_EINVAL);
				check(p->rbuf[t], st.len, s, me, p->rk[t], "long");
				p->rposted[t] = false;
				p->longs_done++;
				progress++;
			}
			if (p->longs_done < nl ||
			    p->small_got < m - nl || peers[s].next_send < m)
				done = false;
		}
		/* The receive loop above drove progress already. */
		for (int i = 0; i < nout; i++) {
			int fin;

			rc = bip_test_nopoll(ep, &out[i].req, &fin, NULL);
			if (rc)
				fail("long send", rc);
			if (fin) {
				free(out[i].buf);
				out[i--] = out[--nout];
				progress++;
			}
		}
		if (nout)
			done = false;
		if (!progress && !done)
			bip_idle_wait(ep, 1000);
	}
	if (me == 0) {
		struct bip_counters c;

		bip_get_counters(ep, &c);
		printf("node 0: %u messages to each of %d nodes (%llu bytes) "
		       "and back, all checked; %llu packets, %llu acks, %llu "
		       "retransmits, %llu faults injected, %llu duplicates "
		       "dropped\n",
		       m, nn, bytes, (unsigned long long)c.packets_sent,
		       (unsigned long long)c.acks_sent,
		       (unsigned long long)c.retransmits,
		       (unsigned long long)c.faults_injected,
		       (unsigned long long)c.dropped_dup);
	}
	rc = bip_close(ep);
	for (int s = 0; s < nn; s++)
		for (int t = 0; t < per; t++)
			free(peers[s].rbuf[t]);
	free(peers);
	free(sbuf);
	return rc ? 1 : 0;
}
