/*
 * ports.c - which wire carries each peer: the wire classes built in, opening
 * those a job needs, the cards that list a process's addresses, the choice
 * of a wire per peer at connect time, and sleeping on every open wire.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "nic.h"
#include "wire/eth.h"
#include "wire/self.h"
#include "wire/shm.h"
#include "wire/udp.h"

/* In order of preference: a peer goes by the first that reaches it. */
const struct bipfw_wire_class *const bipfw_wire_classes[] = {
	&bipfw_self_class,
	&bipfw_shm_class,
	&bipfw_eth_class,
	&bipfw_udp_class,
	NULL,
};

#define NCLASSES (sizeof(bipfw_wire_classes) / sizeof(bipfw_wire_classes[0]) - 1)

/* BIP_WIRE's choices: auto, then every class but self (which carries a
 * process's packets to itself whatever the others do) in table order. */
static const char *const wire_choices[] = { "auto", "shm", "eth", "udp",
					    NULL };

_Static_assert(sizeof(wire_choices) / sizeof(wire_choices[0]) == NCLASSES + 1,
	       "BIP_WIRE lists every wire class but self");

static const char *const bulk_choices[] = { "auto", "off", NULL };
static const char *const kmod_choices[] = { "auto", "off", NULL };

struct port_knobs {
	unsigned wire;
	unsigned bulk; /* index in bulk_choices */
	unsigned kmod; /* index in kmod_choices */
};

static const struct bip_knob_def knobs[] = {
	{ { "BIP_WIRE", "auto|shm|eth|udp", "auto",
	    "The wire every other node must be reached by. auto: shm for "
	    "peers on this host, "
	    "eth for the others when BIP_ETH_IFACE names an interface and "
	    "packet sockets are allowed (CAP_NET_RAW) or bip.ko carries the "
	    "frames, else udp." },
	  BIP_KNOB_CHOICE, 0, 0, wire_choices,
	  BIP_KNOB_UINT(struct port_knobs, wire) },
	{ { "BIP_BULK", "auto|off", "auto",
	    "auto: messages wider than one packet to a peer on eth go by udp "
	    "when both ends have it (the kernel segments udp runs, eth pays "
	    "per frame), the others by eth. off: every packet by the peer's "
	    "wire." },
	  BIP_KNOB_CHOICE, 0, 0, bulk_choices,
	  BIP_KNOB_UINT(struct port_knobs, bulk) },
	{ { "BIP_KMOD", "auto|off", "auto",
	    "auto: use the kernel module bip.ko when /dev/bip is there (the "
	    "host interface's buffers in its NIC memory, the shm wire's "
	    "long messages by its copy, the eth wire's frames without "
	    "CAP_NET_RAW); off: never, as without it." },
	  BIP_KNOB_CHOICE, 0, 0, kmod_choices,
	  BIP_KNOB_UINT(struct port_knobs, kmod) },
};

const struct bip_knob_table bipfw_port_knobs = BIP_KNOB_TABLE(knobs);

int bipfw_wire_add(struct bipfw *fw, const struct bipfw_wire_class *cls,
		   void *ctx)
{
	struct bipfw_port *w;

	if (fw->nwires == BIPFW_WIRES_MAX)
		return -BIP_EINVAL;
	w = &fw->wires[fw->nwires];
	w->cls = cls;
	w->ctx = ctx;
	w->lossy = cls->flags & BIPFW_WIRE_LOSSY;
	fw->batching |= cls->flush != NULL;
	w->chunk = cls->chunk ? cls->chunk(ctx) : fw->cfg.packet_size;
	if (w->chunk > fw->cfg.packet_size)
		w->chunk = fw->cfg.packet_size;
	w->plain_max = cls->plain_max ? cls->plain_max(ctx) : 0;
	snprintf(w->bulk_why, sizeof(w->bulk_why),
		 "another host; wide messages by %s", cls->name);
	return (int)fw->nwires++;
}

/* Which classes a job needs: what can reach its nodes. Self always; a
 * forced wire is then the only one; else host-scope wires, and network
 * ones if it spans hosts. */
static bool class_needed(const struct bipfw *fw,
			 const struct bipfw_wire_class *cls,
			 const struct bipfw_wire_params *p)
{
	if (cls->scope == BIPFW_SCOPE_SELF)
		return true;
	if (fw->forced)
		return !strcmp(cls->name, wire_choices[fw->forced]);
	return cls->scope == BIPFW_SCOPE_HOST || p->nhosts > 1;
}

int bipfw_wires_open(struct bipfw *fw, const struct bipfw_wire_params *params)
{
	struct bipfw_wire_params wp = *params, *p = &wp;
	struct port_knobs k;
	int rc = bip_knob_table_load(&bipfw_port_knobs, &k);

	if (rc)
		return rc;
	fw->forced = k.wire;
	fw->bulk_auto = k.bulk == 0;
	wp.cnt = &fw->cnt;
	wp.kdev = &fw->kdev;
	if (k.kmod != 0)
		snprintf(fw->kdev.why, sizeof(fw->kdev.why), "off (BIP_KMOD)");
	else if (!bipfw_kdev_open(&fw->kdev, BIP_KABI_DEVICE, p->secret,
				  p->job_key))
		bipfw_hostif_to_nicmem(fw);
	for (unsigned i = 0; i < NCLASSES; i++) {
		const struct bipfw_wire_class *cls = bipfw_wire_classes[i];
		void *ctx;

		if (!class_needed(fw, cls, p))
			continue;
		rc = cls->open(p, &ctx);
		/* Not configured or not allowed here: the next one serves. */
		if (rc == -BIP_EWIRE && !fw->forced)
			continue;
		if (rc) {
			bip_err("cannot open the %s wire: %s", cls->name,
				bip_strerror(rc));
			return rc;
		}
		rc = bipfw_wire_add(fw, cls, ctx);
		if (rc < 0) {
			cls->close(ctx);
			return rc;
		}
	}
	return 0;
}

int bipfw_kmod_state(const struct bipfw *fw, const char **why)
{
	*why = fw->kdev.why[0] ? fw->kdev.why : "not opened";
	return fw->kdev.fd >= 0 ? 0 : -BIP_ESYS;
}

bool bipfw_kmod_wanted(void)
{
	struct port_knobs k;

	return bip_knob_table_load(&bipfw_port_knobs, &k) == 0 && k.kmod == 0;
}

int bipfw_kmod_probe(char *why, size_t len)
{
	return bipfw_kdev_probe(BIP_KABI_DEVICE, why, len);
}

void bipfw_wires_close(struct bipfw *fw)
{
	for (unsigned i = 0; i < fw->nwires; i++)
		if (fw->wires[i].cls->close)
			fw->wires[i].cls->close(fw->wires[i].ctx);
	fw->nwires = 0;
	fw->batching = false;
}

int bipfw_cards(const struct bipfw *fw, char *buf, size_t len)
{
	size_t used = 0;

	if (!fw->nwires || !len)
		return -BIP_EWIRE;
	buf[0] = '\0';
	for (unsigned i = 0; i < fw->nwires; i++) {
		const struct bipfw_port *w = &fw->wires[i];
		int rc;

		if (i) {
			if (used + 1 >= len)
				return -BIP_ETOOLONG;
			buf[used++] = ';';
		}
		rc = w->cls->card(w->ctx, buf + used, len - used);
		if (rc)
			return rc;
		used += strlen(buf + used);
	}
	return 0;
}

#define WIRE_CARD_MAX 256

/* A peer's cards: one or more "name,..." separated by ';', each shorter
 * than WIRE_CARD_MAX. Names we do not know (a build with other wires) are
 * allowed; anything else is malformed. */
static bool cards_valid(const char *cards)
{
	const char *c = cards;

	do {
		size_t name = strspn(c, "abcdefghijklmnopqrstuvwxyz0123456789");
		size_t clen = strcspn(c, ";");

		if (!name || c[name] != ',' || clen >= WIRE_CARD_MAX)
			return false;
		c += clen;
	} while (*c++ == ';');
	return true;
}

/* The peer's card for a class, copied into buf[WIRE_CARD_MAX], or false. */
static bool card_for(const char *cards, const char *name, char *buf)
{
	size_t n = strlen(name);

	for (const char *c = cards;; c++) {
		size_t clen = strcspn(c, ";");

		if (!strncmp(c, name, n) && c[n] == ',') {
			memcpy(buf, c, clen);
			buf[clen] = '\0';
			return true;
		}
		c += clen;
		if (!*c)
			return false;
	}
}

/* The direct wire (bipfw_poll): the one wire other than self that carries
 * peers, when it is lossless, lends its packets, shows private copies of
 * their headers, and carries no bulk runs. */
static void direct_update(struct bipfw *fw)
{
	int direct = -1;

	for (unsigned i = 0; i < fw->nwires; i++) {
		const struct bipfw_port *w = &fw->wires[i];

		if (w->cls->scope == BIPFW_SCOPE_SELF ||
		    (!w->npeers && !w->nbulk))
			continue;
		if (direct >= 0 || w->lossy || w->nbulk || !w->cls->keep ||
		    !(w->cls->flags & BIPFW_WIRE_PEEK_COPY)) {
			direct = -1;
			break;
		}
		direct = (int)i;
	}
	fw->direct_wire = direct;
}

/* The peer's bulk wire: wire, or none (BIPFW_NO_WIRE). */
static void bulk_take(struct bipfw *fw, int peer, unsigned wire)
{
	struct bipfw_peer *p = &fw->peers[peer];

	if (p->bulk != BIPFW_NO_WIRE)
		fw->wires[p->bulk].nbulk--;
	p->bulk = (uint8_t)wire;
	p->path = p->wire;
	if (wire != BIPFW_NO_WIRE) {
		fw->wires[wire].nbulk++;
		p->why = fw->wires[wire].bulk_why;
	}
	direct_update(fw);
}

static void port_take(struct bipfw *fw, int peer, unsigned wire,
		      const char *why)
{
	struct bipfw_peer *p = &fw->peers[peer];

	if (p->wire != BIPFW_NO_WIRE)
		fw->wires[p->wire].npeers--;
	fw->wires[wire].npeers++;
	p->wire = (uint8_t)wire;
	p->lossy = fw->wires[wire].lossy;
	p->why = why;
	p->rx_at = bipfw_now_us();
	fw->any_lossy |= p->lossy;
	bulk_take(fw, peer, BIPFW_NO_WIRE);
}

/* A peer on a lossy wire that pays per packet gets, when BIP_BULK allows,
 * a bulk wire as well: the first other open wire with BIPFW_WIRE_BULK
 * whose card it published and that reaches it. Both must be lossy: the
 * peer's reliability state spans the two. */
static void bulk_connect(struct bipfw *fw, int peer, const char *cards)
{
	const struct bipfw_port *own = bipfw_port_of(fw, peer);
	char card[WIRE_CARD_MAX];

	if (!fw->bulk_auto || fw->forced || !own->lossy ||
	    (own->cls->flags & BIPFW_WIRE_BULK))
		return;
	for (unsigned i = 0; i < fw->nwires; i++) {
		const struct bipfw_port *w = &fw->wires[i];

		if (!(w->cls->flags & BIPFW_WIRE_BULK) || !w->lossy ||
		    !card_for(cards, w->cls->name, card))
			continue;
		if (w->cls->connect(w->ctx, peer, card) == 0) {
			bulk_take(fw, peer, i);
			return;
		}
	}
}

int bipfw_connect(struct bipfw *fw, int peer, const char *cards,
		  bool same_host)
{
	char card[WIRE_CARD_MAX];
	int rc = -BIP_EWIRE;

	bool self = peer == fw->cfg.node;

	if (peer < 0 || peer >= fw->cfg.nnodes)
		return -BIP_ENODE;
	if (fw->peers[peer].wire != BIPFW_NO_WIRE)
		return -BIP_ESTATE;
	if (!cards_valid(cards))
		return -BIP_ECARD;
	/* Open wires are in order of preference: the first that reaches the
	 * peer and whose card it published carries it. Our own node goes by
	 * the self wire and no other. */
	for (unsigned i = 0; i < fw->nwires; i++) {
		const struct bipfw_port *w = &fw->wires[i];

		if ((w->cls->scope == BIPFW_SCOPE_SELF) != self ||
		    (w->cls->scope == BIPFW_SCOPE_HOST && !same_host))
			continue;
		if (!card_for(cards, w->cls->name, card))
			continue;
		rc = w->cls->connect(w->ctx, peer, card);
		if (rc == -BIP_EWIRE)
			continue;
		if (rc)
			return rc;
		port_take(fw, peer, i,
			  self		       ? "this process"
			  : fw->forced	       ? "forced by BIP_WIRE"
			  : same_host	       ? "same host"
			  : "another host");
		bulk_connect(fw, peer, cards);
		return 0;
	}
	if (fw->forced)
		bip_err("node %d cannot be reached over BIP_WIRE=%s%s", peer,
			wire_choices[fw->forced],
			same_host ? "" : " (it is on another host)");
	else
		bip_err("no wire reaches node %d (%s; its card: \"%.80s\")",
			peer, same_host ? "same host" : "another host", cards);
	return rc;
}

int bipfw_port_set(struct bipfw *fw, int peer, unsigned wire)
{
	if (peer < 0 || peer >= fw->cfg.nnodes)
		return -BIP_ENODE;
	if (wire >= fw->nwires)
		return -BIP_EINVAL;
	port_take(fw, peer, wire, "set by the caller");
	return 0;
}

int bipfw_bulk_set(struct bipfw *fw, int peer, unsigned wire)
{
	if (peer < 0 || peer >= fw->cfg.nnodes)
		return -BIP_ENODE;
	if (wire >= fw->nwires || fw->peers[peer].wire == BIPFW_NO_WIRE ||
	    fw->peers[peer].wire == wire ||
	    fw->wires[wire].lossy != fw->peers[peer].lossy)
		return -BIP_EINVAL;
	bulk_take(fw, peer, wire);
	return 0;
}

const char *bipfw_port_name(const struct bipfw *fw, int peer,
			    const char **why)
{
	const struct bipfw_peer *p = &fw->peers[peer];

	if (p->wire == BIPFW_NO_WIRE)
		return NULL;
	if (why)
		*why = p->why;
	return fw->wires[p->wire].cls->name;
}

size_t bipfw_port_chunk(const struct bipfw *fw, int peer)
{
	const struct bipfw_peer *p = &fw->peers[peer];

	if (p->wire == BIPFW_NO_WIRE)
		return 0;
	return fw->wires[p->bulk != BIPFW_NO_WIRE ? p->bulk : p->wire].chunk;
}

bool bipfw_rma_reach(const struct bipfw *fw, int peer)
{
	const struct bipfw_peer *p = &fw->peers[peer];
	const struct bipfw_port *w;

	if (p->state != BIPFW_PEER_LIVE || p->wire == BIPFW_NO_WIRE)
		return false;
	w = &fw->wires[p->wire];
	return w->cls->rma &&
	       (!w->cls->rma_reach || w->cls->rma_reach(w->ctx, peer));
}

size_t bipfw_read_min(const struct bipfw *fw, int peer)
{
	const struct bipfw_port *w;

	if (!bipfw_rma_reach(fw, peer))
		return SIZE_MAX;
	w = &fw->wires[fw->peers[peer].wire];
	return w->cls->pull_min ? w->cls->pull_min(w->ctx, peer) : SIZE_MAX;
}

int bipfw_rma(struct bipfw *fw, int peer, void *local, uint64_t addr,
	      size_t len, bool write)
{
	const struct bipfw_peer *p = &fw->peers[peer];
	const struct bipfw_port *w;
	int rc;

	if (p->state != BIPFW_PEER_LIVE || p->wire == BIPFW_NO_WIRE)
		return -BIP_EPEERGONE;
	if (!bipfw_rma_reach(fw, peer))
		return -BIP_EAGAIN;
	w = &fw->wires[p->wire];
	rc = w->cls->rma(w->ctx, peer, local, addr, len, write);
	if (!rc)
		fw->cnt.cma_transfers++;
	return rc;
}

int bipfw_readv(struct bipfw *fw, int peer, struct bip_rvec *v,
		unsigned n)
{
	const struct bipfw_peer *p = &fw->peers[peer];
	const struct bipfw_port *w;
	int rc = 0;

	if (n > BIP_READV_MAX)
		rc = -BIP_EINVAL;
	else if (p->state != BIPFW_PEER_LIVE || p->wire == BIPFW_NO_WIRE)
		rc = -BIP_EPEERGONE;
	else if (!bipfw_rma_reach(fw, peer))
		rc = -BIP_EAGAIN;
	if (rc) {
		/* bipfw_rma moves nothing for nothing, whoever the peer. */
		for (unsigned i = 0; i < n; i++)
			v[i].rc = v[i].len || n > BIP_READV_MAX ? rc : 0;
		return rc;
	}
	w = &fw->wires[p->wire];
	if (w->cls->readv)
		w->cls->readv(w->ctx, peer, v, n);
	else
		for (unsigned i = 0; i < n; i++)
			v[i].rc = w->cls->rma(w->ctx, peer, v[i].dst,
					      v[i].addr, v[i].len, false);
	for (unsigned i = 0; i < n; i++) {
		fw->cnt.cma_transfers += v[i].len && !v[i].rc;
		rc = rc ? rc : v[i].rc;
	}
	return rc;
}

/* The open wire that allocates shared memory: the first that can. */
static const struct bipfw_port *mem_port(const struct bipfw *fw)
{
	for (unsigned i = 0; i < fw->nwires; i++)
		if (fw->wires[i].cls->mem_alloc)
			return &fw->wires[i];
	return NULL;
}

int bipfw_mem_alloc(struct bipfw *fw, size_t len, void **addr_p,
		    uint64_t *key_p)
{
	const struct bipfw_port *w = mem_port(fw);

	if (!w)
		return -BIP_EAGAIN;
	return w->cls->mem_alloc(w->ctx, len, addr_p, key_p);
}

void bipfw_mem_free(struct bipfw *fw, void *addr, size_t len, uint64_t key)
{
	const struct bipfw_port *w = mem_port(fw);

	if (w)
		w->cls->mem_free(w->ctx, addr, len, key);
}

int bipfw_mem_map(struct bipfw *fw, int peer, uint64_t key, uint64_t off,
		  size_t len, void **addr_p)
{
	const struct bipfw_peer *p = &fw->peers[peer];
	const struct bipfw_port *w;

	if (p->state != BIPFW_PEER_LIVE || p->wire == BIPFW_NO_WIRE)
		return -BIP_EPEERGONE;
	w = bipfw_port_of(fw, peer);
	if (!w->cls->mem_map)
		return -BIP_EAGAIN;
	return w->cls->mem_map(w->ctx, peer, key, off, len, addr_p);
}

/* The wire that shares memory maps it too, whoever the peer was. */
void bipfw_mem_unmap(struct bipfw *fw, void *addr, size_t len)
{
	const struct bipfw_port *w = mem_port(fw);

	if (w)
		w->cls->mem_unmap(w->ctx, addr, len);
}

int bipfw_mem_watch(struct bipfw *fw, const uint64_t *word, uint64_t value)
{
	const struct bipfw_port *w = mem_port(fw);

	if (!w || !w->cls->mem_watch)
		return -BIP_EAGAIN;
	w->cls->mem_watch(w->ctx, word, value);
	return 0;
}

void bipfw_mem_wake_barrier(struct bipfw *fw)
{
	const struct bipfw_port *w = mem_port(fw);

	if (w && w->cls->mem_wake_barrier)
		w->cls->mem_wake_barrier(w->ctx);
}

int bipfw_host_cpus(struct bipfw *fw, int cpu, struct bipfw_cpus *others)
{
	int shared = 0;

	for (unsigned i = 0; i < fw->nwires; i++)
		if (fw->wires[i].cls->host_cpus)
			shared |= fw->wires[i].cls->host_cpus(fw->wires[i].ctx,
							      cpu, others);
	return shared;
}

/* Only a live peer the memory's wire reaches can share it and sleep. */
void bipfw_mem_wake(struct bipfw *fw, int peer)
{
	const struct bipfw_peer *p = &fw->peers[peer];
	const struct bipfw_port *w = mem_port(fw);

	if (w && w->cls->mem_wake && p->state == BIPFW_PEER_LIVE &&
	    p->wire != BIPFW_NO_WIRE && bipfw_port_of(fw, peer) == w)
		w->cls->mem_wake(w->ctx, peer);
}

int bipfw_job_cleanup(uint64_t secret, uint64_t job_key, int nnodes)
{
	int removed = 0, err = 0;

	for (unsigned i = 0; i < NCLASSES; i++) {
		const struct bipfw_wire_class *cls = bipfw_wire_classes[i];

		for (int node = 0; cls->cleanup && node < nnodes; node++) {
			int rc = cls->cleanup(secret, job_key, node);

			if (rc < 0)
				err = rc;
			else
				removed += rc;
		}
	}
	return err ? err : removed;
}

/* Whether a wire must be slept on: it carries a peer or its wide
 * messages, and packets can come by it while we sleep (a self-scope wire
 * has one waiting already, or none until we send). */
static bool wait_on(const struct bipfw_port *w, bool *ready)
{
	const void *hdr, *payload;
	size_t avail;

	if (!w->npeers && !w->nbulk)
		return false;
	if (w->cls->scope != BIPFW_SCOPE_SELF)
		return true;
	*ready |= w->cls->peek(w->ctx, &hdr, &payload, &avail) == 0;
	return false;
}

/* Sleep in poll() on the interrupt descriptor of each wire that carries a
 * peer or its wide messages (one alone sleeps its own way). A wire without
 * one is looked at again every millisecond. */
#define NO_FD_POLL_MS 1

void bipfw_wires_wait(struct bipfw *fw, unsigned max_us)
{
	struct pollfd pfd[BIPFW_WIRES_MAX];
	int n = 0, timeout = (int)((max_us + 999) / 1000);
	bool armed[BIPFW_WIRES_MAX] = { false }, ready = false;
	unsigned used = 0, last = 0;

	for (unsigned i = 0; i < fw->nwires; i++)
		if (wait_on(&fw->wires[i], &ready))
			used++, last = i;
	if (ready)
		return;
	if (used == 1) {
		fw->wires[last].cls->wait(fw->wires[last].ctx, max_us);
		return;
	}
	for (unsigned i = 0; i < fw->nwires; i++) {
		const struct bipfw_port *w = &fw->wires[i];
		int fd;

		if (!wait_on(w, &ready))
			continue;
		fd = w->cls->wait_fd ? w->cls->wait_fd(w->ctx) : -BIP_ESTATE;
		armed[i] = w->cls->wait_fd != NULL;
		if (fd == -BIP_EAGAIN) {
			timeout = 0; /* a packet is there already */
			break;
		}
		if (fd < 0) {
			/* No descriptor to sleep on: look again soon. */
			if (timeout > NO_FD_POLL_MS)
				timeout = NO_FD_POLL_MS;
			continue;
		}
		pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	if (timeout)
		(void)poll(pfd, (nfds_t)n, timeout);
	for (unsigned i = 0; i < fw->nwires; i++)
		if (armed[i] && fw->wires[i].cls->wait_end)
			fw->wires[i].cls->wait_end(fw->wires[i].ctx);
}
