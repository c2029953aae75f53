/*
 * test_crowded.c - bip_crowded must tell nodes that share cores from nodes
 * that each have one, whatever the launcher bound them to: a node bound to
 * a core of its own (mpiexec -bind-to core) is not crowded although it may
 * use one core only; nodes whose launcher has fewer cores than nodes are.
 * Usage: test_crowded EXPECT (0 or 1); exits 0 when bip_crowded() is that.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bip.h"

int main(int argc, char **argv)
{
	bip_ep_t *ep;
	int rc, want, got;

	if (argc != 2 || (argv[1][0] != '0' && argv[1][0] != '1')) {
		fprintf(stderr, "usage: test_crowded 0|1\n");
		return 2;
	}
	want = argv[1][0] - '0';
	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	got = bip_crowded(ep);
	printf("node %d: bip_crowded %d (want %d)\n", bip_node(ep), got, want);
	bip_close(ep);
	return got != want;
}
