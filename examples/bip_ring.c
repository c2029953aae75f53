/* bip_ring.c - a long message passed around the ring of nodes, checked on
 * its return. Run: bip_run -n 4 ./bip_ring [bytes] */
#include <stdio.h>
#include <stdlib.h>

#include "bip.h"

int main(int argc, char **argv)
{
	size_t len = argc > 1 ? strtoull(argv[1], NULL, 0) : 1u << 20;
	bip_ep_t *ep;
	unsigned char *buf;
	int rc = bip_init(&ep), me, n;

	if (rc) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	me = bip_node(ep);
	n = bip_nnodes(ep);
	if (n == 1) {
		printf("ring of 1 node: nothing to pass around\n");
		bip_close(ep);
		return 0;
	}
	buf = malloc(len ? len : 1);
	if (!buf)
		return 1;
	if (me == 0) {
		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)(i * 7);
		rc = bip_lsend(ep, 1, 0, buf, len);
		if (!rc)
			rc = bip_lrecv(ep, 0, buf, len, NULL);
		for (size_t i = 0; !rc && i < len; i++)
			if (buf[i] != (unsigned char)(i * 7)) {
				fprintf(stderr, "byte %zu corrupted\n", i);
				rc = -1;
			}
		if (!rc)
			printf("ring of %d nodes: %zu bytes came back intact\n",
			       n, len);
	} else {
		rc = bip_lrecv(ep, 0, buf, len, NULL);
		if (!rc)
			rc = bip_lsend(ep, (me + 1) % n, 0, buf, len);
	}
	if (rc > 0 || rc < -1)
		fprintf(stderr, "bip: %s\n", bip_strerror(rc));
	free(buf);
	bip_close(ep);
	return rc != 0;
}
