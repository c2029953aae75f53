/*
 * test_crowded.c - bip_crowded must tell nodes that share cores from nodes
 * that each have one, whatever the launcher bound them to: a node bound to
 * a core of its own (mpiexec -bind-to core) is not crowded although it may
 * use one core only; nodes whose launcher has fewer cores than nodes are.
 * With SLICE, the scheduler's slice of the thread that opened BIP must be
 * that many microseconds while BIP is open ("keep": unchanged), and what it
 * was again after bip_close.
 * Usage: test_crowded EXPECT [SLICE|keep]; EXPECT is 0 or 1; exits 0 when
 * bip_crowded() is EXPECT and the slice as said.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bip.h"

/* The kernel's struct sched_attr, first version. */
struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

/* This thread's slice in ns; 0 when the kernel tells none. */
static uint64_t slice_ns(void)
{
	struct attr a = { 0 };

	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0))
		return 0;
	return a.runtime;
}

int main(int argc, char **argv)
{
	bip_ep_t *ep;
	int rc, want, got, node, bad = 0;
	uint64_t before, during, after, want_ns;

	if (argc < 2 || argc > 3 || (argv[1][0] != '0' && argv[1][0] != '1')) {
		fprintf(stderr, "usage: test_crowded 0|1 [SLICE_US|keep]\n");
		return 2;
	}
	want = argv[1][0] - '0';
	before = slice_ns();
	if ((rc = bip_init(&ep))) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	got = bip_crowded(ep);
	node = bip_node(ep);
	during = slice_ns();
	printf("node %d: bip_crowded %d (want %d)\n", node, got, want);
	bip_close(ep);
	after = slice_ns();
	if (argc == 3 && !before) {
		printf("node %d: slice not checked: this kernel tells no "
		       "slice (EEVDF, Linux 6.6+)\n", node);
	} else if (argc == 3) {
		want_ns = strcmp(argv[2], "keep") ? strtoull(argv[2], NULL, 10) *
							    1000
						  : before;
		printf("node %d: slice %llu ns while open (want %llu), %llu before, "
		       "%llu after\n", node, (unsigned long long)during,
		       (unsigned long long)want_ns, (unsigned long long)before,
		       (unsigned long long)after);
		bad = during != want_ns || after != before;
	}
	return got != want || bad;
}
