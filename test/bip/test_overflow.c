/*
 * test_overflow.c - node 1 sends far more small messages than node 0's
 * queue holds while node 0 is not looking, then node 0 polls without
 * receiving. Node 0 must be told of the overflow (-BIP_EOVERFLOW, once per
 * episode) and still receive every message, in order, intact: those
 * without room wait in the ring (shm), or are refused and resent (lossy
 * wires).
 * Usage: BIP_SMALL_QUEUE=8 bip_run -n 2 test_overflow [messages]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, rc, overflows = 0;
	bip_ep_t *ep;
	struct bip_counters c;

	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	if (bip_node(ep) == 1) {
		for (int i = 0; i < n; i++) {
			char msg[64];
			int len = snprintf(msg, sizeof(msg), "message %d", i);

			if ((rc = bip_send(ep, 0, msg, (size_t)len + 1))) {
				fprintf(stderr, "send %d: %s\n", i,
					bip_strerror(rc));
				return 1;
			}
		}
		rc = bip_recv(ep, &n, sizeof(n), NULL); /* wait for node 0 */
		bip_close(ep);
		return rc < 0;
	}
	usleep(300000); /* let the ring fill while nobody drains it */
	/* Polls without receiving: the turns they run move what waits into
	 * the queue until it is full (a receive would take messages from a
	 * peer of this host straight from the ring instead). */
	for (int k = 0; k < 64; k++)
		overflows += bip_poll(ep) == -BIP_EOVERFLOW;
	for (int i = 0; i < n;) {
		char msg[64], want[64];
		struct bip_status st;

		rc = bip_recv(ep, msg, sizeof(msg), &st);
		if (rc == -BIP_EOVERFLOW) {
			overflows++;
			continue;
		}
		if (rc < 0) {
			fprintf(stderr, "recv %d: %s\n", i, bip_strerror(rc));
			return 1;
		}
		snprintf(want, sizeof(want), "message %d", i);
		if (st.node != 1 || strcmp(msg, want) != 0) {
			fprintf(stderr, "got \"%s\" from %d, want \"%s\"\n",
				msg, st.node, want);
			return 1;
		}
		i++;
	}
	bip_get_counters(ep, &c);
	printf("%d messages in order; overflow reported %d time(s); %llu "
	       "times a packet found no room\n",
	       n, overflows, (unsigned long long)c.small_overflows);
	bip_send(ep, 1, &n, sizeof(n));
	bip_close(ep);
	if (!overflows || !c.small_overflows) {
		fprintf(stderr, "the overflow was not reported\n");
		return 1;
	}
	return 0;
}
