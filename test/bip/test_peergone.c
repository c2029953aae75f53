/*
 * test_peergone.c - a peer that disappears must turn waits into errors, not
 * hangs, and must leave nothing in /dev/shm.
 *   die-after-init:  node 1 exits without closing after bip_init; node 0's
 *                    pending long send, blocking receive and new sends all
 *                    return -BIP_EPEERGONE; a receive it only tests stays
 *                    posted, and its own long send to itself fills it.
 *   kill-after-init: node 1 is killed by SIGKILL (bip_run then ends the job).
 *   kill-before-init: node 1 is killed before it attaches anything.
 *   check-unlinked:  after bip_init no segment of the job is still named.
 *   check-sparse:    (under bip_run -H) the segments this process maps hold
 *                    pages for the rings of its host's nodes only: under a
 *                    third of their size when a host has under a third of
 *                    the nodes.
 *   check-lazy:      (one host, 4 nodes) rings take pages as messages first
 *                    reach them: after start-up only the segments'
 *                    headers, and nodes 0 and 1 trading messages add a
 *                    page or two to each of their two rings.
 *   check-reuse:     (2 nodes) a ring grows only when its consumer lags
 *                    far behind: 20,000 8-byte round trips (several laps
 *                    of a 1 MiB ring) keep both rings at a page or two;
 *                    a stream of 40,000 8-byte messages in windows of 64,
 *                    each answered (the consumer up to 64 records behind,
 *                    5 laps), keeps node 0's at most 16 pages more; then,
 *                    three times, node 0 sends 100 messages of 1000 bytes
 *                    while node 1 sleeps: each burst fills the ring, which
 *                    then grows (data checked).
 *   shm-full:        (2 nodes, a /dev/shm too small for a ring's first
 *                    page) a send to the peer fails with BIP_EPEERGONE,
 *                    no hang, no SIGBUS.
 *   close-timeout:   node 1 stops polling; node 0's bip_close, with sends
 *                    that node 1 never acknowledged, must say so (run with
 *                    a short BIP_CLOSE_TIMEOUT_MS).
 *   drain-after-death: node 1 sends DEAD_MSGS small messages and exits
 *                    without closing; node 0 sleeps past a liveness check
 *                    (run with a short BIP_LIVENESS_MS), then bip_drain
 *                    must give it every one of them, in order, before the
 *                    peer counts as gone (the drain's own turns, which
 *                    leave the ring to it, must not judge node 1 while its
 *                    messages are still there).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"

static int fail(const char *what, int rc)
{
	fprintf(stderr, "%s: %s\n", what, bip_strerror(rc));
	return 1;
}

/* BIP segments this process maps whose name is still in /dev/shm (the
 * kernel marks a mapping "(deleted)" once its name is unlinked). */
static int named_segments(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "/dev/shm/bip-") && !strstr(line, "(deleted)");
	if (f)
		fclose(f);
	return n;
}

/* Pages of the BIP segments this process maps, and how many exist (are in
 * the page cache: tmpfs allocated them). Returns the number of segments. */
static int segment_pages(size_t *total, size_t *present)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	*total = *present = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		unsigned char *vec;

		if (!strstr(line, "/dev/shm/bip-") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		vec = malloc((hi - lo) / page);
		if (vec && mincore((void *)lo, hi - lo, vec) == 0)
			for (size_t i = 0; i < (hi - lo) / page; i++)
				*present += vec[i] & 1;
		*total += (hi - lo) / page;
		free(vec);
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* Start-up reserves each segment's header page and nothing of a ring:
 * rings are neither reserved nor read before their sender's first
 * message. Four messages of 1000 bytes each way between nodes 0 and 1
 * reserve one or two pages of each of their two rings, not 64 KiB. Every
 * node maps every segment, and nodes 0 and 1 may start before the others
 * look: what holds at any time is the headers and at most those pages. */
static int check_lazy(bip_ep_t *ep)
{
	int node = bip_node(ep), rc = 0, segs;
	size_t total, idle, used;
	char msg[1000] = "ping";

	segs = segment_pages(&total, &idle);
	for (int i = 0; node < 2 && i < 8 && rc >= 0; i++)
		rc = (i + node) % 2 ? bip_recv(ep, msg, sizeof(msg), NULL)
				    : bip_send(ep, node ^ 1, msg, sizeof(msg));
	segment_pages(&total, &used);
	bip_close(ep);
	if (rc < 0)
		return fail("ping-pong", rc);
	printf("node %d: %d segments of %zu pages, %zu present after "
	       "start-up, %zu after\n", node, segs, total, idle, used);
	return !total || idle > (size_t)segs + 4 || used > (size_t)segs + 4 ||
	       (node < 2 && used < (size_t)segs + 2);
}

static int check_reuse(bip_ep_t *ep)
{
	int node = bip_node(ep), rc = 0, segs, bad = 0;
	size_t total, pingpong, window, burst;
	char msg[1000];
	struct timespec lag = { 0, 50000000 };

	for (int i = 0; i < 40000 && rc >= 0; i++)
		rc = (i + node) % 2 ? bip_recv(ep, msg, 8, NULL)
				    : bip_send(ep, node ^ 1, msg, 8);
	segs = segment_pages(&total, &pingpong);
	for (int i = 0; i < 40000 && rc >= 0; i++) {
		rc = node ? bip_recv(ep, msg, 8, NULL)
			  : bip_send(ep, 1, msg, 8);
		if (rc >= 0 && i % 64 == 63)
			rc = node ? bip_send(ep, 0, msg, 1)
				  : bip_recv(ep, msg, 1, NULL);
	}
	segment_pages(&total, &window);
	for (int i = 0; i < 300 && rc >= 0; i++) {
		if (node == 1 && i % 100 == 0)
			nanosleep(&lag, NULL);
		memset(msg, i, sizeof(msg));
		rc = node ? bip_recv(ep, msg, sizeof(msg), NULL)
			  : bip_send(ep, 1, msg, sizeof(msg));
		bad += node && (msg[0] != (char)i || msg[999] != (char)i);
	}
	segment_pages(&total, &burst);
	bip_close(ep);
	if (rc < 0)
		return fail("ping-pong and burst", rc);
	printf("node %d: %d segments, %zu pages present after the ping-pong, "
	       "%zu after the windows, %zu after the bursts, %d bad "
	       "messages\n",
	       node, segs, pingpong, window, burst, bad);
	return bad || pingpong > (size_t)segs + 4 ||
	       (node == 0 && (window > pingpong + 16 || burst < window + 3));
}

#define DEAD_MSGS 40

static int got_next(void *arg, const void *data, size_t len, int node)
{
	int *next = arg, v;

	if (node != 1 || len != sizeof(v))
		return 1;
	memcpy(&v, data, sizeof(v));
	if (v != *next)
		return 1;
	++*next;
	return 0;
}

static int drain_after_death(bip_ep_t *ep)
{
	int next = 0, rc;

	if (bip_node(ep) == 1) {
		for (int i = 0; i < DEAD_MSGS; i++)
			if ((rc = bip_send(ep, 0, &i, sizeof(i))))
				return fail("send", rc);
		_exit(0); /* no bip_close: looks like a crash */
	}
	sleep(1);
	while (next < DEAD_MSGS) {
		rc = bip_drain(ep, 1, got_next, &next);
		if (rc < 0 || (rc == 0 && bip_peer_gone(ep, 1) == 1)) {
			fprintf(stderr, "drain after death: %d of %d messages, "
					"then %d\n", next, DEAD_MSGS, rc);
			return 1;
		}
	}
	while ((rc = bip_recv_try(ep, &next, sizeof(next), NULL)) ==
	       -BIP_EAGAIN)
		;
	bip_close(ep);
	if (rc != -BIP_EPEERGONE)
		return fail("a receive after the last message", rc);
	printf("drain after death: all %d messages, then BIP_EPEERGONE\n",
	       DEAD_MSGS);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "die-after-init";
	static char buf[100000];
	bip_ep_t *ep;
	bip_req_t req;
	struct bip_status st;
	int rc, done;

	if (strcmp(mode, "kill-before-init") == 0 &&
	    atoi(getenv("PMI_RANK") ? getenv("PMI_RANK") : "0") == 1)
		raise(SIGKILL);
	if ((rc = bip_init(&ep)))
		return fail("bip_init", rc);
	if (strcmp(mode, "check-lazy") == 0)
		return check_lazy(ep);
	if (strcmp(mode, "check-reuse") == 0)
		return check_reuse(ep);
	if (strcmp(mode, "drain-after-death") == 0)
		return drain_after_death(ep);
	if (strcmp(mode, "shm-full") == 0) {
		rc = bip_send(ep, bip_node(ep) ^ 1, buf, 10);
		if (!rc)
			rc = bip_recv(ep, buf, sizeof(buf), NULL);
		bip_close(ep);
		if (rc != -BIP_EPEERGONE)
			return fail("a send with no room for its ring", rc);
		printf("no room for the ring: BIP_EPEERGONE\n");
		return 0;
	}
	if (strcmp(mode, "check-sparse") == 0) {
		size_t total, present;
		int node = bip_node(ep);

		segment_pages(&total, &present);
		bip_close(ep);
		printf("node %d: segments of %zu pages, %zu of them present\n",
		       node, total, present);
		return !total || !present || present * 3 >= total;
	}
	if (strcmp(mode, "check-unlinked") == 0) {
		int n = named_segments();

		bip_close(ep);
		if (n) {
			fprintf(stderr, "%d segment(s) still named after init\n",
				n);
			return 1;
		}
		return 0;
	}
	if (strcmp(mode, "close-timeout") == 0) {
		if (bip_node(ep) == 1) {
			sleep(3); /* no progress: nothing is acknowledged */
			bip_close(ep);
			return 0;
		}
		if ((rc = bip_send(ep, 1, buf, 10)))
			return fail("send", rc);
		rc = bip_close(ep);
		if (rc != -BIP_ETIMEDOUT)
			return fail("bip_close with unacknowledged sends", rc);
		printf("bip_close reported the unacknowledged send\n");
		return 0;
	}
	if (bip_node(ep) == 1) {
		if (strcmp(mode, "die-after-init") == 0)
			_exit(0); /* no bip_close: looks like a crash */
		raise(SIGKILL);
	}
	if (strcmp(mode, "die-after-init") != 0) {
		pause(); /* bip_run ends us */
		return 0;
	}
	/* Node 1 never posts this receive and then vanishes. */
	rc = bip_ilsend(ep, 1, 0, buf, sizeof(buf), &req);
	if (rc)
		return fail("ilsend", rc);
	rc = bip_wait(ep, &req, NULL);
	if (rc != -BIP_EPEERGONE)
		return fail("pending long send should fail", rc);
	rc = bip_recv(ep, buf, sizeof(buf), NULL);
	if (rc != -BIP_EPEERGONE)
		return fail("blocking receive should fail", rc);
	rc = bip_send(ep, 1, buf, 10);
	if (rc != -BIP_EPEERGONE)
		return fail("send to a gone peer should fail", rc);
	rc = bip_lrecv(ep, 1, buf, 10, NULL);
	if (rc != -BIP_EPEERGONE)
		return fail("long receive with no peer left should fail", rc);
	if (bip_peers_lost(ep) != 1 || bip_peer_gone(ep, 1) != 1) {
		fprintf(stderr, "peers lost %d, node 1 gone %d\n",
			bip_peers_lost(ep), bip_peer_gone(ep, 1));
		return 1;
	}
	/* Alone, it may still send to itself: a tested receive stays posted
	 * for that (a wait gives up only with none of those due, above). */
	if ((rc = bip_ilrecv(ep, 3, buf, 10, &req)))
		return fail("post a long receive", rc);
	if ((rc = bip_test(ep, &req, &done, NULL)) || done)
		return fail("a tested receive given up, though we may still "
			    "send to ourselves", rc);
	if ((rc = bip_lsend(ep, 0, 3, "to itself", 10)))
		return fail("long send to itself", rc);
	if ((rc = bip_wait(ep, &req, &st)))
		return fail("long receive from itself", rc);
	if (st.node != 0 || st.len != 10 || memcmp(buf, "to itself", 10)) {
		fprintf(stderr, "from itself: node %d, %zu bytes \"%.10s\"\n",
			st.node, st.len, buf);
		return 1;
	}
	/* A receive nothing can match any more is withdrawn. */
	if ((rc = bip_ilrecv(ep, 2, buf, 10, &req)) || (rc = bip_cancel(ep, &req)))
		return fail("cancel a long receive", rc);
	rc = bip_cancel(ep, &req);
	if (rc != -BIP_ENOREQ)
		return fail("a cancelled receive cancelled again", rc);
	bip_close(ep);
	printf("peer gone: every wait returned BIP_EPEERGONE\n");
	return 0;
}
