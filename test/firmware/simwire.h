/*
 * simwire.h - a simulated wire for firmware tests: several NICs in one
 * process, with loss, duplication, reordering and corruption drawn from a
 * seeded generator, so every failing run can be replayed.
 */
#ifndef BIP_TEST_SIMWIRE_H
#define BIP_TEST_SIMWIRE_H

#include "firmware.h"

struct simwire_faults {
	unsigned loss_pct, dup_pct, reorder_pct, corrupt_pct, foreign_pct;
	unsigned capacity; /* packets queued per destination before EAGAIN */
	size_t chunk;      /* bytes per packet, as a wire's MTU sets it (0:
			    * the packet size): wider small messages go in
			    * pieces */
	size_t plain_max;  /* the class's plain_max (0: none): payloads up to
			    * it are copied in by plain stores */
	bool unreadable;   /* single-copy reads fail, as a peer's memory
			    * the kernel will not let us read */
};

struct simwire_net;

struct simwire_net *simwire_new(int nnodes, uint64_t seed,
				const struct simwire_faults *faults);
/* A hub and nnodes - 1 leaves: node 0 (nnodes nodes) talks to every
 * other; the NIC of node k is node 1 of a pair (nnodes 2) with the hub,
 * so that it costs what a two-node NIC costs. */
struct simwire_net *simwire_new_fan(int nnodes, uint64_t seed,
				    const struct simwire_faults *faults);
void simwire_free(struct simwire_net *net);
/* A NIC for node on the simulated wire, every peer on it. Long messages
 * of at least dma_min bytes go by (simulated) DMA, written by the sender
 * or read by the receiver; SIZE_MAX: never. */
int simwire_nic(struct simwire_net *net, int node,
		const struct bipfw_config *cfg, size_t dma_min,
		struct bipfw **fw_p);
/* Open a second wire for node's NIC on another net (no DMA): its index. */
int simwire_attach(struct simwire_net *net, int node, struct bipfw *fw,
		   size_t packet_size);
/* Make a node look dead to its peers. */
void simwire_kill(struct simwire_net *net, int node);
/* Cut a node off: alive as far as its process goes (the wire does not
 * report it gone), but no packet or ping answer reaches it or leaves it,
 * as when its host hangs or its cable is pulled. */
void simwire_cut(struct simwire_net *net, int node);

extern const struct bipfw_wire_class simwire_class; /* lossy, with DMA */

/* Put a packet of our own making on the wire toward node dst (tests of
 * malformed input), its checksums made as a sender makes them. */
void simwire_inject(struct simwire_net *net, int dst,
		    const struct bip_pkt_hdr *hdr, const void *payload,
		    size_t len);

/* Receive buffers node exposes to its peers' DMA now (a CTS names each by
 * its key; none is left once every receive is reaped). */
unsigned simwire_exposed(struct simwire_net *net, int node);
/* DMA writes that named an exposure; *bad: those whose key named none
 * (stale, foreign, or another buffer). */
uint64_t simwire_keyed_writes(struct simwire_net *net, uint64_t *bad);

/* Packets of a type put on the wire so far (before any fault). */
uint64_t simwire_sent(struct simwire_net *net, unsigned type);

/* The generator the wire uses, for tests to draw from too. */
uint64_t simwire_rand(struct simwire_net *net);

#endif
