/*
 * hostile_coll_peer.c - preloaded (LD_PRELOAD) into one rank of an MPI job,
 * it lets that rank forge its arrivals in the memory a communicator's
 * ranks share for their collectives (bip_coll.h): it remembers the last
 * such memory the rank mapped (bip_mem_map), and hostile_coll_forge()
 * writes the rank's arrival at its next collective there, with a word of
 * its choosing where the data's offset (or, for a read in place, its
 * address) goes. The others must fail that collective with an error,
 * never read outside the memory or dereference the word.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include "bip.h"
#include "bip_coll.h"

typedef int (*map_fn)(bip_ep_t *, int, uint64_t, uint64_t, size_t, void **);

static char *mapped;
static size_t mapped_len;

int bip_mem_map(bip_ep_t *ep, int node, uint64_t key, uint64_t off,
		size_t len, void **addr_p)
{
	static map_fn real;
	int rc;

	if (!real)
		real = (map_fn)dlsym(RTLD_NEXT, "bip_mem_map");
	rc = real(ep, node, key, off, len, addr_p);
	if (rc == 0) {
		mapped = *addr_p;
		mapped_len = len;
	}
	return rc;
}

/* rank's arrival at the collective after its last one, in the memory
 * mapped last, with word where its data's offset goes. 0, or -1 when
 * nothing is mapped or rank's slots lie outside it. */
int hostile_coll_forge(int rank, uint64_t word);

int hostile_coll_forge(int rank, uint64_t word)
{
	size_t first = (size_t)rank * MPIDI_BIP_COLL_SLOTS;
	uint64_t s = 0, v;
	char *slot;

	if (!mapped || rank < 0 ||
	    (first + MPIDI_BIP_COLL_SLOTS) * MPIDI_BIP_COLL_SLOT > mapped_len)
		return -1;
	for (size_t i = 0; i < MPIDI_BIP_COLL_SLOTS; i++) {
		v = __atomic_load_n((uint64_t *)(mapped + (first + i) *
							  MPIDI_BIP_COLL_SLOT),
				    __ATOMIC_RELAXED) &
		    ~MPIDI_BIP_COLL_FAILED;
		if (v > s)
			s = v;
	}
	s++;
	slot = mapped + (first + s % MPIDI_BIP_COLL_SLOTS) * MPIDI_BIP_COLL_SLOT;
	__atomic_store_n((uint64_t *)(slot + MPIDI_BIP_COLL_SLOT_HDR), word,
			 __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)slot, s, __ATOMIC_RELEASE);
	fprintf(stderr, "hostile peer: rank %d arrived at collective %llu "
			"with word %#llx\n",
		rank, (unsigned long long)s, (unsigned long long)word);
	return 0;
}
