/*
 * wire/self.c - the self wire: a process's packets to itself (an MPI rank
 * sending to its own rank, or reaching its own window), looped back inside
 * the NIC program. With it the layers above speak to their own node as to
 * any other, through the same queue, credits and long protocol, and keep no
 * path of their own for it.
 *
 * The link is a ring of packet slots in this process's private memory, so
 * it is lossless and nobody else writes it; DMA is a memmove. Long data
 * goes by DMA whenever a CTS named the buffer, so packets carry small
 * messages and control only: a slot holds one of at most BIP_SMALL_MAX.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip_errno.h"
#include "bip_field.h"
#include "bip_limits.h"
#include "self.h"

/* The sender stops at a full ring and retries after the next receive,
 * which the same step of the NIC program runs. */
#define SELF_SLOTS 16
#define SELF_CHUNK BIP_SMALL_MAX
#define SLOT_SIZE (sizeof(struct bip_pkt_hdr) + SELF_CHUNK)

struct self_wire {
	int node;
	uint8_t *ring; /* SELF_SLOTS slots, once connected */
	uint64_t head; /* next slot written */
	uint64_t tail; /* next slot read */
};

static uint8_t *slot(const struct self_wire *s, uint64_t pos)
{
	return s->ring + (pos % SELF_SLOTS) * SLOT_SIZE;
}

static int self_open(const struct bipfw_wire_params *p, void **ctx_p)
{
	struct self_wire *s = calloc(1, sizeof(*s));

	if (!s)
		return -BIP_ENOMEM;
	s->node = p->node;
	*ctx_p = s;
	return 0;
}

static void self_close(void *ctx)
{
	struct self_wire *s = ctx;

	free(s->ring);
	free(s);
}

static int self_card(void *ctx, char *buf, size_t len)
{
	int n = snprintf(buf, len, "self,%d", ((struct self_wire *)ctx)->node);

	return n < 0 || (size_t)n >= len ? -BIP_ETOOLONG : 0;
}

/* Only our own node, through our own card; the ring is allocated then, so
 * a process that never names itself pays nothing. */
static int self_connect(void *ctx, int peer, const char *card)
{
	struct self_wire *s = ctx;
	const char *p = card;
	uint64_t node;

	if (!bip_field_lit(&p, ',', "self") ||
	    !bip_field_uint(&p, '\0', 10, 0xffff, &node) || *p)
		return -BIP_ECARD;
	if (peer != s->node || node != (uint64_t)s->node)
		return -BIP_EWIRE;
	if (!s->ring && !(s->ring = malloc(SELF_SLOTS * SLOT_SIZE)))
		return -BIP_ENOMEM;
	return 0;
}

static size_t self_chunk(void *ctx)
{
	(void)ctx;
	return SELF_CHUNK;
}

static struct bip_pkt_hdr *self_reserve(void *ctx, int peer, size_t len)
{
	struct self_wire *s = ctx;

	(void)peer;
	if (!s->ring || s->head - s->tail == SELF_SLOTS || len > SELF_CHUNK)
		return NULL;
	return (struct bip_pkt_hdr *)slot(s, s->head);
}

static void self_commit(void *ctx, int peer, struct bip_pkt_hdr *pkt,
			size_t len)
{
	(void)peer, (void)pkt, (void)len;
	((struct self_wire *)ctx)->head++;
}

static int self_peek(void *ctx, const void **hdr, const void **payload,
		     size_t *avail)
{
	struct self_wire *s = ctx;

	if (s->head == s->tail)
		return -BIP_EAGAIN;
	*hdr = slot(s, s->tail);
	*payload = slot(s, s->tail) + sizeof(struct bip_pkt_hdr);
	*avail = SELF_CHUNK;
	return 0;
}

static void self_release(void *ctx)
{
	((struct self_wire *)ctx)->tail++;
}

/* One source: the packet is simply seen again at the next peek. */
static void self_hold(void *ctx)
{
	(void)ctx;
}

/* addr is our own receive buffer, named by a CTS we built and looped back
 * through private memory: no other process could have written it. */
static int self_dma_write(void *ctx, int peer, uint64_t addr, uint64_t key,
			  const void *src, size_t len)
{
	(void)ctx, (void)peer, (void)key;
	memmove((void *)(uintptr_t)addr, src, len);
	return 0;
}

/* Our own ready-mode long messages are read straight from the sending
 * buffer: one copy instead of two through the loop. The address came in a
 * packet that never left this process. */
static size_t self_pull_min(void *ctx, int peer)
{
	(void)ctx, (void)peer;
	return 1;
}

static int self_rma(void *ctx, int peer, void *local, uint64_t addr,
		    size_t len, bool write)
{
	void *remote = (void *)(uintptr_t)addr;

	(void)ctx, (void)peer;
	memmove(write ? remote : local, write ? local : remote, len);
	return 0;
}

static int self_peer_state(void *ctx, int peer)
{
	(void)ctx, (void)peer;
	return BIPFW_PEER_LIVE;
}

const struct bipfw_wire_class bipfw_self_class = {
	.name = "self",
	.flags = 0,
	.scope = BIPFW_SCOPE_SELF,
	.open = self_open,
	.close = self_close,
	.card = self_card,
	.connect = self_connect,
	.chunk = self_chunk,
	.reserve = self_reserve,
	.commit = self_commit,
	.peek = self_peek,
	.release = self_release,
	.hold = self_hold,
	.dma_write = self_dma_write,
	.pull_min = self_pull_min,
	.rma = self_rma,
	.peer_state = self_peer_state,
};
