/* bip_hello.c - the smallest BIP program: every node greets node 0.
 * Run: bip_run -n 4 ./bip_hello   (or: mpiexec -n 4 ./bip_hello) */
#include <stdio.h>
#include <string.h>

#include "bip.h"

int main(void)
{
	bip_ep_t *ep;
	char msg[64];
	int rc = bip_init(&ep);

	if (rc) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	if (bip_node(ep) != 0) {
		snprintf(msg, sizeof(msg), "hello from node %d", bip_node(ep));
		rc = bip_send(ep, 0, msg, strlen(msg) + 1);
	} else {
		printf("node 0 of %d\n", bip_nnodes(ep));
		for (int i = 1; i < bip_nnodes(ep) && rc >= 0; i++) {
			struct bip_status st;

			rc = bip_recv(ep, msg, sizeof(msg), &st);
			if (rc >= 0)
				printf("%s (%zu bytes)\n", msg, st.len);
		}
	}
	if (rc < 0)
		fprintf(stderr, "bip: %s\n", bip_strerror(rc));
	bip_close(ep);
	return rc < 0;
}
