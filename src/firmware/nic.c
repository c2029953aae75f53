/*
 * nic.c - the NIC program's knobs, life cycle and event loop: memory set-up, one
 * step (receive, transmit, acks, timers, peer liveness), sleeping through
 * the wire's interrupt, and losing a peer.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "nic.h"

#define RX_BUDGET 64 /* packets received per step */
/* Reading the clock costs more than an idle step: timers only need
 * microsecond-scale accuracy, so the clock is read every few steps. */
#define CLOCK_EVERY 16
#define BUSY_POLL_US 200 /* sleep bound while sends wait for link space */

uint64_t bipfw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bipfw_now_us(void)
{
	return bipfw_now_ns() / 1000u;
}

#define U(field) BIP_KNOB_UINT(struct bipfw_config, field)

/* BIP_SMALL_QUEUE=auto: credits of 64 for each of the job's nodes when
 * the MPI netmod shares the queue (fewer stall a broadcast on 16 ranks on
 * 2 cores: 8 B took 15 us with 16 credits, 5-8 with 64). */
#define SMALL_QUEUE_PER_NODE 64u
#define SMALL_QUEUE_MIN 256u
#define SMALL_QUEUE_MAX 65535u

static const struct bip_knob_def knobs[] = {
	{ { "BIP_SMALL_QUEUE", "count|auto", "auto",
	    "Capacity of the small-message receive queue, in messages. auto: "
	    "64 per node of the job, at least 256 and at most 65535 (the MPI "
	    "netmod shares it among the ranks as credits)." },
	  BIP_KNOB_COUNT_AUTO, 4, SMALL_QUEUE_MAX, NULL, U(small_queue) },
	{ { "BIP_SEND_SLOTS", "count", "64",
	    "Outstanding sends (small ones until acknowledged, long ones "
	    "until complete)." },
	  BIP_KNOB_COUNT, 2, 4096, NULL, U(send_slots) },
	{ { "BIP_LONG_TAGS", "count", "64",
	    "Number of tags for long receives (tags 0..N-1)." },
	  BIP_KNOB_COUNT, 1, 4096, NULL, U(long_tags) },
	{ { "BIP_PACKET_SIZE", "size", "32k",
	    "Payload bytes per packet: long messages are cut into packets of "
	    "this size and pipelined; must be equal on every node." },
	  BIP_KNOB_SIZE, BIP_SMALL_MAX, 4u << 20, NULL,
	  BIP_KNOB_SIZE_T(struct bipfw_config, packet_size) },
	{ { "BIP_WINDOW", "power of two", "128",
	    "Packets in flight per peer before acknowledgements are "
	    "needed." },
	  BIP_KNOB_POW2, 2, 32768, NULL, U(window) },
	{ { "BIP_ACK_EVERY", "count", "16",
	    "A receiver acknowledges at once after this many packets." },
	  BIP_KNOB_COUNT, 1, 32768, NULL, U(ack_every) },
	{ { "BIP_ACK_DELAY_US", "microseconds", "50",
	    "Otherwise it acknowledges after this delay (acks also ride on "
	    "every packet going back)." },
	  BIP_KNOB_COUNT, 0, 1000000, NULL, U(ack_delay_us) },
	{ { "BIP_RETRANS_US", "microseconds", "200000",
	    "Lossy wires: the retransmission timeout before a round trip was "
	    "measured, and its ceiling when it doubles after each expiry." },
	  BIP_KNOB_COUNT, 100, 60000000, NULL, U(retrans_us) },
	{ { "BIP_RETRANS_MIN_US", "microseconds", "1000",
	    "Lossy wires: the floor of the retransmission timeout, which "
	    "otherwise follows the measured round trip." },
	  BIP_KNOB_COUNT, 1, 60000000, NULL, U(retrans_min_us) },
	{ { "BIP_NACK_BACKOFF_US", "microseconds", "20",
	    "First wait before resending to a receiver that had no buffer "
	    "(doubles up to 2 ms)." },
	  BIP_KNOB_COUNT, 1, 1000000, NULL, U(nack_backoff_us) },
	{ { "BIP_LIVENESS_MS", "milliseconds", "100",
	    "How often peers are checked for having died." },
	  BIP_KNOB_COUNT, 1, 60000, NULL, U(liveness_ms) },
	{ { "BIP_PEER_TIMEOUT_MS", "milliseconds", "5000",
	    "On lossy wires (udp): a peer that is silent (no ack while "
	    "packets wait for it, else no packet) and answers no liveness "
	    "probe for this long is taken as dead." },
	  BIP_KNOB_COUNT, 10, 3600000, NULL, U(peer_timeout_ms) },
	{ { "BIP_FAULT_DROP_PCT", "percent", "0",
	    "Debugging: drop this share of the packets sent on lossy wires "
	    "(udp), drawn from a generator seeded by BIP_FAULT_SEED." },
	  BIP_KNOB_COUNT, 0, 100, NULL, U(fault_drop_pct) },
	{ { "BIP_FAULT_DUP_PCT", "percent", "0",
	    "Debugging: send this share of them twice." },
	  BIP_KNOB_COUNT, 0, 100, NULL, U(fault_dup_pct) },
	{ { "BIP_FAULT_SEED", "count", "1",
	    "Debugging: seed of the fault generator (with the node number)." },
	  BIP_KNOB_COUNT, 0, 0xffffffffu, NULL, U(fault_seed) },
	{ { "BIP_FAULT_TYPES", "packet types", "all",
	    "Debugging: the packet types faults hit, comma-separated (SMALL, "
	    "LONG_RTS, LONG_CTS, LONG_DATA, ACK, NACK, CLOSE) or all." },
	  BIP_KNOB_TEXT, 0, 128, NULL,
	  BIP_KNOB_CHARS(struct bipfw_config, fault_types) },
};

const struct bip_knob_table bipfw_knobs = BIP_KNOB_TABLE(knobs);

/* A small message always fits in one packet; the window is a power of two
 * so that scoreboard slots (seq mod window) stay distinct across the
 * 2^32 wrap of sequence numbers. */
static int config_check(const struct bipfw_config *c)
{
	if (c->nnodes < 1 || c->nnodes > BIPFW_NODES_MAX || c->node < 0 ||
	    c->node >= c->nnodes || !c->small_queue || !c->send_slots ||
	    c->send_slots >= BIPFW_NONE || !c->long_tags ||
	    c->long_tags >= BIPFW_NONE || c->window < 2 ||
	    (c->window & (c->window - 1)) || !c->ack_every ||
	    !c->peer_timeout_ms ||
	    c->packet_size < BIP_SMALL_MAX || c->packet_size > UINT32_MAX)
		return -BIP_EINVAL;
	if (c->retrans_min_us > c->retrans_us) {
		bip_err("BIP_RETRANS_MIN_US (%u) exceeds BIP_RETRANS_US (%u)",
			c->retrans_min_us, c->retrans_us);
		return -BIP_EINVAL;
	}
	return 0;
}

/* BIP_FAULT_TYPES: the mask of packet types faults hit. */
static int fault_types(struct bipfw *fw)
{
	const char *p = fw->cfg.fault_types;

	if (!*p || strcmp(p, "all") == 0) {
		fw->fault_mask = ~0u;
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		unsigned t;

		for (t = 1; t < BIP_PKT_NTYPES; t++)
			if (strlen(bip_pkt_name(t)) == n &&
			    !strncmp(p, bip_pkt_name(t), n))
				break;
		if (t == BIP_PKT_NTYPES) {
			bip_err("BIP_FAULT_TYPES=%s: \"%.*s\" is no packet "
				"type",
				fw->cfg.fault_types, (int)n, p);
			return -BIP_EINVAL;
		}
		fw->fault_mask |= 1u << t;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* Every sender's slots can announce to us at once: never refused. */
static size_t rts_count(const struct bipfw_config *cfg)
{
	size_t nrts = (size_t)cfg->nnodes * cfg->send_slots;

	return nrts < BIPFW_NONE ? nrts : BIPFW_NONE - 1;
}

/* Queue buffers touched at start-up (the first a burst takes), and at
 * most (what a queue of entries for many nodes would rarely use at once,
 * 17 MB of address space). */
#define QBUF_WARM 16u
#define QBUF_MAX 4096u

static unsigned qbufs(const struct bipfw_config *cfg)
{
	return cfg->small_queue < QBUF_MAX ? cfg->small_queue : QBUF_MAX;
}

/* The host interface's buffers: the small-message queue's and a copy for
 * each send slot, every one BIP_SMALL_MAX bytes. */
static size_t hostif_bytes(const struct bipfw_config *cfg)
{
	return ((size_t)qbufs(cfg) + cfg->send_slots) * BIP_SMALL_MAX;
}

/* Lay the host interface's buffers out from m on, and touch the first
 * queue buffers and send slots' copies now, so that the first messages
 * take no page faults (they lie pages apart). Both are taken last freed
 * first, lowest first at the start: the others are touched only if that
 * many messages ever wait copied. */
static void hostif_place(struct bipfw *fw, uint8_t *m)
{
	unsigned warm = fw->nqbufs < QBUF_WARM ? fw->nqbufs : QBUF_WARM;

	memset(m, 0, (size_t)warm * BIP_SMALL_MAX);
	fw->nqbuf_free = 0;
	for (unsigned i = fw->nqbufs; i-- > 0;)
		bipfw_qbuf_put(fw, m + (size_t)i * BIP_SMALL_MAX);
	m += (size_t)fw->nqbufs * BIP_SMALL_MAX;
	warm = fw->cfg.send_slots < QBUF_WARM ? fw->cfg.send_slots : QBUF_WARM;
	memset(m, 0, (size_t)warm * BIP_SMALL_MAX);
	for (unsigned i = 0; i < fw->cfg.send_slots; i++)
		fw->slots[i].copy = m + (size_t)i * BIP_SMALL_MAX;
}

unsigned bipfw_small_queue(unsigned knob, int nnodes)
{
	/* nnodes <= BIPFW_NODES_MAX: the product fits an unsigned long. */
	unsigned long q = (unsigned long)nnodes * SMALL_QUEUE_PER_NODE;

	if (knob != BIP_KNOB_AUTO_COUNT)
		return knob;
	return q < SMALL_QUEUE_MIN ? SMALL_QUEUE_MIN
	       : q > SMALL_QUEUE_MAX ? SMALL_QUEUE_MAX
				     : (unsigned)q;
}

size_t bipfw_memory(const struct bipfw_config *cfg, size_t *per_peer)
{
	size_t n = (size_t)cfg->nnodes;

	/* A scoreboard, and a buffer for a small message coming in pieces. */
	*per_peer = cfg->window * sizeof(struct bipfw_txent) + BIP_SMALL_MAX;
	return sizeof(struct bipfw) +
	       n * (sizeof(struct bipfw_peer) + sizeof(int)) +
	       cfg->send_slots * sizeof(struct bipfw_send) +
	       cfg->long_tags * sizeof(struct bipfw_lrecv) +
	       rts_count(cfg) * sizeof(struct bipfw_rts) +
	       cfg->small_queue * sizeof(struct bipfw_small_entry) +
	       qbufs(cfg) * sizeof(uint8_t *) + hostif_bytes(cfg);
}

int bipfw_create(const struct bipfw_config *cfg, struct bipfw **fw_p)
{
	struct bipfw *fw;
	size_t n = (size_t)cfg->nnodes, nrts = rts_count(cfg);
	int rc = config_check(cfg);

	if (rc)
		return rc;
	fw = calloc(1, sizeof(*fw));
	if (!fw)
		return -BIP_ENOMEM;
	fw->cfg = *cfg;
	fw->kdev.fd = -1;
	fw->direct_wire = -1;
	bipfw_rx_words(fw);

	fw->peers = calloc(n, sizeof(*fw->peers));
	fw->tx_list = calloc(n, sizeof(*fw->tx_list));
	fw->slots = calloc(cfg->send_slots, sizeof(*fw->slots));
	fw->tags = calloc(cfg->long_tags, sizeof(*fw->tags));
	fw->rts = calloc(nrts, sizeof(*fw->rts));
	fw->smallq = aligned_alloc(sizeof(*fw->smallq),
				   cfg->small_queue * sizeof(*fw->smallq));
	if (fw->smallq)
		memset(fw->smallq, 0,
		       cfg->small_queue * sizeof(*fw->smallq));
	fw->nqbufs = qbufs(cfg);
	fw->qbuf_free = calloc(fw->nqbufs, sizeof(*fw->qbuf_free));
	fw->mem = malloc(hostif_bytes(cfg));
	if (!fw->peers || !fw->tx_list || !fw->slots || !fw->tags ||
	    !fw->rts || !fw->smallq || !fw->qbuf_free || !fw->mem)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		struct bipfw_peer *p = &fw->peers[i];

		p->wire = p->bulk = p->path = BIPFW_NO_WIRE;
		bipfw_rel_init(&p->tx, &p->rx, 0, cfg->retrans_min_us,
			       cfg->retrans_us);
		BIPFW_LIST_INIT(&p->fifo);
		BIPFW_LIST_INIT(&p->stream);
		BIPFW_LIST_INIT(&p->cts);
		BIPFW_LIST_INIT(&p->refused);
	}
	hostif_place(fw, fw->mem);
	fw->free_slot = BIPFW_NONE;
	for (unsigned i = cfg->send_slots; i-- > 0;)
		bipfw_slot_free(fw, i);
	for (unsigned i = 0; i < cfg->long_tags; i++)
		fw->tags[i].rts_head = fw->tags[i].rts_tail = BIPFW_NONE;
	fw->free_rts = BIPFW_NONE;
	for (size_t i = nrts; i-- > 0;)
		bipfw_rts_put(fw, (uint16_t)i);
	rc = fault_types(fw);
	if (rc) {
		bipfw_destroy(fw);
		return rc;
	}
	fw->fault_rng = ((uint64_t)cfg->fault_seed << 16 | (unsigned)cfg->node) *
			0x9e3779b97f4a7c15ull + 1;
	fw->now = bipfw_now_us();
	fw->next_liveness = fw->now + (uint64_t)cfg->liveness_ms * 1000;
	*fw_p = fw;
	return 0;
nomem:
	bipfw_destroy(fw);
	return -BIP_ENOMEM;
}

void bipfw_destroy(struct bipfw *fw)
{
	if (!fw)
		return;
	bipfw_wires_close(fw);
	for (int i = 0; fw->peers && i < fw->cfg.nnodes; i++) {
		free(fw->peers[i].board);
		free(fw->peers[i].small_part);
	}
	free(fw->peers);
	free(fw->tx_list);
	free(fw->slots);
	free(fw->tags);
	free(fw->rts);
	free(fw->smallq);
	free(fw->qbuf_free);
	if (fw->mem != fw->kdev.nicmem)
		free(fw->mem);
	bipfw_kdev_close(&fw->kdev);
	free(fw);
}

/* With the module, the host interface's buffers move to NIC memory, as
 * on a card whose memory the host writes through a mapping (and so that
 * the NIC program could run in the kernel or a daemon). Called before any
 * traffic; without the module, or without room, they stay. */
void bipfw_hostif_to_nicmem(struct bipfw *fw)
{
	size_t len = hostif_bytes(&fw->cfg);
	uint8_t *m = bipfw_kdev_nicmem(&fw->kdev, len);

	if (!m) {
		bip_info("kernel module: %s", fw->kdev.why);
		return;
	}
	free(fw->mem);
	fw->mem = m;
	hostif_place(fw, m);
}

/* The peer can no longer take part: everything waiting on it fails. */
void bipfw_peer_lost(struct bipfw *fw, int peer, enum bipfw_peer_state why)
{
	struct bipfw_peer *p = &fw->peers[peer];

	if (p->state != BIPFW_PEER_LIVE)
		return;
	p->state = (uint8_t)why;
	fw->cnt.peers_lost++;
	fw->others_lost += peer != fw->cfg.node;
	/* Not a warning: every wait on it returns -BIP_EPEERGONE, and a
	 * caller that lives on (MPI's fault tolerance) wants no noise. */
	if (why == BIPFW_PEER_GONE)
		bip_info("node %d is gone (its process ended without closing)",
			 peer);
	else
		bip_dbg("node %d %s", peer,
			why == BIPFW_PEER_CUT ? "is cut off" : "closed");

	for (unsigned i = 0; i < fw->cfg.send_slots; i++) {
		struct bipfw_send *s = &fw->slots[i];

		if (s->peer == peer && s->state != BIPFW_SEND_FREE &&
		    s->state != BIPFW_SEND_DONE)
			bipfw_send_complete(fw, i, -BIP_EPEERGONE);
	}
	for (unsigned t = 0; t < fw->cfg.long_tags; t++) {
		struct bipfw_lrecv *r = &fw->tags[t];
		uint16_t *link = &r->rts_head, last = BIPFW_NONE;

		if (r->state == BIPFW_LRECV_ACTIVE && r->src == peer) {
			r->state = BIPFW_LRECV_DONE;
			r->status = -BIP_EPEERGONE;
		}
		/* All its data is in; only the verdict cannot go. */
		if (r->state == BIPFW_LRECV_VERDICT && r->src == peer)
			r->state = BIPFW_LRECV_DONE;
		/* Forget what it announced on this tag. */
		while (*link != BIPFW_NONE) {
			struct bipfw_rts *m = &fw->rts[*link];
			uint16_t i = *link;

			if (m->src != peer) {
				last = i;
				link = &m->next;
				continue;
			}
			*link = m->next;
			bipfw_rts_put(fw, i);
		}
		r->rts_tail = last;
	}
	while (p->refused.head != BIPFW_NONE) {
		uint16_t i = p->refused.head;

		BIPFW_LIST_POP(&p->refused, fw->rts, next);
		bipfw_rts_put(fw, i);
	}
	p->discarding = false;
	BIPFW_LIST_INIT(&p->fifo);
	BIPFW_LIST_INIT(&p->stream);
	BIPFW_LIST_INIT(&p->cts);
	p->tx.una = p->tx.resend = p->tx.next;
}

/* When a lossy peer was last heard of: its last ack progress while our
 * packets wait for it, else its last packet; or its wire's answer to a
 * ping (the process is there, computing). */
static uint64_t heard_at(const struct bipfw *fw, int peer)
{
	const struct bipfw_port *w = bipfw_port_of(fw, peer);
	const struct bipfw_peer *p = &fw->peers[peer];
	uint64_t t = p->tx.una != p->tx.next ? p->tx.acked_at : p->rx_at, a;

	if (w->cls->answered_at) {
		a = w->cls->answered_at(w->ctx, peer);
		if (a > t)
			t = a;
	}
	return t < fw->now ? t : fw->now; /* our clock may lag a step */
}

/* Retransmission on lossy wires, and their dead peers. A peer silent for
 * a fifth of peer_timeout_ms is pinged, once per such fifth - silent: no
 * ack progress while packets wait for it, else no packet at all (a dead
 * peer must be found even when only a receive waits on it); dead is a
 * peer that stayed silent and answered no ping for peer_timeout_ms.
 * Returns the peers lost. */
static int lossy_timers(struct bipfw *fw)
{
	uint64_t dead_us = (uint64_t)fw->cfg.peer_timeout_ms * 1000;
	uint64_t ping_us = dead_us / 5;
	uint64_t wait_us = 2 * (uint64_t)fw->cfg.liveness_ms * 1000;
	/* Away longer than that (the host computed without polling): the
	 * silence was ours, and the peers' answers wait unread. A host
	 * blocked in bipfw_block is not away: it steps at least every
	 * liveness period (twice that, for a late wake-up), which may be
	 * longer than a ping period when the peer timeout is short. */
	bool away = fw->now - fw->timers_at >= (ping_us > wait_us ? ping_us
								   : wait_us);
	int lost = 0;

	fw->timers_at = fw->now;
	for (int i = 0; i < fw->cfg.nnodes; i++) {
		struct bipfw_peer *p = &fw->peers[i];
		const struct bipfw_port *w;
		uint64_t silent;

		if (!p->lossy || p->state != BIPFW_PEER_LIVE)
			continue;
		bipfw_rel_on_timer(&p->tx, fw->now);
		/* A timeout rolls back to the oldest unacknowledged packet. */
		if (p->tx.resend != p->tx.next)
			bipfw_tx_wake(fw, i);
		w = bipfw_port_of(fw, i);
		/* Without pings an idle peer cannot tell us it lives. */
		if (p->tx.una == p->tx.next && !w->cls->ping)
			continue;
		if (away)
			p->tx.acked_at = p->rx_at = fw->now;
		silent = fw->now - heard_at(fw, i);
		if (silent >= dead_us) {
			bip_info("node %d %s and answered no probe for %u ms",
				 i,
				 p->tx.una != p->tx.next
					 ? "acknowledged nothing"
					 : "sent nothing",
				 fw->cfg.peer_timeout_ms);
			bipfw_peer_lost(fw, i, BIPFW_PEER_GONE);
			lost++;
			continue;
		}
		if (silent >= ping_us && w->cls->ping &&
		    fw->now - p->pinged_at >= ping_us) {
			w->cls->ping(w->ctx, i);
			p->pinged_at = fw->now;
		}
	}
	return lost;
}

/* Returns how many peers were lost: an event the host must see, since it
 * completes whatever waited on them. */
static int check_liveness(struct bipfw *fw)
{
	int lost = 0;

	fw->next_liveness = fw->now + (uint64_t)fw->cfg.liveness_ms * 1000;
	for (int i = 0; i < fw->cfg.nnodes; i++)
		if (fw->peers[i].wire != BIPFW_NO_WIRE &&
		    fw->peers[i].state == BIPFW_PEER_LIVE) {
			const struct bipfw_port *w = bipfw_port_of(fw, i);
			int st = w->cls->peer_state(w->ctx, i);

			if (st != BIPFW_PEER_LIVE) {
				bipfw_peer_lost(fw, i, st);
				lost++;
			}
		}
	return lost;
}

/* A step that reads every wire but skip (-1: none). */
static int step(struct bipfw *fw, int skip)
{
	int rx, n;

	if (++fw->tick % CLOCK_EVERY == 0)
		fw->now = bipfw_now_us();
	rx = bipfw_rx_run(fw, RX_BUDGET, skip);
	/* Most steps find no peer owed anything and no batch to flush. */
	n = rx + (fw->tx_n || fw->batching ? bipfw_tx_run(fw) : 0);
	if (fw->any_lossy)
		n += lossy_timers(fw);
	/* Judge a peer only once its packets are all drained. */
	if (fw->now >= fw->next_liveness && rx < RX_BUDGET)
		n += check_liveness(fw);
	return n;
}

int bipfw_step(struct bipfw *fw)
{
	return step(fw, -1);
}

/* Rule: between lossless peers a poll runs no step unless one is due, and
 * bipfw_small_peek takes small messages straight from the link, the one
 * kind of packet that asks nothing of the event loop (no ack, no state):
 * a whole small message outside the sequence, from a live peer, whose ack
 * brings no news. A step is due for any other packet (bipfw_rx_direct or
 * a step meets it), for a packet to ourselves (the self wire is read by
 * steps only), while the transmit side or a lossy peer's timers have
 * work. A periodic turn comes every BIPFW_STEP_EVERY polls (or small
 * messages taken: turn_due) for the clock, which it reads, the peers'
 * liveness and the other wires; a light one (bipfw_drain's at its start,
 * and a direct take's, bipfw_rx_direct, for bipfw_drain and
 * bipfw_small_peek: each takes from the direct wire itself right after)
 * leaves the direct wire alone, so that a stream goes to the host straight
 * from the ring instead of through the queue. */
int bipfw_poll_turn(struct bipfw *fw, bool light)
{
	if (bipfw_step_needed(fw))
		goto step;
	/* The periodic turn, or a due one (bipfw_poll_just_count said which). */
	fw->turn_due = false;
	fw->now = bipfw_now_us();
	/* Light only while no liveness check is due: a peer is judged only
	 * once every packet it sent is read (step), the direct wire's too. */
	if (light && fw->now < fw->next_liveness)
		return step(fw, fw->direct_wire);
step:
	fw->step_due = fw->turn_due = false;
	return bipfw_step(fw);
}

int bipfw_poll(struct bipfw *fw)
{
	return bipfw_poll_just_count(fw) ? 0 : bipfw_poll_turn(fw, false);
}

/* Anything to transmit that waits for link space, a hold-off or an ack,
 * or a lossy peer's ack of what we sent (its resend timer). */
static bool tx_pending(const struct bipfw *fw)
{
	for (int i = 0; i < fw->cfg.nnodes; i++) {
		const struct bipfw_peer *p = &fw->peers[i];

		if (bipfw_tx_owes(p) ||
		    (p->lossy && p->state == BIPFW_PEER_LIVE &&
		     p->tx.una != p->tx.next))
			return true;
	}
	return false;
}

void bipfw_block(struct bipfw *fw, unsigned max_us)
{
	unsigned live_us = fw->cfg.liveness_ms * 1000;

	fw->now = bipfw_now_us();
	bipfw_tx_acks_all(fw);
	/* Nothing wakes us when link space frees up: poll instead. */
	if (tx_pending(fw) && max_us > BUSY_POLL_US)
		max_us = BUSY_POLL_US;
	if (max_us > live_us)
		max_us = live_us;
	bipfw_wires_wait(fw, max_us);
}

void bipfw_announce_close(struct bipfw *fw)
{
	for (int i = 0; i < fw->cfg.nnodes; i++) {
		struct bipfw_peer *p = &fw->peers[i];

		if (p->wire == BIPFW_NO_WIRE)
			continue;
		/* A CLOSE orders our close behind our packets. A lossless
		 * peer that got none learns of it from the wire instead
		 * (peer_state), and the wire touches nothing for it: shm
		 * reserves no ring page for a peer we never sent to. */
		if (p->state == BIPFW_PEER_LIVE && (p->lossy || p->sent)) {
			p->close_due = true;
			bipfw_tx_kick(fw, i, true);
		} else if (p->lossy && p->state == BIPFW_PEER_CLOSED) {
			/* Our last ack of its CLOSE may have been lost, and
			 * nobody answers its resends once we are gone. */
			p->rx.ack_urgent = true;
			bipfw_tx_wake(fw, i);
		}
	}
	bipfw_tx_acks_all(fw);
}

bool bipfw_close_pending(const struct bipfw *fw)
{
	/* A lossy peer has our CLOSE once it acknowledged it (or sent its
	 * own): until then it may be resending packets whose acks were lost,
	 * and its sends complete only on our ack. A lossless wire loses
	 * nothing: the CLOSE will arrive. */
	for (int i = 0; i < fw->cfg.nnodes; i++) {
		const struct bipfw_peer *p = &fw->peers[i];

		if (p->lossy && p->state == BIPFW_PEER_LIVE &&
		    (p->close_due || p->tx.una != p->tx.next))
			return true;
	}
	return false;
}

bool bipfw_sends_drained(const struct bipfw *fw)
{
	for (unsigned i = 0; i < fw->cfg.send_slots; i++)
		if (fw->slots[i].state != BIPFW_SEND_FREE &&
		    fw->slots[i].state != BIPFW_SEND_DONE)
			return false;
	/* A small message written straight into a lossless link has no
	 * slot and owes no ack (bipfw_tx_small): it is in the receiver's
	 * memory, but a receiver that has not read it may not even have
	 * attached us yet, which our close would then prevent. */
	for (int i = 0; i < fw->cfg.nnodes; i++) {
		const struct bipfw_peer *p = &fw->peers[i];
		const struct bipfw_port *w;

		if (p->lossy || !p->sent || p->state != BIPFW_PEER_LIVE ||
		    p->wire == BIPFW_NO_WIRE)
			continue;
		w = &fw->wires[p->wire];
		if (w->cls->read_all && !w->cls->read_all(w->ctx, i))
			return false;
	}
	return true;
}

int bipfw_live_peers(const struct bipfw *fw)
{
	const struct bipfw_peer *self = &fw->peers[fw->cfg.node];
	/* Counted, not looked up: every empty receive asks. */
	int n = fw->cfg.nnodes - 1 - fw->others_lost;

	/* Ourselves only while a packet of ours to us waits or is on its
	 * way: a process that waits sends nothing new. */
	return n + (self->tx.una != self->tx.next || fw->self_unseq ||
		    self->fifo.head != BIPFW_NONE ||
		    self->stream.head != BIPFW_NONE ||
		    self->cts.head != BIPFW_NONE);
}

bool bipfw_any_live(const struct bipfw *fw)
{
	/* Every empty poll asks: the other nodes first, a count. */
	return fw->cfg.nnodes - 1 > fw->others_lost || bipfw_live_peers(fw);
}

bool bipfw_peer_gone(const struct bipfw *fw, int peer)
{
	return fw->peers[peer].state != BIPFW_PEER_LIVE;
}

const struct bipfw_counters *bipfw_counters(const struct bipfw *fw)
{
	return &fw->cnt;
}
