/*
 * test_hostile.c - hostile or buggy neighbours: a peer that scribbles over
 * shared memory must not crash or derail the others.
 *   rewrite-headers: after bip_init, node 1 overwrites the header of every
 *                    BIP segment it has mapped (its own, and node 0's, which
 *                    it maps to send) with zeros and then with all-ones;
 *                    then both exchange small and long messages, checked
 *                    byte by byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"

#define HEADER_BYTES 64 /* the segment's write-once part */

static int fail(const char *what, int rc)
{
	fprintf(stderr, "%s: %s\n", what, bip_strerror(rc));
	return 1;
}

/* Overwrite the start of every mapping of a BIP segment with byte. */
static int scribble(int byte)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;

		if (!strstr(line, "/dev/shm/bip-") ||
		    sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) != 3 || off)
			continue;
		memset((void *)lo, byte, HEADER_BYTES);
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

static int traffic(bip_ep_t *ep, int peer)
{
	static unsigned char out[3 * 32768 + 5], in[sizeof(out)];
	struct bip_status st;
	int rc;

	for (int k = 0; k < 200; k++) {
		size_t len = (size_t)(k * 37) % BIP_SMALL_MAX;

		for (size_t i = 0; i < len; i++)
			out[i] = (unsigned char)(k + i);
		if ((rc = bip_send(ep, peer, out, len)) < 0)
			return fail("send", rc);
		if ((rc = bip_recv(ep, in, sizeof(in), &st)) < 0)
			return fail("recv", rc);
		if ((size_t)rc != len || memcmp(in, out, len) != 0) {
			fprintf(stderr, "small message %d differs\n", k);
			return 1;
		}
	}
	for (int k = 0; k < 10; k++) {
		bip_req_t r;

		for (size_t i = 0; i < sizeof(out); i++)
			out[i] = (unsigned char)(k * 3 + i);
		if ((rc = bip_ilrecv(ep, 1, in, sizeof(in), &r)) ||
		    (rc = bip_send(ep, peer, "posted", 6)) < 0 ||
		    (rc = bip_recv(ep, in, 16, &st)) < 0 ||
		    (rc = bip_lsend(ep, peer, 1, out, sizeof(out))) ||
		    (rc = bip_wait(ep, &r, &st)))
			return fail("long message", rc);
		if (st.len != sizeof(out) || memcmp(in, out, sizeof(out))) {
			fprintf(stderr, "long message %d differs\n", k);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "rewrite-headers";
	bip_ep_t *ep;
	int rc, me;
	char c;

	if (strcmp(mode, "rewrite-headers") != 0) {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	if ((rc = bip_init(&ep)))
		return fail("bip_init", rc);
	me = bip_node(ep);
	if (me == 1) {
		int n = scribble(0);

		if (n < 2) {
			fprintf(stderr, "found %d BIP segments mapped\n", n);
			return 1;
		}
	}
	/* Node 0 reads its rings only once node 1 scribbled. */
	if ((rc = bip_send(ep, 1 - me, "x", 1)) < 0 ||
	    (rc = bip_recv(ep, &c, 1, NULL)) < 0)
		return fail("handshake", rc);
	if (traffic(ep, 1 - me))
		return 1;
	if (me == 1)
		scribble(0xff);
	if ((rc = bip_send(ep, 1 - me, "y", 1)) < 0 ||
	    (rc = bip_recv(ep, &c, 1, NULL)) < 0)
		return fail("handshake", rc);
	if (traffic(ep, 1 - me))
		return 1;
	if ((rc = bip_close(ep)))
		return fail("bip_close", rc);
	printf("node %d: scribbled segment headers changed nothing\n", me);
	return 0;
}
