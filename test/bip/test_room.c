/*
 * test_room.c - blocking sends that find no free send slot. One node sends
 * to itself, through the self wire's 16 packet slots and 2 send slots
 * (BIP_SEND_SLOTS=2), more messages than both hold, receiving none until
 * all are sent (its small-message queue holds them): each send that finds
 * no slot must get one as its own earlier messages are taken and acked,
 * and never wait for a packet that is not coming. Then it receives every
 * message, in order, every byte checked.
 * Usage: bip_run -n 1 test_room [messages]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"

#define LEN 4000 /* wider than any inline payload */

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40, rc;
	unsigned char m[LEN], got[LEN];
	bip_ep_t *ep;

	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		memset(m, i, LEN);
		if ((rc = bip_send(ep, bip_node(ep), m, LEN))) {
			fprintf(stderr, "send %d: %s\n", i, bip_strerror(rc));
			return 1;
		}
	}
	for (int i = 0; i < n; i++) {
		memset(m, i, LEN);
		rc = bip_recv(ep, got, LEN, NULL);
		if (rc != LEN || memcmp(got, m, LEN)) {
			fprintf(stderr, "message %d: %d bytes, wrong\n", i, rc);
			return 1;
		}
	}
	printf("%d messages to itself through 2 send slots\n", n);
	bip_close(ep);
	return 0;
}
