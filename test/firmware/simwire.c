/* simwire.c - the simulated lossy wire (see simwire.h). */
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "simwire.h"

struct simpkt {
	struct bip_pkt_hdr hdr;
	uint8_t *payload;
	size_t len;
};

/* A receive buffer exposed to the peers' DMA (expose), by key. */
#define SIM_EXPOSED 64

struct simexp {
	uint64_t key; /* 0: free */
	uint64_t addr;
	size_t len;
};

struct simport {
	struct simwire_net *net;
	int node;
	bool dead;
	bool cut;          /* alive, but nothing reaches it or leaves it */
	uint64_t *answered; /* per peer: when it last answered our ping */
	size_t dma_min;
	uint8_t *out; /* the packet being written (reserve to commit) */
	struct simpkt *q; /* inbound queue (capacity entries) */
	unsigned head, count;
	struct simpkt cur;
	struct simexp exp[SIM_EXPOSED];
	uint64_t next_key;
};

struct simwire_net {
	int nnodes;
	bool fan; /* node 0 talks to each other node, each of which is node
		   * 1 of a pair of its own (simwire_new_fan) */
	uint64_t rng;
	struct simwire_faults f;
	struct simport *ports;
	uint64_t sent[BIP_PKT_NTYPES];
	uint64_t keyed_writes, bad_keys;
};

uint64_t simwire_sent(struct simwire_net *net, unsigned type)
{
	return net->sent[type];
}

uint64_t simwire_rand(struct simwire_net *net)
{
	return bipfw_rand(&net->rng);
}

static bool chance(struct simwire_net *net, unsigned pct)
{
	return pct && simwire_rand(net) % 100 < pct;
}

struct simwire_net *simwire_new(int nnodes, uint64_t seed,
				const struct simwire_faults *faults)
{
	struct simwire_net *net = calloc(1, sizeof(*net));

	net->nnodes = nnodes;
	net->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	net->f = *faults;
	if (!net->f.capacity)
		net->f.capacity = 64;
	net->ports = calloc((size_t)nnodes, sizeof(*net->ports));
	for (int i = 0; i < nnodes; i++) {
		net->ports[i].net = net;
		net->ports[i].node = i;
		net->ports[i].q = calloc(net->f.capacity, sizeof(struct simpkt));
		net->ports[i].answered = calloc((size_t)nnodes,
						sizeof(uint64_t));
	}
	return net;
}

struct simwire_net *simwire_new_fan(int nnodes, uint64_t seed,
				    const struct simwire_faults *faults)
{
	struct simwire_net *net = simwire_new(nnodes, seed, faults);

	net->fan = true;
	return net;
}

void simwire_free(struct simwire_net *net)
{
	for (int i = 0; i < net->nnodes; i++) {
		struct simport *p = &net->ports[i];

		for (unsigned k = 0; k < p->count; k++)
			free(p->q[(p->head + k) % net->f.capacity].payload);
		free(p->q);
		free(p->out);
		free(p->answered);
	}
	free(net->ports);
	free(net);
}

static int attach(struct simwire_net *net, int node, struct bipfw *fw,
		  size_t packet_size, size_t dma_min)
{
	struct simport *me = &net->ports[node];

	me->dma_min = dma_min;
	free(me->out);
	me->out = malloc(sizeof(struct bip_pkt_hdr) + packet_size);
	return bipfw_wire_add(fw, &simwire_class, me);
}

int simwire_attach(struct simwire_net *net, int node, struct bipfw *fw,
		   size_t packet_size)
{
	return attach(net, node, fw, packet_size, SIZE_MAX);
}

int simwire_nic(struct simwire_net *net, int node,
		const struct bipfw_config *cfg, size_t dma_min,
		struct bipfw **fw_p)
{
	int rc = bipfw_create(cfg, fw_p);

	if (rc)
		return rc;
	rc = attach(net, node, *fw_p, cfg->packet_size, dma_min);
	if (net->fan && node)
		rc = rc < 0 ? rc : bipfw_port_set(*fw_p, 0, 0);
	for (int i = 0; rc >= 0 && !(net->fan && node) && i < net->nnodes; i++)
		if (i != node)
			rc = bipfw_port_set(*fw_p, i, 0);
	if (rc < 0) {
		bipfw_destroy(*fw_p);
		return rc;
	}
	return 0;
}

void simwire_kill(struct simwire_net *net, int node)
{
	net->ports[node].dead = true;
}

void simwire_cut(struct simwire_net *net, int node)
{
	net->ports[node].cut = true;
}

static void enqueue(struct simport *dst, const struct simpkt *pkt,
		    bool reorder)
{
	struct simwire_net *net = dst->net;
	unsigned cap = net->f.capacity;
	unsigned pos = dst->count;

	if (reorder && dst->count)
		pos = (unsigned)(simwire_rand(net) % dst->count);
	/* Shift the tail to open a hole at pos. */
	for (unsigned k = dst->count; k > pos; k--)
		dst->q[(dst->head + k) % cap] = dst->q[(dst->head + k - 1) % cap];
	dst->q[(dst->head + pos) % cap] = *pkt;
	dst->count++;
}

static struct simpkt copy_pkt(const struct bip_pkt_hdr *hdr,
			      const void *payload, size_t len)
{
	struct simpkt p = { .hdr = *hdr, .payload = malloc(len ? len : 1),
			    .len = len };

	if (len)
		memcpy(p.payload, payload, len);
	return p;
}

static struct bip_pkt_hdr *sim_reserve(void *ctx, int peer, size_t len)
{
	struct simport *me = ctx;
	struct simport *dst = &me->net->ports[peer];

	if (dst->count + 2 > me->net->f.capacity)
		return NULL;
	return (struct bip_pkt_hdr *)me->out;
}

static void sim_commit(void *ctx, int peer, struct bip_pkt_hdr *hdr,
		       size_t len)
{
	struct simport *me = ctx;
	struct simwire_net *net = me->net;
	struct simport *dst = &net->ports[peer];
	const void *payload = hdr + 1;
	struct simpkt p;

	net->sent[hdr->type]++;
	if (dst->dead || dst->cut || me->cut || chance(net, net->f.loss_pct))
		return;
	p = copy_pkt(hdr, payload, len);
	if (net->fan) {
		/* The hub's node k is node 1 of k's own pair. */
		if (me->node)
			p.hdr.src = (uint16_t)me->node;
		else
			p.hdr.dst = 1;
		bipfw_hdr_seal(&p.hdr);
	}
	if (chance(net, net->f.corrupt_pct)) {
		size_t total = sizeof(p.hdr) + len;
		size_t at = simwire_rand(net) % total;
		uint8_t bit = (uint8_t)(1u << (simwire_rand(net) % 8));

		if (at < sizeof(p.hdr))
			((uint8_t *)&p.hdr)[at] ^= bit;
		else
			p.payload[at - sizeof(p.hdr)] ^= bit;
	}
	if (chance(net, net->f.dup_pct)) {
		struct simpkt d = copy_pkt(&p.hdr, p.payload, len);

		enqueue(dst, &d, chance(net, net->f.reorder_pct));
	}
	enqueue(dst, &p, chance(net, net->f.reorder_pct));
	if (chance(net, net->f.foreign_pct) && dst->count < net->f.capacity) {
		/* Traffic of another job on the same wire. */
		struct simpkt x = copy_pkt(hdr, payload, len);

		x.hdr.job_key ^= 0x5a5a5a5a;
		bipfw_hdr_seal(&x.hdr);
		enqueue(dst, &x, false);
	}
}

void simwire_inject(struct simwire_net *net, int dst,
		    const struct bip_pkt_hdr *hdr, const void *payload,
		    size_t len)
{
	struct simpkt p = copy_pkt(hdr, payload, len);

	/* Checksummed as on any lossy wire: only its content is forged. */
	p.hdr.flags |= BIP_PKTF_CSUM;
	p.hdr.csum = bipfw_csum(payload, len);
	bipfw_hdr_seal(&p.hdr);
	enqueue(&net->ports[dst], &p, false);
}

static int sim_peek(void *ctx, const void **hdr,
		    const void **payload, size_t *avail)
{
	struct simport *me = ctx;

	if (!me->count)
		return -BIP_EAGAIN;
	me->cur = me->q[me->head];
	me->head = (me->head + 1) % me->net->f.capacity;
	me->count--;
	*hdr = &me->cur.hdr;
	*payload = me->cur.payload;
	*avail = me->cur.len;
	return 0;
}

static void sim_release(void *ctx)
{
	struct simport *me = ctx;

	free(me->cur.payload);
	me->cur.payload = NULL;
}

/* The exposure of peer's under key that takes [addr, addr + len), or
 * NULL. */
static struct simexp *exposure(struct simport *peer, uint64_t key,
			       uint64_t addr, size_t len)
{
	for (unsigned i = 0; i < SIM_EXPOSED; i++)
		if (peer->exp[i].key == key)
			return addr == peer->exp[i].addr &&
					       len <= peer->exp[i].len
				       ? &peer->exp[i]
				       : NULL;
	return NULL;
}

/* Every node lives in this process: an address is an address. A key must
 * name a live exposure of that very buffer, as bip.ko checks. */
static int sim_dma_write(void *ctx, int peer, uint64_t addr, uint64_t key,
			 const void *src, size_t len)
{
	struct simport *me = ctx;

	if (len < me->dma_min)
		return -BIP_EAGAIN;
	if (key && !exposure(&me->net->ports[peer], key, addr, len)) {
		me->net->bad_keys++;
		return -BIP_EAGAIN;
	}
	me->net->keyed_writes += key != 0;
	memcpy((void *)(uintptr_t)addr, src, len);
	return 0;
}

static int sim_expose(void *ctx, int peer, void *buf, size_t len,
		      uint64_t *key)
{
	struct simport *me = ctx;

	(void)peer;
	*key = 0;
	if (len < me->dma_min)
		return 0;
	for (unsigned i = 0; i < SIM_EXPOSED; i++)
		if (!me->exp[i].key) {
			me->exp[i] = (struct simexp){ ++me->next_key,
						      (uintptr_t)buf, len };
			*key = me->exp[i].key;
			return 0;
		}
	return -BIP_ENOMEM;
}

static void sim_unexpose(void *ctx, uint64_t key)
{
	struct simport *me = ctx;

	for (unsigned i = 0; i < SIM_EXPOSED; i++)
		if (me->exp[i].key == key)
			me->exp[i].key = 0;
}

unsigned simwire_exposed(struct simwire_net *net, int node)
{
	unsigned n = 0;

	for (unsigned i = 0; i < SIM_EXPOSED; i++)
		n += net->ports[node].exp[i].key != 0;
	return n;
}

uint64_t simwire_keyed_writes(struct simwire_net *net, uint64_t *bad)
{
	*bad = net->bad_keys;
	return net->keyed_writes;
}

static size_t sim_pull_min(void *ctx, int peer)
{
	return ((struct simport *)ctx)->dma_min;
}

static bool sim_rma_reach(void *ctx, int peer)
{
	return ((struct simport *)ctx)->dma_min != SIZE_MAX;
}

static int sim_rma(void *ctx, int peer, void *local, uint64_t addr,
		   size_t len, bool write)
{
	void *remote = (void *)(uintptr_t)addr;

	if (((struct simport *)ctx)->net->f.unreadable)
		return -BIP_ESYS;
	memcpy(write ? remote : local, write ? local : remote, len);
	return 0;
}

static int sim_peer_state(void *ctx, int peer)
{
	return ((struct simport *)ctx)->net->ports[peer].dead
		       ? BIPFW_PEER_GONE
		       : BIPFW_PEER_LIVE;
}

static void sim_wait(void *ctx, unsigned timeout_us)
{
}

/* A live peer's process answers at once, unless the wire is cut. */
static void sim_ping(void *ctx, int peer)
{
	struct simport *me = ctx;
	const struct simport *dst = &me->net->ports[peer];

	if (!dst->dead && !dst->cut && !me->cut)
		me->answered[peer] = bipfw_now_us();
}

static uint64_t sim_answered_at(void *ctx, int peer)
{
	return ((struct simport *)ctx)->answered[peer];
}

static size_t sim_chunk(void *ctx)
{
	const struct simport *me = ctx;

	return me->net->f.chunk ? me->net->f.chunk : SIZE_MAX;
}

static size_t sim_plain_max(void *ctx)
{
	return ((struct simport *)ctx)->net->f.plain_max;
}

const struct bipfw_wire_class simwire_class = {
	.name = "sim",
	.flags = BIPFW_WIRE_LOSSY,
	.scope = BIPFW_SCOPE_NETWORK,
	.chunk = sim_chunk,
	.plain_max = sim_plain_max,
	.reserve = sim_reserve,
	.commit = sim_commit,
	.peek = sim_peek,
	.release = sim_release,
	.dma_write = sim_dma_write,
	.expose = sim_expose,
	.unexpose = sim_unexpose,
	.pull_min = sim_pull_min,
	.rma = sim_rma,
	.rma_reach = sim_rma_reach,
	.peer_state = sim_peer_state,
	.ping = sim_ping,
	.answered_at = sim_answered_at,
	.wait = sim_wait,
};
