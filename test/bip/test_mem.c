/*
 * test_mem.c - memory shared within a host (bip_mem_*). Node 0 allocates a
 * region and names it to node 1, which maps it whole and in part: each
 * sees the other's stores, with no message carrying the data. Then every
 * key that names nothing is refused (another inode, another descriptor of
 * node 0's, too long, freed), a mapping outlives the region's free, and
 * the region stays node 0's after bip_close.
 * With "nowire" (a job whose shm wire is not open, BIP_WIRE=udp, or that
 * may hold no region, BIP_SHM_MEM_MAX=0): BIP says it cannot share memory
 * here. Exit status 77 (skipped) when
 * the kernel lets no process take another's descriptor (pidfd_getfd).
 * Usage: bip_run -n 2 test_mem [nowire]
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bip.h"
#include "unit.h"

#define LEN 10000 /* not a whole number of pages */
#define PART_OFF 100
#define PART_LEN 500
#define SKIP 77

/* What node 0 tells node 1 of a region. */
struct offer {
	uint64_t key, off;
	uint64_t len;
};

static unsigned char pattern(size_t i, int who)
{
	return (unsigned char)(i * 31 + 7 + who * 101);
}

static void send_to(bip_ep_t *ep, int node, const void *m, size_t len)
{
	int rc = bip_send(ep, node, m, len);

	CHECK(rc == 0, "send: %s", bip_strerror(rc));
}

static void recv_from(bip_ep_t *ep, void *m, size_t len)
{
	int rc = bip_recv(ep, m, len, NULL);

	CHECK(rc == (int)len, "recv: %s", bip_strerror(rc));
}

static int owner(bip_ep_t *ep)
{
	unsigned char *a, *b;
	struct offer o;
	uint64_t key, off;
	char done;
	int rc;

	rc = bip_mem_alloc(ep, LEN, (void **)&a);
	CHECK(rc == 0, "bip_mem_alloc: %s", bip_strerror(rc));
	if (rc)
		return 1;
	CHECK(((uintptr_t)a & 4095) == 0, "not page-aligned: %p", (void *)a);
	for (size_t i = 0; i < LEN; i++) {
		if (a[i])
			CHECK(0, "byte %zu not zeroed", i);
		a[i] = pattern(i, 0);
	}
	rc = bip_mem_key(ep, a + PART_OFF, PART_LEN, &key, &off);
	CHECK(rc == 0 && off == PART_OFF, "bip_mem_key of a part: %s, off %llu",
	      bip_strerror(rc), (unsigned long long)off);
	CHECK(bip_mem_key(ep, a + LEN - 10, 11, &key, &off) == -BIP_EINVAL,
	      "a range past the region named");
	CHECK(bip_mem_key(ep, &rc, sizeof(rc), &key, &off) == -BIP_EINVAL,
	      "the stack named");
	CHECK(bip_mem_free(ep, &rc) == -BIP_EINVAL, "freed the stack");
	CHECK(bip_mem_free(ep, a + 1) == -BIP_EINVAL, "freed inside a region");
	CHECK(bip_mem_map(ep, 0, key, 0, 8, (void **)&b) == -BIP_EAGAIN,
	      "mapped its own memory");

	rc = bip_mem_key(ep, a, LEN, &o.key, &o.off);
	CHECK(rc == 0 && o.off == 0, "bip_mem_key: %s", bip_strerror(rc));
	o.len = LEN;
	send_to(ep, 1, &o, sizeof(o));
	recv_from(ep, &done, 1); /* node 1 wrote its half, or cannot map */
	if (done == 's') {
		bip_close(ep);
		return SKIP;
	}
	for (size_t i = LEN / 2; i < LEN; i++)
		if (a[i] != pattern(i, 1)) {
			CHECK(0, "node 1's store at %zu not seen", i);
			break;
		}

	/* Freed, and its descriptor number likely reused by a new region:
	 * the old key names neither. */
	CHECK(bip_mem_free(ep, a) == 0, "bip_mem_free");
	rc = bip_mem_alloc(ep, LEN, (void **)&b);
	CHECK(rc == 0, "bip_mem_alloc again: %s", bip_strerror(rc));
	memset(b, 0x5a, LEN);
	rc = bip_mem_key(ep, b, LEN, &o.key, &o.off);
	CHECK(rc == 0, "bip_mem_key again: %s", bip_strerror(rc));
	send_to(ep, 1, &o, sizeof(o));
	recv_from(ep, &done, 1);
	bip_close(ep);
	/* The memory stays ours after bip_close. */
	CHECK(b[LEN - 1] == 0x5a, "memory gone at bip_close");
	b[0] = 1;
	return unit_result("test_mem");
}

static int mapper(bip_ep_t *ep)
{
	unsigned char *m, *part, *m2;
	struct offer o, o2;
	int rc;

	recv_from(ep, &o, sizeof(o));
	rc = bip_mem_map(ep, 0, o.key, o.off, o.len, (void **)&m);
	if (rc == -BIP_EAGAIN) {
		printf("SKIP: the kernel lets this process take no descriptor "
		       "of another (pidfd_getfd: Linux 5.6, ptrace permission)"
		       "\n");
		send_to(ep, 0, "s", 1);
		bip_close(ep);
		return SKIP;
	}
	CHECK(rc == 0, "bip_mem_map: %s", bip_strerror(rc));
	if (rc)
		return 1;
	for (size_t i = 0; i < LEN; i++)
		if (m[i] != pattern(i, 0)) {
			CHECK(0, "node 0's byte %zu not seen", i);
			break;
		}
	rc = bip_mem_map(ep, 0, o.key, PART_OFF, PART_LEN, (void **)&part);
	CHECK(rc == 0, "bip_mem_map of a part: %s", bip_strerror(rc));
	CHECK(rc || !memcmp(part, m + PART_OFF, PART_LEN), "the part differs");
	CHECK(rc || bip_mem_unmap(ep, part) == 0, "bip_mem_unmap of the part");

	/* Keys that name nothing of node 0's. */
	CHECK(bip_mem_map(ep, 0, o.key ^ (1u << 20), 0, LEN, (void **)&m2) ==
		      -BIP_EINVAL, "another inode mapped");
	CHECK(bip_mem_map(ep, 0, (o.key & ~0xfffffull) | 1, 0, LEN,
			  (void **)&m2) == -BIP_EINVAL,
	      "node 0's descriptor 1 mapped");
	CHECK(bip_mem_map(ep, 0, o.key, 0, 1 << 20, (void **)&m2) ==
		      -BIP_EINVAL, "mapped past the region's end");
	CHECK(bip_mem_map(ep, 0, o.key, UINT64_MAX - 4, 8, (void **)&m2) ==
		      -BIP_EINVAL, "an offset that wraps");
	CHECK(bip_mem_map(ep, 0, o.key, 0, 0, (void **)&m2) == -BIP_EINVAL,
	      "mapped nothing");
	CHECK(bip_mem_map(ep, 2, o.key, 0, 8, (void **)&m2) == -BIP_ENODE,
	      "mapped from a node not in the job");
	CHECK(bip_mem_unmap(ep, m + 1) == -BIP_EINVAL, "unmapped inside");

	for (size_t i = LEN / 2; i < LEN; i++)
		m[i] = pattern(i, 1);
	send_to(ep, 0, "w", 1);

	recv_from(ep, &o2, sizeof(o2)); /* the first region is freed */
	CHECK(m[0] == pattern(0, 0), "a mapping lost at the region's free");
	CHECK(bip_mem_map(ep, 0, o.key, 0, LEN, (void **)&m2) == -BIP_EINVAL,
	      "a freed region mapped");
	rc = bip_mem_map(ep, 0, o2.key, 0, LEN, (void **)&m2);
	CHECK(rc == 0 && m2[LEN - 1] == 0x5a, "the new region: %s",
	      bip_strerror(rc));
	CHECK(bip_mem_unmap(ep, m) == 0, "bip_mem_unmap");
	send_to(ep, 0, "d", 1);
	bip_close(ep); /* unmaps the new region */
	return unit_result("test_mem");
}

/* A job without the shm wire, or allowed no region: nothing is shared. */
static int nowire(bip_ep_t *ep)
{
	int peer = 1 - bip_node(ep);
	const char *wire = "";
	uint64_t key, off;
	void *a;
	char done;

	CHECK(bip_mem_alloc(ep, LEN, &a) == -BIP_EAGAIN, "allocated");
	CHECK(bip_mem_key(ep, &key, 8, &key, &off) == -BIP_EINVAL, "named");
	CHECK(bip_peer_wire(ep, peer, &wire, NULL) == 0, "no wire to the peer");
	if (strcmp(wire, "shm"))
		CHECK(bip_mem_map(ep, peer, 1, 0, 8, &a) == -BIP_EAGAIN,
		      "mapped over %s", wire);
	/* Neither closes before the other asked. */
	send_to(ep, peer, "n", 1);
	recv_from(ep, &done, 1);
	bip_close(ep);
	return unit_result("test_mem nowire");
}

int main(int argc, char **argv)
{
	bip_ep_t *ep;
	int rc = bip_init(&ep);

	if (rc) {
		fprintf(stderr, "bip_init: %s\n", bip_strerror(rc));
		return 1;
	}
	if (bip_nnodes(ep) != 2) {
		fprintf(stderr, "test_mem: run on 2 nodes\n");
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "nowire"))
		return nowire(ep);
	return bip_node(ep) == 0 ? owner(ep) : mapper(ep);
}
