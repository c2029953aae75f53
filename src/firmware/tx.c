/*
 * tx.c - the transmit half of the event loop: per peer, control replies
 * first (NACK, CTS), then resends after a rollback, then new packets from the
 * send FIFO and the long messages cleared to stream, packetized to the
 * configured packet size. A packet leaves as soon as it is built (immediate
 * sending): the receiver copies packet k while packet k+1 is written.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nic.h"

#define TX_BUDGET 32 /* packets per peer per step, so receiving keeps up */
#define NARROW_MAX 4096 /* wider small messages take a bulk wire */

static void build_hdr(const struct bipfw *fw, int peer,
		      const struct bipfw_txent *e, uint32_t seq,
		      struct bip_pkt_hdr *h)
{
	*h = (struct bip_pkt_hdr){
		.job_key = fw->cfg.job_key,
		.version = BIP_WIRE_VERSION,
		.type = e->type,
		.flags = e->flags,
		.src = (uint16_t)fw->cfg.node,
		.dst = (uint16_t)peer,
		.seq = seq,
		.len = e->len,
		.tag = e->tag,
		.msg_id = e->msg_id,
		.offset = e->offset,
		.addr = e->addr,
	};
}

/* Debug faults (BIP_FAULT_*), for lossy wires only: true with a chance of
 * pct percent for a packet of a type they hit, from a seeded generator so
 * that a failing run can be replayed. */
static bool fault(struct bipfw *fw, unsigned pct, unsigned type)
{
	if (!pct || !(fw->fault_mask & (1u << type)))
		return false;
	if ((bipfw_rand(&fw->fault_rng) >> 33) % 100 >= pct)
		return false;
	fw->cnt.faults_injected++;
	return true;
}

/* Write a packet into the room the wire reserved and commit it. The
 * payload (a send slot's copy, a long send's buffer) stays put until its
 * ack, so a wire that can send it from there (commit_ref) is spared the
 * copy; a wire that batches sends it at its next flush, before any ack. */
static int commit_copy(const struct bipfw_port *w, int peer,
		       const struct bip_pkt_hdr *h, const void *payload,
		       size_t trailing)
{
	struct bip_pkt_hdr *pkt = w->cls->reserve(w->ctx, peer, trailing);

	if (!pkt)
		return -BIP_EAGAIN;
	if (trailing && w->cls->commit_ref) {
		memcpy(pkt, h, sizeof(*h));
		w->cls->commit_ref(w->ctx, peer, pkt, payload, trailing);
		return 0;
	}
	if (trailing)
		bipfw_copy(pkt + 1, payload, trailing, trailing <= w->plain_max);
	/* Header last (bipfw_tx_small says why). */
	memcpy(pkt, h, sizeof(*h));
	w->cls->commit(w->ctx, peer, pkt, trailing);
	return 0;
}

/* Link transmit with the current ack piggybacked: reserve room on the
 * peer's wire, write the packet there, commit it. */
static int put_on_link(struct bipfw *fw, int peer, struct bip_pkt_hdr *h,
		       const void *payload)
{
	struct bipfw_peer *p = &fw->peers[peer];
	const struct bipfw_port *w = bipfw_path_of(fw, peer);
	size_t trailing = h->flags & BIP_PKTF_INLINE ? 0 : h->len;

	h->ack = p->rx.expected;
	if (p->lossy) {
		h->flags |= BIP_PKTF_CSUM;
		h->csum = bipfw_csum(payload, h->len);
		bipfw_hdr_seal(h);
	}
	if (!p->lossy || !fault(fw, fw->cfg.fault_drop_pct, h->type)) {
		int rc = commit_copy(w, peer, h, payload, trailing);

		if (rc)
			return rc;
		if (p->lossy && fault(fw, fw->cfg.fault_dup_pct, h->type))
			(void)commit_copy(w, peer, h, payload, trailing);
	}
	fw->cnt.packets_sent++;
	/* The self wire is read by steps only (bipfw_poll). */
	fw->step_due |= peer == fw->cfg.node;
	bipfw_rel_on_ack_sent(&p->rx);
	return 0;
}

int bipfw_tx_control(struct bipfw *fw, int peer, uint8_t type, uint16_t flags,
		     uint32_t seq)
{
	struct bipfw_txent e = { .type = type, .flags = flags };
	struct bip_pkt_hdr h;

	build_hdr(fw, peer, &e, seq, &h);
	return put_on_link(fw, peer, &h, NULL);
}

static const void *entry_payload(const struct bipfw *fw,
				 const struct bipfw_txent *e)
{
	if (e->type == BIP_PKT_SMALL)
		return fw->slots[e->slot].copy + e->offset;
	if (e->type == BIP_PKT_LONG_DATA && (e->flags & BIP_PKTF_PULL))
		return &fw->slots[e->slot].src_addr;
	if (e->type == BIP_PKT_LONG_CTS && e->len)
		return &fw->tags[e->tag].key;
	if (e->type == BIP_PKT_LONG_DATA && e->len)
		return fw->slots[e->slot].buf + e->offset;
	return NULL;
}

static int send_entry(struct bipfw *fw, int peer, const struct bipfw_txent *e,
		      uint32_t seq)
{
	const void *payload = entry_payload(fw, e);
	struct bip_pkt_hdr h;

	build_hdr(fw, peer, e, seq, &h);
	if (e->type == BIP_PKT_SMALL && e->offset == 0 && e->last &&
	    e->len <= bip_pkt_inline_max(fw->peers[peer].lossy)) {
		/* A tiny payload rides in the header's long-message fields. */
		memcpy(h.inline_data, payload, e->len);
		h.flags |= BIP_PKTF_INLINE;
		payload = h.inline_data;
	}
	return put_on_link(fw, peer, &h, payload);
}

/* Rule (lossless wires): a whole small message written straight into the
 * link is outside the sequence. Nothing can lose or reorder it, and the
 * link's room holds back a sender that runs ahead, so it needs no sequence
 * number, no window, no scoreboard entry and no ack: its send is over once
 * it is written, and the receiver owes nothing for it. Its header still
 * carries our ack of the peer's sequenced packets. */
int bipfw_tx_small(struct bipfw *fw, int peer, const struct iovec *iov,
		   int iovcnt, size_t len)
{
	struct bipfw_peer *p = &fw->peers[peer];
	const struct bipfw_port *w;
	struct bip_pkt_hdr *pkt, h;
	bool inl = len <= BIP_PKT_INLINE_MAX;

	/* Rule: a small message overtakes nothing queued for its peer. */
	if (p->lossy || p->fifo.head != BIPFW_NONE)
		return -BIP_EAGAIN;
	w = bipfw_port_of(fw, peer);
	if (len > w->chunk)
		return -BIP_EAGAIN;
	pkt = w->cls->reserve(w->ctx, peer, inl ? 0 : len);
	if (!pkt)
		return -BIP_EAGAIN;
	h = (struct bip_pkt_hdr){
		.job_key = fw->cfg.job_key,
		.version = BIP_WIRE_VERSION,
		.type = BIP_PKT_SMALL,
		.flags = BIP_PKTF_NOSEQ | (inl ? BIP_PKTF_INLINE : 0),
		.src = (uint16_t)fw->cfg.node,
		.dst = (uint16_t)peer,
		.ack = p->rx.expected,
		.len = (uint32_t)len,
	};
	/* Rule: the header goes into the link after the payload, right
	 * before the commit that stamps it. A receiver waiting for the
	 * record polls the header's line: written first, that line is taken
	 * from the poller twice, for the header and for the stamp, and the
	 * poller's reads in between hold the payload's stores back (raw BIP
	 * windows of 256 B 2.6 -> 4.6 GB/s, 1 KiB 5.4 -> 6.6 on an AMD Zen
	 * 4; MPI's 64 B 1.25 x, 256 B 1.11 x, 1 KiB 1.05 x). A tiny payload
	 * is gathered into the header before it goes. */
	bipfw_gather(inl ? h.inline_data : (uint8_t *)(pkt + 1), iov, iovcnt,
		     !inl && len <= w->plain_max);
	memcpy(pkt, &h, sizeof(h));
	w->cls->commit(w->ctx, peer, pkt, inl ? 0 : len);
	bipfw_rel_on_ack_sent(&p->rx);
	p->sent = true;
	if (peer == fw->cfg.node) {
		fw->self_unseq++;
		fw->step_due = true;
	}
	fw->cnt.packets_sent++;
	fw->cnt.small_sent++;
	return 0;
}

/* Long data goes by DMA when the wire has it and takes this message (its
 * own threshold); when it does not, the packet path always works. */
static void try_dma(struct bipfw *fw, int peer, struct bipfw_send *s)
{
	const struct bipfw_port *w = bipfw_port_of(fw, peer);

	if (!w->cls->dma_write || !s->raddr || !s->len ||
	    w->cls->dma_write(w->ctx, peer, s->raddr, s->rkey, s->buf, s->len))
		return;
	s->direct = true;
	fw->cnt.cma_transfers++;
}

/* A ready-mode message the peer's wire lets it read from our memory goes
 * as one packet naming its address: no CTS to wait for (ready mode has
 * none) and one copy, done by the receiver into the buffer it posted; its
 * verdict completes us once that copy is over.
 *
 * Between two processes, only while another long message to that peer is
 * in flight. A message alone finishes sooner through the rings, where both
 * processes copy at once (64 KiB one way in 7.8 us against 10.8 pulled, 1
 * MiB 68 against 102, on 2 cores here); several at once move more per
 * second when each process copies its own once (64 KiB windowed 1.26x,
 * 512 KiB 2x; bidirectional 1.5-2x). Our own messages are read whatever
 * is in flight: one process does both copies of the rings anyway. But a
 * receiver that chose packets (BIPFW_LONG_PACKETS) gets them, ours too:
 * with a core each the rings' copies overlap, and a stream of 1 MiB went
 * 1.5 x faster through them than read. */
static bool try_pull(struct bipfw *fw, int peer, struct bipfw_send *s)
{
	const struct bipfw_port *w = bipfw_port_of(fw, peer);

	if (s->pulled)
		return true;
	if (!s->ready || s->packets || !w->cls->pull_min ||
	    s->len < w->cls->pull_min(w->ctx, peer) ||
	    (w->cls->scope != BIPFW_SCOPE_SELF && fw->peers[peer].longs < 2))
		return false;
	s->pulled = true;
	s->src_addr = (uint64_t)(uintptr_t)s->buf;
	return true;
}

/* A peer with a bulk wire: a message wider than one packet of its own
 * wire, or than NARROW_MAX, goes by the bulk wire, whose kernel segments
 * the run (less cost per byte); the others by its own (lower latency).
 * Jumbo frames on eth cost more per byte than udp does: at MTU 9000 an
 * 8 KiB message took 10.3 us one way by one eth frame, 7.6 by udp; 4 KiB
 * took the same either way, 2 KiB 3.2 us by eth and 6.1 by udp. A run of
 * messages (the pieces of a wider one) counts as wide whatever their size.
 *
 * The path changes only while nothing is in flight: go-back-N drops a
 * packet that overtakes an earlier one, and two wires do not keep each
 * other's order. So a wide packet waits for the acks of what is in flight
 * on the own wire (a round trip, once per run), while a narrow one rides
 * along a bulk run rather than wait. Returns the wire the next packet
 * takes, or NULL: wait. */
static const struct bipfw_port *take_path(struct bipfw *fw,
					  struct bipfw_peer *p, bool wide)
{
	if (p->bulk != BIPFW_NO_WIRE) {
		if (p->tx.una == p->tx.next)
			p->path = wide ? p->bulk : p->wire;
		else if (wide && p->path != p->bulk)
			return NULL;
	}
	return &fw->wires[p->path];
}

/* Choose the next new packet for a peer into *e; returns false if none.
 * Order: CTS (a peer waits on it), then the FIFO, then long data. */
static bool next_packet(struct bipfw *fw, int peer, struct bipfw_txent *e)
{
	struct bipfw_peer *p = &fw->peers[peer];
	struct bipfw_send *s;
	uint16_t i;

	*e = (struct bipfw_txent){ .slot = BIPFW_NONE };
	if (p->cts.head != BIPFW_NONE) {
		struct bipfw_lrecv *r = &fw->tags[p->cts.head];

		(void)take_path(fw, p, false);
		e->type = BIP_PKT_LONG_CTS;
		e->tag = p->cts.head;
		e->msg_id = r->msg_id;
		e->offset = r->total;
		if (r->state == BIPFW_LRECV_VERDICT) {
			e->flags = BIP_PKTF_READY |
				   (r->status == -BIP_ETRUNC ? BIP_PKTF_TRUNC
				    : r->status == -BIP_ESYS ? BIP_PKTF_PULL
							     : 0);
			return true;
		}
		e->addr = (uint64_t)(uintptr_t)r->buf;
		e->flags = r->cts_flagged ? BIP_PKTF_TRUNC : 0;
		/* The key the buffer was exposed under, if any. */
		e->len = r->key ? sizeof(r->key) : 0;
		return true;
	}
	if (p->refused.head != BIPFW_NONE) {
		(void)take_path(fw, p, false);
		e->type = BIP_PKT_LONG_CTS;
		e->flags = BIP_PKTF_READY | BIP_PKTF_REFUSED;
		e->msg_id = fw->rts[p->refused.head].msg_id;
		return true;
	}
	if (p->fifo.head != BIPFW_NONE) {
		i = p->fifo.head;
		s = &fw->slots[i];
		e->slot = i;
		if (!s->is_long) {
			/* Wider than the wire's packet: in pieces. */
			bool wide = s->run || s->len > NARROW_MAX ||
				    s->len > bipfw_port_of(fw, peer)->chunk;
			const struct bipfw_port *w = take_path(fw, p, wide);
			size_t chunk;

			if (!w)
				return false;
			chunk = w->chunk;
			e->type = BIP_PKT_SMALL;
			e->offset = s->sent;
			e->len = (uint32_t)(s->len - s->sent < chunk
						    ? s->len - s->sent
						    : chunk);
			e->last = s->sent + e->len == s->len;
			e->flags = e->last ? 0 : BIP_PKTF_MORE;
		} else {
			(void)take_path(fw, p, false);
			e->type = BIP_PKT_LONG_RTS;
			e->tag = s->tag;
			e->msg_id = bipfw_msg_id(fw, i);
			e->offset = s->len;
		}
		return true;
	}
	if (p->stream.head != BIPFW_NONE) {
		const struct bipfw_port *w = take_path(fw, p, true);
		size_t chunk;

		if (!w)
			return false;
		i = p->stream.head;
		s = &fw->slots[i];
		if (!s->sent && !s->direct && !try_pull(fw, peer, s))
			try_dma(fw, peer, s);
		chunk = s->direct ? 0
			: s->pulled ? sizeof(s->src_addr)
				    : s->len - s->sent;
		if (chunk > w->chunk)
			chunk = w->chunk;
		e->slot = i;
		e->type = BIP_PKT_LONG_DATA;
		e->flags = s->direct ? BIP_PKTF_DIRECT
			   : s->pulled ? BIP_PKTF_PULL : 0;
		e->tag = s->rtag;
		e->msg_id = bipfw_msg_id(fw, i);
		e->offset = s->sent;
		e->len = (uint32_t)chunk;
		if (s->ready) {
			/* No RTS went before: every packet names the total. */
			e->flags |= BIP_PKTF_READY;
			e->addr = s->len;
		}
		e->last = s->direct || s->pulled || s->sent + chunk == s->len;
		return true;
	}
	if (p->close_due) {
		/* Sequenced, so it is resent until acknowledged: it carries
		 * our ack of the peer's last packets. */
		(void)take_path(fw, p, false);
		e->type = BIP_PKT_CLOSE;
		return true;
	}
	return false;
}

/* The packet left: advance the source it came from. */
static void packet_left(struct bipfw *fw, int peer, const struct bipfw_txent *e)
{
	struct bipfw_peer *p = &fw->peers[peer];
	struct bipfw_send *s = e->slot != BIPFW_NONE ? &fw->slots[e->slot]
						      : NULL;

	p->sent = true;
	switch (e->type) {
	case BIP_PKT_LONG_CTS: {
		struct bipfw_lrecv *r = &fw->tags[e->tag];
		uint16_t i = p->refused.head;

		if (e->flags & BIP_PKTF_REFUSED) {
			BIPFW_LIST_POP(&p->refused, fw->rts, next);
			bipfw_rts_put(fw, i);
			break;
		}
		BIPFW_LIST_POP(&p->cts, fw->tags, cts_next);
		/* A cancelling CTS, or a ready message's verdict, completes
		 * the receive. */
		if (r->cts_flagged || r->state == BIPFW_LRECV_VERDICT)
			r->state = BIPFW_LRECV_DONE;
		break;
	}
	case BIP_PKT_SMALL:
		s->sent += e->len;
		if (e->last) {
			BIPFW_LIST_POP(&p->fifo, fw->slots, next);
			s->state = BIPFW_SEND_WAIT_ACK;
		}
		break;
	case BIP_PKT_LONG_RTS:
		BIPFW_LIST_POP(&p->fifo, fw->slots, next);
		s->state = BIPFW_SEND_WAIT_CTS;
		break;
	case BIP_PKT_LONG_DATA:
		s->sent = e->last ? s->len : s->sent + e->len;
		if (e->last) {
			BIPFW_LIST_POP(&p->stream, fw->slots, next);
			s->state = BIPFW_SEND_WAIT_ACK;
		}
		break;
	case BIP_PKT_CLOSE:
		p->close_due = false;
		break;
	}
}

/* On a lossy wire, the packet that fills the window asks for its ack at
 * once rather than after the receiver's ack delay: the sender waits on it. */
static void ask_ack_if_last(const struct bipfw_peer *p,
			    struct bipfw_txent *e, uint32_t seq, uint32_t w)
{
	if (p->lossy && seq + 1 - p->tx.una >= w)
		e->flags |= BIP_PKTF_ACKREQ;
}

static int tx_peer(struct bipfw *fw, int peer)
{
	struct bipfw_peer *p = &fw->peers[peer];
	struct bipfw_rel_tx *tx = &p->tx;
	uint32_t w = p->lossy ? bipfw_rel_limit(tx, fw->cfg.window)
			      : fw->cfg.window;
	int n = 0;

	if (p->rx.nack_due &&
	    bipfw_tx_control(fw, peer, BIP_PKT_NACK, p->rx.nack_flags,
			     p->rx.nack_seq) == 0) {
		p->rx.nack_due = false;
		fw->cnt.nacks_sent++;
		n++;
	}
	if (!bipfw_rel_may_send(tx, fw->now))
		return n;
	/* Go-back-N: after a rollback, resend in order before anything new,
	 * as much as the window allows. */
	while (tx->resend != tx->next && tx->resend - tx->una < w &&
	       n < TX_BUDGET) {
		struct bipfw_txent *e = bipfw_board(fw, p, tx->resend);

		ask_ack_if_last(p, e, tx->resend, w);
		if (send_entry(fw, peer, e, tx->resend))
			return n;
		tx->resend++;
		fw->cnt.retransmits++;
		n++;
	}
	while (n < TX_BUDGET && !bipfw_rel_window_full(tx, w)) {
		struct bipfw_txent ent, *e;

		if (!next_packet(fw, peer, &ent))
			break;
		/* A peer never sent to costs no scoreboard (memory per peer:
		 * most of a large job's pairs never talk); without memory,
		 * the packet waits for a later turn. */
		if (!p->board &&
		    !(p->board = calloc(fw->cfg.window, sizeof(*p->board))))
			break;
		e = bipfw_board(fw, p, tx->next);
		*e = ent;
		ask_ack_if_last(p, e, tx->next, w);
		if (send_entry(fw, peer, e, tx->next))
			break;
		bipfw_rel_on_send_new(tx, fw->now);
		packet_left(fw, peer, e);
		n++;
	}
	return n;
}

void bipfw_tx_flush(struct bipfw *fw)
{
	for (unsigned i = 0; i < fw->nwires; i++)
		if (fw->wires[i].cls->flush)
			fw->wires[i].cls->flush(fw->wires[i].ctx);
}

void bipfw_tx_kick(struct bipfw *fw, int peer, bool flush)
{
	const struct bipfw_peer *p = &fw->peers[peer];

	if (p->state != BIPFW_PEER_LIVE || p->wire == BIPFW_NO_WIRE)
		return;
	bipfw_tx_wake(fw, peer);
	/* Without flush, more follow: what was just posted starts a run. */
	if (!flush && p->fifo.tail != BIPFW_NONE &&
	    !fw->slots[p->fifo.tail].is_long)
		fw->slots[p->fifo.tail].run = true;
	tx_peer(fw, peer);
	if (flush && bipfw_path_of(fw, peer)->cls->flush)
		bipfw_tx_flush(fw);
}

static void tx_ack(struct bipfw *fw, int peer)
{
	if (bipfw_tx_control(fw, peer, BIP_PKT_ACK, 0, 0) == 0)
		fw->cnt.acks_sent++;
}

/* Acks go to live peers, and to peers that closed on a lossy wire: they
 * resend their CLOSE until we acknowledge it. */
static bool acks_go_to(const struct bipfw_peer *p)
{
	return p->wire != BIPFW_NO_WIRE &&
	       (p->state == BIPFW_PEER_LIVE ||
		(p->lossy && p->state == BIPFW_PEER_CLOSED));
}

/* Whether tx_peer has a packet to send p: one that waits for the link, a
 * window or a hold-off. */
static bool tx_work(const struct bipfw_peer *p)
{
	return p->fifo.head != BIPFW_NONE || p->stream.head != BIPFW_NONE ||
	       p->cts.head != BIPFW_NONE || p->refused.head != BIPFW_NONE ||
	       p->close_due || p->rx.nack_due || p->tx.resend != p->tx.next;
}

bool bipfw_tx_owes(const struct bipfw_peer *p)
{
	return acks_go_to(p) &&
	       (tx_work(p) || p->rx.unacked || p->rx.ack_urgent);
}

/* Every peer of the transmit list once, starting one further each time
 * (fairness); a bare ACK last, for acks that no packet of this pass
 * carried. Then the list keeps only the peers still owed something. */
int bipfw_tx_run(struct bipfw *fw)
{
	unsigned nl = fw->tx_n, kept = 0;
	unsigned k0 = fw->rr = fw->rr + 1 >= nl ? 0 : fw->rr + 1;
	int n = 0;

	for (unsigned k = 0, i = k0; k < nl; k++, i = i + 1 == nl ? 0 : i + 1) {
		int peer = fw->tx_list[i];
		struct bipfw_peer *p = &fw->peers[peer];

		if (!acks_go_to(p))
			continue;
		/* A peer that is owed only an ack (after each packet from it,
		 * until an answer carries the ack) has no packet to look for. */
		if (p->state == BIPFW_PEER_LIVE && tx_work(p))
			n += tx_peer(fw, peer);
		if (bipfw_rel_ack_due(&p->rx, fw->now, fw->cfg.ack_every,
				      fw->cfg.ack_delay_us))
			tx_ack(fw, peer);
	}
	for (unsigned k = 0; k < fw->tx_n; k++) {
		int peer = fw->tx_list[k];

		if (bipfw_tx_owes(&fw->peers[peer]))
			fw->tx_list[kept++] = peer;
		else
			fw->peers[peer].tx_listed = false;
	}
	fw->tx_n = kept;
	bipfw_tx_flush(fw);
	return n;
}

void bipfw_tx_acks_all(struct bipfw *fw)
{
	for (int peer = 0; peer < fw->cfg.nnodes; peer++) {
		struct bipfw_peer *p = &fw->peers[peer];

		if (acks_go_to(p) && (p->rx.unacked || p->rx.ack_urgent))
			tx_ack(fw, peer);
	}
	bipfw_tx_flush(fw);
}
