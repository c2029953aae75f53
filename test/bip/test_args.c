/*
 * test_args.c - every misuse of the BIP API returns its error code (and
 * never aborts). Run on 2 nodes under bip_run; with "noenv", run alone to
 * check that bip_init without a launcher says so.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"

static int failures, me;

#define EXPECT(call, code)                                                     \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ != (code)) {                                           \
			fprintf(stderr, "node %d: %s returned %d (%s), want "  \
					"%d\n",                                \
				me, #call, rc_, bip_strerror(rc_), code);      \
			failures++;                                            \
		}                                                              \
	} while (0)

static void test_strerror(void)
{
	for (int i = 0; i < BIP_NERRORS; i++) {
		const char *s = bip_strerror(-i);

		if (!s || !*s || strcmp(s, bip_strerror(i)) != 0) {
			fprintf(stderr, "bip_strerror(%d) missing\n", -i);
			failures++;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(s, bip_strerror(j)) == 0) {
				fprintf(stderr, "codes %d and %d share a text\n",
					i, j);
				failures++;
			}
	}
	if (strcmp(bip_strerror(-9999), "unknown error") != 0)
		failures++;
}

static void test_open_params(void)
{
	struct bip_open_params p = { .node = 2, .nnodes = 2, .job_key = 1,
				     .secret = 5 };
	bip_ep_t *ep = NULL;
	uint64_t s1 = 0, s2 = 0;

	EXPECT(bip_open(NULL, &ep), -BIP_EINVAL);
	EXPECT(bip_open(&p, &ep), -BIP_ENODE);
	p.node = -1;
	EXPECT(bip_open(&p, &ep), -BIP_ENODE);
	p = (struct bip_open_params){ .node = 0, .nnodes = 0 };
	EXPECT(bip_open(&p, &ep), -BIP_ENODE);
	/* No secret, no endpoint: the names of its resources would be
	 * predictable. Secrets are drawn at random, never 0. */
	p = (struct bip_open_params){ .node = 0, .nnodes = 1, .job_key = 99 };
	EXPECT(bip_open(&p, &ep), -BIP_EINVAL);
	EXPECT(bip_secret_new(NULL), -BIP_EINVAL);
	EXPECT(bip_secret_new(&s1), 0);
	EXPECT(bip_secret_new(&s2), 0);
	if (!s1 || s1 == s2) {
		fprintf(stderr, "secrets %llx and %llx\n",
			(unsigned long long)s1, (unsigned long long)s2);
		failures++;
	}
	/* More nodes on this host than in the job, or fewer than none. */
	p = (struct bip_open_params){ .node = 0, .nnodes = 2, .job_key = 99,
				      .secret = s1, .local_nodes = 3 };
	EXPECT(bip_open(&p, &ep), -BIP_EINVAL);
	p.local_nodes = -1;
	EXPECT(bip_open(&p, &ep), -BIP_EINVAL);
	/* A launcher removes what a job left: our own segment is linked
	 * until the peer attaches, as if we had crashed before it did. */
	EXPECT(bip_job_cleanup(0, 99, 2), -BIP_EINVAL);
	EXPECT(bip_job_cleanup(s1, 99, 0), -BIP_EINVAL);
	p = (struct bip_open_params){ .node = 0, .nnodes = 2, .job_key = 99,
				      .secret = s1 };
	EXPECT(bip_open(&p, &ep), 0);
	EXPECT(bip_job_cleanup(s2, 99, 2), 0);
	EXPECT(bip_job_cleanup(s1, 99, 2), 1);
	EXPECT(bip_job_cleanup(s1, 99, 2), 0);
	EXPECT(bip_close(ep), 0);
	/* A malformed knob is refused with its name in the log. */
	setenv("BIP_SMALL_QUEUE", "lots", 1);
	p = (struct bip_open_params){ .node = 0, .nnodes = 1, .job_key = 99,
				      .secret = s1 };
	EXPECT(bip_open(&p, &ep), -BIP_EINVAL);
	setenv("BIP_SMALL_QUEUE", "1", 1);
	EXPECT(bip_open(&p, &ep), -BIP_EINVAL);
	unsetenv("BIP_SMALL_QUEUE");
	EXPECT(bip_close(NULL), -BIP_EINVAL);
}

/* Cards come from other processes: every malformed one is refused with
 * -BIP_ECARD, none is half-read, and an oversized field never overruns a
 * buffer. The variants are made from this endpoint's own card, so they
 * follow its format: the settings and host before the wire part, then the
 * wire ("shm,PID,NODE,KEY"; %s: the pid). A well-formed card of a wire
 * this build lacks reaches nothing: -BIP_EWIRE. */
static void test_cards(void)
{
	static const char *const bad_wire[] = {
		"", ";", "shm", "shm,", "shm,%s", "shm,%s,1",
		"shm,%s,1,0123456789abcdef,extra", "-1,shm,%s,1,1",
		"shm,-1,1,0123456789abcdef", "shm,%s,-1,0123456789abcdef",
		"shm,%s,99999999999999999999,0123456789abcdef",
		"shm,%s,1,0123456789abcdef0", "shm,%s,1,0x123",
		"shm,%s,1,ABCDEF", "shm,,1,0123456789abcdef",
		"shm,%s ,1,0123456789abcdef", "shm,%s,1,0123456789abcdef;",
		"tcp,1;shm,%s,1,0123456789abcdef;", ";shm,%s,1,1",
		"Shm,%s,1,0123456789abcdef",
	};
	/* %s: this card's version; the numbers stand where its settings do. */
	static const char *const bad_settings[] = {
		"", "nonsense;", "%s;", "%s;-4096;", "%s;4096x;64;64;",
		"%s;999999999999999999999999;64;64;", "%s;32768;64;",
		"%s;32768;64;64;64;", "X%s;32768;64;64;",
	};
	char version[16];
	struct bip_open_params p = { .node = 0, .nnodes = 2, .job_key = 7 };
	char own[BIP_CARD_MAX], pid[80], pre[BIP_CARD_MAX];
	char card[BIP_CARD_MAX + 600], wire[BIP_CARD_MAX];
	const char *w;
	bip_ep_t *ep;
	int rc;

	EXPECT(bip_secret_new(&p.secret), 0);
	EXPECT(bip_open(&p, &ep), 0);
	EXPECT(bip_card(ep, own, sizeof(own)), 0);
	w = strstr(own, "shm,");
	if (!w || sscanf(w, "shm,%79[^,]", pid) != 1) {
		fprintf(stderr, "own card \"%s\" has no shm part\n", own);
		failures++;
		bip_close(ep);
		return;
	}
	snprintf(pre, sizeof(pre), "%.*s", (int)(w - own), own);
	snprintf(version, sizeof(version), "%.*s", (int)strcspn(own, ";"), own);
	for (size_t i = 0; i < sizeof(bad_wire) / sizeof(bad_wire[0]); i++) {
		snprintf(wire, sizeof(wire), bad_wire[i], pid);
		snprintf(card, sizeof(card), "%s%s", pre, wire);
		rc = bip_connect(ep, 1, card);
		if (rc != -BIP_ECARD) {
			fprintf(stderr, "card \"%s\": %s, want %s\n", card,
				bip_strerror(rc), bip_strerror(-BIP_ECARD));
			failures++;
		}
	}
	for (size_t i = 0; i < sizeof(bad_settings) / sizeof(bad_settings[0]);
	     i++) {
		char settings[64];

		snprintf(settings, sizeof(settings), bad_settings[i], version);
		snprintf(card, sizeof(card), "%s%s", settings, w);
		EXPECT(bip_connect(ep, 1, card), -BIP_ECARD);
	}
	/* A field far longer than any card's, as a hostile peer could
	 * publish through PMI. */
	rc = snprintf(card, sizeof(card), "%sshm,", pre);
	memset(card + rc, '1', 500);
	snprintf(card + rc + 500, sizeof(card) - (size_t)rc - 500,
		 ",1,0000000000000007");
	EXPECT(bip_connect(ep, 1, card), -BIP_ECARD);
	snprintf(card, sizeof(card), "%stcp,10.0.0.1,99", pre);
	EXPECT(bip_connect(ep, 1, card), -BIP_EWIRE);
	EXPECT(bip_close(ep), 0);
}

/* Ready mode: refused when no receive is posted, truncation on both
 * sides, and the data when the receiver said "go". */
static void test_ready(bip_ep_t *ep)
{
	static char data[100], in[100], small[16];
	struct bip_status st;
	bip_req_t r4, r5;

	for (int i = 0; i < (int)sizeof(data); i++)
		data[i] = (char)(i * 3);
	if (me == 1) {
		EXPECT(bip_rsend(ep, 0, 4, data, sizeof(data)), -BIP_ENOTREADY);
		EXPECT(bip_send(ep, 0, "refused", 7), 0);
		EXPECT(bip_recv(ep, in, sizeof(in), &st), 2);
		EXPECT(bip_rsend(ep, 0, 4, data, sizeof(data)), 0);
		EXPECT(bip_rsend(ep, 0, 5, data, sizeof(data)), -BIP_ETRUNC);
		return;
	}
	EXPECT(bip_recv(ep, in, sizeof(in), &st), 7);
	EXPECT(bip_ilrecv(ep, 4, in, sizeof(in), &r4), 0);
	EXPECT(bip_ilrecv(ep, 5, small, sizeof(small), &r5), 0);
	EXPECT(bip_send(ep, 1, "go", 2), 0);
	EXPECT(bip_wait(ep, &r4, &st), 0);
	EXPECT((int)st.len, (int)sizeof(data));
	EXPECT(memcmp(in, data, sizeof(data)), 0);
	EXPECT(bip_wait(ep, &r5, &st), -BIP_ETRUNC);
}

/* The wire node is reached by, and why, as bip_peer_wire says. */
static void expect_wire(bip_ep_t *ep, int node, const char *want,
			const char *want_why)
{
	const char *wire = NULL, *why = NULL;

	EXPECT(bip_peer_wire(ep, node, &wire, &why), 0);
	if (!wire || strcmp(wire, want) || !why || strcmp(why, want_why)) {
		fprintf(stderr, "node %d's wire: %s (%s), want %s (%s)\n",
			node, wire ? wire : "none", why ? why : "-", want,
			want_why);
		failures++;
	}
}

/* Pieces read together (bip_readv): each gets its own code, and a bad
 * address fails its piece alone (the kernel's one call stops there, the
 * pieces behind it are read one by one); bad arguments fail every piece.
 * addr: the peer's 5000 bytes (test_read). */
static void test_readv(bip_ep_t *ep, int peer, uint64_t addr)
{
	static char a[3000], c[3000], d[64];
	struct bip_rvec v[BIP_READV_MAX + 1] = {
		{ a, addr, sizeof(a), 1 },
		{ d, 0x4141414141414141ull, sizeof(d), 1 },
		{ c, addr + 1000, sizeof(c), 1 },
		{ NULL, addr, 0, 1 },
	};
	int bad = 0;

	EXPECT(bip_readv(ep, peer, v, 4), -BIP_ESYS);
	EXPECT(v[0].rc, 0);
	EXPECT(v[1].rc, -BIP_ESYS);
	EXPECT(v[2].rc, 0);
	EXPECT(v[3].rc, 0);
	for (int i = 0; i < (int)sizeof(a); i++)
		bad += a[i] != (char)(i * 7 + peer) ||
		       c[i] != (char)((i + 1000) * 7 + peer);
	EXPECT(bad, 0);
	EXPECT(bip_readv(ep, peer, v, 0), 0);
	EXPECT(bip_readv(ep, peer, NULL, 1), -BIP_EINVAL);
	EXPECT(bip_readv(ep, 7, v, 1), -BIP_ENODE);
	EXPECT(v[0].rc, -BIP_ENODE);
	for (int i = 0; i <= BIP_READV_MAX; i++)
		v[i] = (struct bip_rvec){ a + 8 * i, addr + 8 * i, 8, 1 };
	EXPECT(bip_readv(ep, peer, v, BIP_READV_MAX + 1), -BIP_EINVAL);
	EXPECT(v[BIP_READV_MAX].rc, -BIP_EINVAL);
	memset(a, 0, sizeof(a));
	EXPECT(bip_readv(ep, peer, v, BIP_READV_MAX), 0);
	for (int i = 0; i < BIP_READV_MAX; i++)
		bad += v[i].rc != 0;
	for (int i = 0; i < 8 * BIP_READV_MAX; i++)
		bad += a[i] != (char)(i * 7 + peer);
	EXPECT(bad, 0);
	v[1].dst = NULL;
	EXPECT(bip_readv(ep, peer, v, 2), -BIP_EINVAL);
	EXPECT(v[0].rc, -BIP_EINVAL);
}

/* Reading a node's memory: what it named is read whole; an address outside
 * its memory fails, and reading from it stops; our own node is read in
 * place; bad arguments are refused. */
static void test_read(bip_ep_t *ep)
{
	static char mine[5000], got[5000];
	struct bip_status st;
	uint64_t addr;
	int peer = 1 - me;

	EXPECT(bip_read(ep, 7, got, 0, 1), -BIP_ENODE);
	EXPECT(bip_read(ep, peer, NULL, 0, 1), -BIP_EINVAL);
	EXPECT(bip_read_min(ep, 7) == SIZE_MAX, 1);
	EXPECT((int)bip_read_min(ep, me), 1);
	for (int i = 0; i < (int)sizeof(mine); i++)
		mine[i] = (char)(i * 7 + me);
	EXPECT(bip_read(ep, me, got, (uintptr_t)mine, sizeof(mine)), 0);
	EXPECT(memcmp(got, mine, sizeof(mine)), 0);
	{
		/* Our own wire reads piece by piece. */
		struct bip_rvec self[2] = {
			{ got, (uintptr_t)mine + 10, 100, 1 },
			{ got + 100, (uintptr_t)mine, 50, 1 },
		};

		EXPECT(bip_readv(ep, me, self, 2), 0);
		EXPECT(self[0].rc | self[1].rc, 0);
		EXPECT(memcmp(got, mine + 10, 100) | memcmp(got + 100, mine, 50),
		       0);
	}
	addr = (uintptr_t)mine;
	EXPECT(bip_send(ep, peer, &addr, sizeof(addr)), 0);
	EXPECT(bip_recv(ep, &addr, sizeof(addr), &st), (int)sizeof(addr));
	if (bip_read_min(ep, peer) == SIZE_MAX) {
		EXPECT(bip_read(ep, peer, got, addr, sizeof(got)), -BIP_EAGAIN);
	} else {
		EXPECT(bip_read(ep, peer, got, addr, sizeof(got)), 0);
		for (int i = 0; i < (int)sizeof(got); i++)
			if (got[i] != (char)(i * 7 + peer)) {
				EXPECT(i, -1);
				break;
			}
		/* An address outside the peer's memory fails that copy
		 * only: the next one reads again. */
		EXPECT(bip_read(ep, peer, got, 0x4141414141414141ull, 64),
		       -BIP_ESYS);
		EXPECT(bip_write(ep, peer, 0x4141414141414141ull, got, 64),
		       -BIP_ESYS);
		EXPECT(bip_rma_reach(ep, peer), 1);
		memset(got, 0, sizeof(got));
		EXPECT(bip_read(ep, peer, got, addr, sizeof(got)), 0);
		EXPECT(got[sizeof(got) - 1], (char)((sizeof(got) - 1) * 7 + peer));
		test_readv(ep, peer, addr);
	}
	/* The peer's memory stays until both are done. */
	EXPECT(bip_send(ep, peer, "r", 1), 0);
	EXPECT(bip_recv(ep, got, sizeof(got), &st), 1);
}

/* Single copies at the distances where the kernel's copy is slow
 * (bip_copy.h) go through a bounce buffer in pieces of 64 KiB: every byte
 * arrives, read and written, across the pieces' edges, at those distances
 * and at others. */
#define SPAN (3 * 65536 + 1000)
static char theirs[SPAN + 4096], inbox[SPAN + 4096];
static _Alignas(4096) char local[SPAN + 8192];

static char byte_at(int node, size_t i, size_t d)
{
	return (char)(i * 13 + d * 3 + (size_t)node);
}

static void test_distances(bip_ep_t *ep)
{
	static const size_t dist[] = { 0, 1, 16, 63, 64, 4095 };
	struct bip_status st;
	uint64_t addr[2];
	int peer = 1 - me;

	for (size_t i = 0; i < sizeof(theirs); i++)
		theirs[i] = byte_at(me, i, 0);
	addr[0] = (uintptr_t)theirs;
	addr[1] = (uintptr_t)inbox;
	EXPECT(bip_send(ep, peer, addr, sizeof(addr)), 0);
	EXPECT(bip_recv(ep, addr, sizeof(addr), &st), (int)sizeof(addr));
	if (bip_read_min(ep, peer) == SIZE_MAX) {
		printf("node %d: no single copy to node %d here: distances "
		       "not tried\n", me, peer);
		return;
	}
	for (size_t k = 0; k < sizeof(dist) / sizeof(dist[0]); k++) {
		size_t d = dist[k];
		/* local - remote is d modulo a page, for a read; remote -
		 * local for a write. */
		char *rd = local + ((addr[0] + d) & 4095);
		char *wr = local + ((addr[1] - d) & 4095);
		size_t bad = SIZE_MAX;

		EXPECT(bip_read(ep, peer, rd, addr[0], SPAN), 0);
		for (size_t i = 0; i < SPAN && bad == SIZE_MAX; i++)
			if (rd[i] != byte_at(peer, i, 0))
				bad = i;
		EXPECT(bad == SIZE_MAX ? 0 : (int)bad, 0);
		for (size_t i = 0; i < SPAN; i++)
			wr[i] = byte_at(me, i, d);
		EXPECT(bip_write(ep, peer, addr[1], wr, SPAN), 0);
		/* The peer checks what we wrote once we both wrote. */
		EXPECT(bip_send(ep, peer, "w", 1), 0);
		EXPECT(bip_recv(ep, rd, 1, &st), 1);
		for (size_t i = 0; i < SPAN && bad == SIZE_MAX; i++)
			if (inbox[i] != byte_at(peer, i, d))
				bad = i;
		EXPECT(bad == SIZE_MAX ? 0 : (int)bad, 0);
		EXPECT(bip_send(ep, peer, "c", 1), 0);
		EXPECT(bip_recv(ep, rd, 1, &st), 1);
	}
}

int main(int argc, char **argv)
{
	static char big[BIP_SMALL_MAX + 1], buf[256], card[BIP_CARD_MAX];
	struct bip_status st;
	bip_req_t req, req2;
	bip_ep_t *ep;
	int rc, peer;

	test_strerror();
	if (argc > 1 && strcmp(argv[1], "noenv") == 0) {
		EXPECT(bip_init(&ep), -BIP_EBOOT);
		test_open_params();
		test_cards();
		printf("bootstrap and parameter errors: %s\n",
		       failures ? "FAILED" : "ok");
		return failures != 0;
	}
	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	me = bip_node(ep);
	peer = 1 - me;

	EXPECT(bip_send(NULL, peer, buf, 1), -BIP_EINVAL);
	EXPECT(bip_send(ep, peer, NULL, 1), -BIP_EINVAL);
	EXPECT(bip_send(ep, 2, buf, 1), -BIP_ENODE);
	EXPECT(bip_send(ep, -1, buf, 1), -BIP_ENODE);
	EXPECT(bip_send(ep, peer, big, sizeof(big)), -BIP_ETOOLONG);
	{
		struct iovec iov[2] = { { big, BIP_SMALL_MAX }, { big, 1 } };

		EXPECT(bip_sendv_try(ep, peer, iov, 2), -BIP_ETOOLONG);
		EXPECT(bip_sendv_try(ep, peer, iov, -1), -BIP_EINVAL);
		EXPECT(bip_sendv_try(ep, peer, NULL, 1), -BIP_EINVAL);
		iov[1].iov_base = NULL;
		EXPECT(bip_sendv_try(ep, peer, iov, 2), -BIP_EINVAL);
	}
	EXPECT(bip_peek_nopoll(ep, NULL, &st), -BIP_EINVAL);
	EXPECT(bip_test_nopoll(ep, NULL, &rc, &st), -BIP_EINVAL);
	EXPECT(bip_idle(NULL, 0, 1), -BIP_EINVAL);
	EXPECT(bip_idle(ep, 0, 1), 0);
	EXPECT(bip_crowded(NULL), -BIP_EINVAL);
	EXPECT(bip_ilsend(ep, peer, -1, buf, 1, &req), -BIP_ETAG);
	EXPECT(bip_ilsend(ep, peer, 1 << 20, buf, 1, &req), -BIP_ETAG);
	EXPECT(bip_ilsend(ep, peer, 0, buf, 1, NULL), -BIP_EINVAL);
	EXPECT(bip_irsend(ep, peer, -1, buf, 1, &req), -BIP_ETAG);
	EXPECT(bip_irsend(ep, peer, 0, NULL, 1, &req), -BIP_EINVAL);
	EXPECT(bip_irsend_packets(ep, peer, -1, buf, 1, &req), -BIP_ETAG);
	EXPECT(bip_irsend_packets(ep, peer, 0, NULL, 1, &req), -BIP_EINVAL);
	EXPECT(bip_irsend_packets(ep, 99, 0, buf, 1, &req), -BIP_ENODE);
	EXPECT(bip_ilrecv(ep, 99999, buf, 1, &req), -BIP_ETAG);
	EXPECT(bip_ilrecv(ep, 0, NULL, 1, &req), -BIP_EINVAL);
	req = (bip_req_t){ 3, 77 };
	EXPECT(bip_wait(ep, &req, NULL), -BIP_ENOREQ);
	EXPECT(bip_rebase(ep, &req, buf), -BIP_ENOREQ);
	EXPECT(bip_rebase(ep, &req, NULL), -BIP_EINVAL);
	EXPECT(bip_cancel(ep, &req), -BIP_ENOREQ);
	EXPECT(bip_cancel(NULL, &req), -BIP_EINVAL);
	EXPECT(bip_peer_gone(ep, me), 0);
	EXPECT(bip_peer_gone(ep, peer), 0);
	/* bip_run places every node on one host: shm, for that; our own
	 * node goes by the self wire. */
	expect_wire(ep, peer, "shm", "same host");
	expect_wire(ep, me, "self", "this process");
	{
		const char *wire, *why;

		EXPECT(bip_peer_wire(NULL, peer, &wire, &why), -BIP_EINVAL);
	}
	EXPECT(bip_peers_lost(ep), 0);
	req = (bip_req_t){ 0x80000000u | 5, 77 };
	EXPECT(bip_wait(ep, &req, NULL), -BIP_ENOREQ);
	EXPECT(bip_card(ep, card, 4), -BIP_ETOOLONG);
	EXPECT(bip_connect(ep, peer, "bip3;shm,x"), -BIP_ESTATE);
	EXPECT(bip_connect(ep, me, "whatever"), -BIP_ESTATE);
	EXPECT(bip_connect(ep, 7, "whatever"), -BIP_ENODE);

	if (me == 0) {
		/* Busy tag, then truncation reported on both sides. */
		EXPECT(bip_ilrecv(ep, 3, buf, 16, &req), 0);
		EXPECT(bip_ilrecv(ep, 3, buf, 16, &req2), -BIP_EBUSY);
		EXPECT(bip_wait(ep, &req, &st), -BIP_ETRUNC);
		/* A small message larger than the buffer stays queued. */
		while ((rc = bip_recv_try(ep, buf, 2, &st)) == -BIP_EAGAIN)
			bip_idle_wait(ep, 1000);
		EXPECT(rc, -BIP_ETOOLONG);
		EXPECT(bip_recv(ep, buf, sizeof(buf), &st), 10);
		EXPECT(st.node, 1);
		EXPECT(memcmp(buf, "0123456789", 10), 0);
		EXPECT(bip_send(ep, 1, "done", 4), 0);
	} else {
		EXPECT(bip_lsend(ep, 0, 3, big, 100), -BIP_ETRUNC);
		EXPECT(bip_send(ep, 0, "0123456789", 10), 0);
		EXPECT(bip_recv(ep, buf, sizeof(buf), &st), 4);
	}
	test_ready(ep);
	test_read(ep);
	test_distances(ep);
	EXPECT(bip_close(ep), 0);
	printf("node %d: argument errors: %s\n", me,
	       failures ? "FAILED" : "ok");
	return failures != 0;
}
