/*
 * rx.c - the receive half of the event loop: validate each packet from the
 * link, apply the reliability rules, and deliver what is in sequence to the
 * host interface (small queue, long receives, send slots).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nic.h"

/* What delivering a packet to the host came to. */
enum deliver_result {
	DELIVERED,
	NO_BUFFER, /* lossy: drop and NACK busy, the sender will resend;
		    * lossless: hold the packet where it is */
};

/* src, a node of the job, may send by wire. */
static bool src_valid(const struct bipfw *fw, unsigned wire, unsigned src)
{
	const struct bipfw_peer *p = &fw->peers[src];

	/* Our own packets come by the self wire, which carries nothing else. */
	if ((src == (unsigned)fw->cfg.node) !=
	    (fw->wires[wire].cls->scope == BIPFW_SCOPE_SELF))
		return false;
	/* A connected peer speaks only on its own wires. */
	return p->wire == BIPFW_NO_WIRE || p->wire == wire || p->bulk == wire;
}

/* What every packet of this job must be, whatever its flags: of a known
 * type, for us, within the packet size, from a node that speaks on this
 * wire. */
static bool hdr_valid(const struct bipfw *fw, unsigned wire,
		      const struct bip_pkt_hdr *h)
{
	const struct bipfw_config *c = &fw->cfg;

	if (h->version != BIP_WIRE_VERSION || h->type == BIP_PKT_NONE ||
	    h->type >= BIP_PKT_NTYPES || h->dst != c->node ||
	    h->src >= c->nnodes || h->len > c->packet_size)
		return false;
	return src_valid(fw, wire, h->src);
}

/* The start of a header as two words, however the fields lie in them. */
static void hdr_words(const struct bip_pkt_hdr *h, uint64_t w[2])
{
	memcpy(w, h, 2 * sizeof(*w));
}

void bipfw_rx_words(struct bipfw *fw)
{
	struct bip_pkt_hdr h = {
		.job_key = fw->cfg.job_key,
		.version = BIP_WIRE_VERSION,
		.type = BIP_PKT_SMALL,
		.flags = BIP_PKTF_NOSEQ,
		.dst = (uint16_t)fw->cfg.node,
	};
	uint64_t w[2];

	hdr_words(&h, w);
	fw->unseq_w0[0] = w[0];
	fw->unseq_w1 = w[1];
	h.flags |= BIP_PKTF_INLINE;
	hdr_words(&h, w);
	fw->unseq_w0[1] = w[0];
	h = (struct bip_pkt_hdr){ .src = UINT16_MAX };
	hdr_words(&h, w);
	fw->unseq_src = w[1];
}

/* Whether h is a whole small message outside the sequence, valid, on a
 * lossless wire: flags NOSEQ and perhaps INLINE, nothing else. What
 * packet_valid would say of such a packet, in fewer steps (bipfw_rx_direct
 * takes only these); false for anything else, valid or not. Job key,
 * version, type, flags, destination and sequence number (0) are one
 * compare of the words they fill (bipfw_rx_words); the rest is
 * hdr_valid's. */
static inline __attribute__((always_inline)) bool
small_unseq_valid(const struct bipfw *fw, unsigned wire,
		  const struct bip_pkt_hdr *h, size_t avail)
{
	uint64_t w[2];

	hdr_words(h, w);
	if ((w[0] != fw->unseq_w0[0] && w[0] != fw->unseq_w0[1]) ||
	    (w[1] & ~fw->unseq_src) != fw->unseq_w1 ||
	    fw->wires[wire].lossy || h->src >= fw->cfg.nnodes ||
	    h->len > fw->cfg.packet_size || !src_valid(fw, wire, h->src))
		return false;
	return h->flags & BIP_PKTF_INLINE
		       ? h->len <= BIP_PKT_INLINE_MAX
		       : !h->offset && h->len <= avail &&
				 h->len <= BIP_SMALL_MAX;
}

/* A malformed packet is counted and dropped; it never reaches the host.
 * Drops are logged at debug level only: a peer must not be able to flood
 * our stderr (the counters say how many, BIP_LOG=debug says which). */
static bool packet_valid(struct bipfw *fw, unsigned wire,
			 const struct bip_pkt_hdr *h, const void *payload,
			 size_t avail)
{
	/* A lossy wire corrupts: both checksums must be there and right. */
	if (fw->wires[wire].lossy &&
	    (!bipfw_hdr_intact(h) || !(h->flags & BIP_PKTF_CSUM)))
		goto bad;
	if (h->job_key != fw->cfg.job_key) {
		fw->cnt.dropped_foreign++;
		bip_dbg("dropped a packet of another job (key %08x)",
			h->job_key);
		return false;
	}
	if (!hdr_valid(fw, wire, h))
		goto bad;
	/* (An inline payload lies where a piece's offset would be.) */
	if (h->type == BIP_PKT_SMALL && !(h->flags & BIP_PKTF_INLINE) &&
	    (h->offset > BIP_SMALL_MAX || h->len > BIP_SMALL_MAX - h->offset))
		goto bad;
	if ((h->flags & BIP_PKTF_MORE) &&
	    (h->type != BIP_PKT_SMALL || (h->flags & BIP_PKTF_INLINE) ||
	     !h->len))
		goto bad;
	if (!(h->flags & BIP_PKTF_INLINE) && h->len > avail)
		goto bad; /* claims more than the link carried */
	if ((h->flags & BIP_PKTF_INLINE) &&
	    (h->type != BIP_PKT_SMALL ||
	     h->len > bip_pkt_inline_max(fw->wires[wire].lossy)))
		goto bad;
	if ((h->flags & BIP_PKTF_READY) &&
	    ((h->type != BIP_PKT_LONG_DATA && h->type != BIP_PKT_LONG_CTS) ||
	     (h->flags & BIP_PKTF_DIRECT)))
		goto bad;
	if ((h->flags & BIP_PKTF_REFUSED) &&
	    (h->type != BIP_PKT_LONG_CTS || !(h->flags & BIP_PKTF_READY)))
		goto bad;
	/* A pull is a whole ready-mode message: its address, nothing more. */
	if ((h->flags & BIP_PKTF_PULL) &&
	    (!(h->flags & BIP_PKTF_READY) || (h->flags & BIP_PKTF_REFUSED) ||
	     (h->type != BIP_PKT_LONG_DATA && h->type != BIP_PKT_LONG_CTS) ||
	     (h->type == BIP_PKT_LONG_DATA &&
	      (h->offset || h->len != sizeof(uint64_t)))))
		goto bad;
	/* A CTS carries nothing, or the key its receive is exposed under. */
	if (h->type == BIP_PKT_LONG_CTS && h->len &&
	    (h->len != sizeof(uint64_t) || (h->flags & BIP_PKTF_READY)))
		goto bad;
	if ((h->flags & BIP_PKTF_ACKREQ) &&
	    (h->type == BIP_PKT_ACK || h->type == BIP_PKT_NACK))
		goto bad;
	/* Outside the sequence: only a whole small message, and only where
	 * nothing is lost (a lossy wire's packets all need their number). */
	if ((h->flags & BIP_PKTF_NOSEQ) &&
	    (fw->wires[wire].lossy || h->type != BIP_PKT_SMALL ||
	     (h->flags & (BIP_PKTF_MORE | BIP_PKTF_ACKREQ)) || h->seq))
		goto bad;
	if ((h->flags & BIP_PKTF_CSUM) && bipfw_csum(payload, h->len) != h->csum)
		goto bad;
	return true;
bad:
	fw->cnt.dropped_bad++;
	bip_dbg("dropped a malformed packet (%s from %u, len %u)",
		bip_pkt_name(h->type), h->src, h->len);
	return false;
}

/* A piece of a small message (BIP_PKTF_MORE) waits in the peer's part
 * buffer, allocated the first time: pieces come in order, the first at
 * offset 0. */
static enum deliver_result stage_small(struct bipfw *fw, int src,
				       struct bipfw_peer *p,
				       const struct bip_pkt_hdr *h,
				       const void *payload)
{
	if (h->offset == 0)
		p->small_fill = 0;
	if (h->offset != p->small_fill) {
		fw->cnt.dropped_bad++;
		bip_dbg("small message piece from node %d at %llu, expected "
			"%u", src, (unsigned long long)h->offset,
			p->small_fill);
		return DELIVERED;
	}
	if (!p->small_part && !(p->small_part = malloc(BIP_SMALL_MAX)))
		return NO_BUFFER;
	memcpy(p->small_part + h->offset, payload, h->len);
	p->small_fill += h->len;
	return DELIVERED;
}

/* A lent message's lines are still in the sender's cache: ask for them
 * all now, so that the host's first look (its header) and its copy do not
 * wait for them one after the other. Beyond PREFETCH_MAX, the copy's own
 * stream takes over. */
#define PREFETCH_MAX 2048
#define PREFETCH_STEP 64 /* a cache line */

static void prefetch_lent(const uint8_t *p, size_t len)
{
	for (size_t at = 0; at < len && at < PREFETCH_MAX; at += PREFETCH_STEP)
		__builtin_prefetch(p + at);
}

/* A whole small message goes to the host: the queue has room again (an
 * overflow episode is over), no pieces wait. */
static inline void small_taken(struct bipfw *fw, struct bipfw_peer *p)
{
	fw->in_overflow = false;
	p->small_fill = 0;
	fw->cnt.small_received++;
}

/* A whole small message, or the last piece of one after have bytes of
 * pieces, into e (the queue's, or fw->direct): lent where it lies on its
 * wire (lend: the wire's index + 1), or copied into to. */
static inline void entry_fill(struct bipfw *fw, struct bipfw_small_entry *e,
		       int src, struct bipfw_peer *p,
		       const struct bip_pkt_hdr *h, const void *payload,
		       size_t have, uint8_t lend, uint8_t *to)
{
	small_taken(fw, p);
	e->src = (uint16_t)src;
	e->len = (uint32_t)(have + h->len);
	if (lend) {
		/* One copy less. */
		e->data = payload;
		e->kept = lend;
		fw->cnt.small_in_place++;
		prefetch_lent(payload, h->len);
	} else {
		if (have)
			memcpy(to, p->small_part, have);
		bip_copy(to + have, payload, h->len);
		e->data = to;
	}
}

/* A whole small message, or the last piece of one, goes to the queue
 * with the pieces before it; a full queue refuses it and keeps them. */
static enum deliver_result deliver_small(struct bipfw *fw, int src,
					 struct bipfw_peer *p,
					 const struct bip_pkt_hdr *h,
					 const void *payload)
{
	struct bipfw_small_entry *e;
	unsigned i;
	size_t have = h->flags & BIP_PKTF_INLINE ? 0 : (size_t)h->offset;
	/* Whole, on a wire that keeps it where it is, the host reads it
	 * there; else it is copied, into a buffer past the inline bytes. */
	bool lend = !have && fw->rx_lend;
	bool needs_buf = !lend && have + h->len > BIP_PKT_INLINE_MAX;

	if (have && (!p->small_part || have != p->small_fill)) {
		fw->cnt.dropped_bad++;
		bip_dbg("last piece of a small message from node %d at %zu, "
			"expected %u", src, have, p->small_fill);
		return DELIVERED;
	}
	/* Overflow (a full queue, or all its buffers holding copies):
	 * reported to the host once per episode. */
	if (fw->sq_count == fw->cfg.small_queue ||
	    (needs_buf && !fw->nqbuf_free)) {
		fw->cnt.small_overflows++;
		if (!fw->in_overflow) {
			fw->in_overflow = true;
			fw->pending_error = -BIP_EOVERFLOW;
			bip_info("small-message queue full (%u, %u buffers); "
				 "node %d waits",
				 fw->cfg.small_queue, fw->nqbufs, src);
		}
		return NO_BUFFER;
	}
	/* The tail wraps by a compare, not a division (any queue size). */
	i = fw->sq_head + fw->sq_count;
	e = &fw->smallq[i >= fw->cfg.small_queue ? i - fw->cfg.small_queue : i];
	entry_fill(fw, e, src, p, h, payload, have, lend ? fw->rx_lend : 0,
		   lend ? NULL : needs_buf ? (e->buf = bipfw_qbuf_get(fw))
				   : e->inl);
	/* rx_wire tells the wire it lends the payload. */
	if (lend)
		fw->rx_lent = e;
	fw->sq_count++;
	return DELIVERED;
}

static enum deliver_result deliver_rts(struct bipfw *fw, int src,
				       const struct bip_pkt_hdr *h)
{
	struct bipfw_lrecv *r;
	struct bipfw_rts *m;
	uint16_t i;

	if (h->tag >= fw->cfg.long_tags) {
		bip_dbg("node %d announced a long message on tag %u, beyond "
			 "%u tags; dropped",
			 src, h->tag, fw->cfg.long_tags);
		fw->cnt.dropped_bad++;
		return DELIVERED;
	}
	i = bipfw_rts_get(fw);
	if (i == BIPFW_NONE)
		return NO_BUFFER;
	m = &fw->rts[i];
	m->src = (uint16_t)src;
	m->msg_id = h->msg_id;
	m->total = h->offset;
	r = &fw->tags[h->tag];
	/* Announced messages on a tag are matched in arrival order. */
	m->next = BIPFW_NONE;
	if (r->rts_tail == BIPFW_NONE)
		r->rts_head = i;
	else
		fw->rts[r->rts_tail].next = i;
	r->rts_tail = i;
	bipfw_match_tag(fw, h->tag);
	return DELIVERED;
}

/* The receiver's verdict on a ready-mode message: the send completes once
 * it is in and every packet is acknowledged, whichever comes last (before
 * that, a resend may still read the slot's buffer). */
static void deliver_verdict(struct bipfw *fw, int src, unsigned slot,
			    const struct bip_pkt_hdr *h)
{
	struct bipfw_send *s = &fw->slots[slot];
	int status = h->flags & BIP_PKTF_REFUSED ? -BIP_ENOTREADY
		     : h->flags & BIP_PKTF_TRUNC ? -BIP_ETRUNC
		     : h->flags & BIP_PKTF_PULL  ? -BIP_ESYS
						 : 0;

	if (!s->ready || s->fin || s->peer != src ||
	    ((h->flags & BIP_PKTF_PULL) && !s->pulled) ||
	    h->msg_id != bipfw_msg_id(fw, slot) ||
	    (s->state != BIPFW_SEND_STREAM && s->state != BIPFW_SEND_WAIT_ACK &&
	     s->state != BIPFW_SEND_WAIT_FIN)) {
		fw->cnt.dropped_bad++;
		bip_dbg("stale verdict from node %d for message %u", src,
			 h->msg_id);
		return;
	}
	if (status == -BIP_ENOTREADY)
		bip_info("node %d had no receive posted for ready-mode "
			 "message %u", src, h->msg_id);
	if (status == -BIP_ESYS)
		bip_warn("node %d could not read ready-mode message %u from "
			 "our memory (BIP_SHM_PULL_MIN=never avoids it)", src,
			 h->msg_id);
	if (s->state == BIPFW_SEND_WAIT_FIN) {
		bipfw_send_complete(fw, slot, status);
		return;
	}
	s->fin = true;
	s->status = status;
}

static void deliver_cts(struct bipfw *fw, int src, const struct bip_pkt_hdr *h,
			const void *payload)
{
	unsigned slot = h->msg_id % fw->cfg.send_slots;
	struct bipfw_send *s = &fw->slots[slot];

	if (h->flags & BIP_PKTF_READY) {
		deliver_verdict(fw, src, slot, h);
		return;
	}
	if (s->state != BIPFW_SEND_WAIT_CTS || s->peer != src ||
	    h->msg_id != bipfw_msg_id(fw, slot)) {
		fw->cnt.dropped_bad++;
		bip_dbg("stale CTS from node %d for message %u", src,
			 h->msg_id);
		return;
	}
	if (h->flags & BIP_PKTF_TRUNC) {
		bipfw_send_complete(fw, slot, -BIP_ETRUNC);
		return;
	}
	s->state = BIPFW_SEND_STREAM;
	s->rtag = h->tag;
	s->raddr = h->addr;
	s->rkey = 0;
	if (h->len == sizeof(s->rkey))
		memcpy(&s->rkey, payload, sizeof(s->rkey));
	BIPFW_LIST_PUSH(&fw->peers[src].stream, fw->slots, next, slot);
}

/* How the first packet of a ready-mode message fared. */
enum ready_start {
	READY_TAKEN,   /* a posted receive took it: the data goes there */
	READY_REFUSED, /* none was posted: the message is dropped */
	READY_NO_ROOM, /* no entry to owe the refusal in: NACK, resend */
};

/* The first packet of a ready-mode message is its announcement: it takes
 * the receive posted on its tag. With none, the message is refused - not
 * held back, since what the receiver waits for may come after it on this
 * link - and the sender is told so. A message larger than the receive
 * fills it and fails with -BIP_ETRUNC. */
static enum ready_start start_ready(struct bipfw *fw, int src,
				    struct bipfw_peer *p,
				    struct bipfw_lrecv *r,
				    const struct bip_pkt_hdr *h)
{
	uint16_t i;

	if (r->state == BIPFW_LRECV_POSTED) {
		r->state = BIPFW_LRECV_ACTIVE;
		r->ready = true;
		r->cts_flagged = false;
		r->src = (uint16_t)src;
		r->msg_id = h->msg_id;
		r->total = h->addr;
		r->received = 0;
		if (r->total > r->cap) {
			bip_info("ready-mode message of %zu bytes from node "
				 "%d on tag %u exceeds the posted %zu bytes",
				 r->total, src, h->tag, r->cap);
			r->status = -BIP_ETRUNC;
		}
		return READY_TAKEN;
	}
	i = bipfw_rts_get(fw);
	if (i == BIPFW_NONE)
		return READY_NO_ROOM;
	bip_info("ready-mode message from node %d on tag %u refused: no "
		 "receive posted", src, h->tag);
	fw->rts[i].src = (uint16_t)src;
	fw->rts[i].msg_id = h->msg_id;
	BIPFW_LIST_PUSH(&p->refused, fw->rts, next, i);
	/* Skip its other packets, up to its last one and no further: a later
	 * message may carry the same id. A pull has no others. */
	p->discard_msg = h->msg_id;
	p->discard_end = h->addr;
	p->discarding = !(h->flags & BIP_PKTF_PULL) && h->len < h->addr;
	return READY_REFUSED;
}

/* All data of a long message is in. */
static void long_complete(struct bipfw *fw, struct bipfw_peer *p,
			  struct bipfw_lrecv *r, uint32_t tag)
{
	if (!r->status)
		fw->cnt.long_received++;
	if (r->ready) {
		/* Its verdict completes the sender and, once sent, us. */
		r->state = BIPFW_LRECV_VERDICT;
		BIPFW_LIST_PUSH(&p->cts, fw->tags, cts_next, tag);
		return;
	}
	r->state = BIPFW_LRECV_DONE;
	/* The sender's request completes on our ack: send it now. */
	p->rx.ack_urgent = true;
}

/* A pulled message, taken by the receive r: read it from the sender's
 * memory, no further than the receive's capacity (a larger one fails with
 * -BIP_ETRUNC, as a pushed one does), and answer with the verdict, which
 * completes the sender. The address is the sender's own, handed only to
 * the kernel, which checks it; a read that fails fails both ends. */
static void deliver_pull(struct bipfw *fw, int src, struct bipfw_peer *p,
			 struct bipfw_lrecv *r, const struct bip_pkt_hdr *h,
			 const void *payload)
{
	uint64_t addr;
	int rc;

	if (!r || r->state != BIPFW_LRECV_ACTIVE || r->src != src ||
	    r->msg_id != h->msg_id || r->received) {
		fw->cnt.dropped_bad++;
		bip_dbg("unexpected pull from node %d (tag %u)", src, h->tag);
		return;
	}
	memcpy(&addr, payload, sizeof(addr));
	rc = bipfw_rma(fw, src, r->buf, addr,
		       r->total < r->cap ? r->total : r->cap, false);
	/* Our side cannot read it (attach refused since): it fails as a
	 * refused read does. */
	if (rc)
		r->status = rc == -BIP_EAGAIN ? -BIP_ESYS : rc;
	r->received = r->total;
	long_complete(fw, p, r, h->tag);
}

static enum deliver_result deliver_data(struct bipfw *fw, int src,
					struct bipfw_peer *p,
					const struct bip_pkt_hdr *h,
					const void *payload)
{
	struct bipfw_lrecv *r = h->tag < fw->cfg.long_tags ? &fw->tags[h->tag]
							   : NULL;

	if (h->flags & BIP_PKTF_READY) {
		/* Packets of one message to a peer are contiguous. */
		if (p->discarding && h->msg_id == p->discard_msg) {
			p->discarding = h->offset < p->discard_end &&
					h->len < p->discard_end - h->offset;
			return DELIVERED;
		}
		p->discarding = false;
		if (r && h->offset == 0) {
			switch (start_ready(fw, src, p, r, h)) {
			case READY_TAKEN:
				break;
			case READY_REFUSED:
				return DELIVERED;
			case READY_NO_ROOM:
				return NO_BUFFER;
			}
		}
		if (h->flags & BIP_PKTF_PULL) {
			deliver_pull(fw, src, p, r, h, payload);
			return DELIVERED;
		}
	}
	/* Written to avoid overflow: offset and len come from the wire. The
	 * link is in order, so data comes in order: each packet starts where
	 * the last one ended. A receive being cancelled (cts_flagged) takes no
	 * data at all. */
	if (!r || r->state != BIPFW_LRECV_ACTIVE || r->src != src ||
	    r->msg_id != h->msg_id || r->cts_flagged ||
	    h->offset != r->received || h->len > r->total - h->offset) {
		fw->cnt.dropped_bad++;
		bip_dbg("unexpected long data from node %d (tag %u)", src,
			 h->tag);
		return DELIVERED;
	}
	if (h->flags & BIP_PKTF_DIRECT) {
		/* The data was written by DMA before this packet was sent. */
		r->received = r->total;
	} else {
		/* Only a truncated ready-mode message reaches beyond cap. */
		if (h->offset < r->cap)
			bip_copy(r->buf + h->offset, payload,
				 h->len < r->cap - h->offset
					 ? h->len
					 : r->cap - h->offset);
		r->received += h->len;
	}
	if (r->received == r->total)
		long_complete(fw, p, r, h->tag);
	return DELIVERED;
}

static enum deliver_result deliver(struct bipfw *fw, int src,
				   struct bipfw_peer *p,
				   const struct bip_pkt_hdr *h,
				   const void *payload)
{
	switch (h->type) {
	case BIP_PKT_SMALL:
		if (h->flags & BIP_PKTF_MORE)
			return stage_small(fw, src, p, h, payload);
		return deliver_small(fw, src, p, h, payload);
	case BIP_PKT_LONG_RTS:
		return deliver_rts(fw, src, h);
	case BIP_PKT_LONG_CTS:
		deliver_cts(fw, src, h, payload);
		return DELIVERED;
	case BIP_PKT_LONG_DATA:
		return deliver_data(fw, src, p, h, payload);
	case BIP_PKT_CLOSE:
		/* Everything it sent came before: it is done. It waits for
		 * our ack of this. */
		bipfw_peer_lost(fw, src, BIPFW_PEER_CLOSED);
		p->rx.ack_urgent = true;
		return DELIVERED;
	}
	return DELIVERED;
}

/* The last packet of a long send is acknowledged. */
static void long_acked(struct bipfw *fw, unsigned slot)
{
	struct bipfw_send *s = &fw->slots[slot];

	if (!s->ready || s->fin)
		bipfw_send_complete(fw, slot, s->status);
	else
		s->state = BIPFW_SEND_WAIT_FIN;
}

/* Release scoreboard entries newly covered by an ack: completes sends. */
static void release_acked(struct bipfw *fw, struct bipfw_peer *p,
			  uint32_t from, uint32_t count)
{
	for (uint32_t k = 0; k < count; k++) {
		struct bipfw_txent *e = bipfw_board(fw, p, from + k);

		if (e->slot == BIPFW_NONE)
			continue;
		if (e->type == BIP_PKT_SMALL && e->last)
			bipfw_send_complete(fw, e->slot, 0);
		else if (e->type == BIP_PKT_LONG_DATA && e->last)
			long_acked(fw, e->slot);
	}
}

/* The ack a packet carries, of our sequenced packets: it may complete
 * sends, and open the window for more. */
static void take_ack(struct bipfw *fw, struct bipfw_peer *p, uint32_t ack)
{
	uint32_t una = p->tx.una;

	release_acked(fw, p, una, bipfw_rel_on_ack(&p->tx, ack, fw->now));
}

/* A small message outside the sequence (BIP_PKTF_NOSEQ, see
 * bipfw_tx_small) owes its sender nothing: no ack, so no visit of the
 * transmit side, unless its own ack frees something of ours. */
static bool take_unsequenced(struct bipfw *fw, int src, struct bipfw_peer *p,
			     const struct bip_pkt_hdr *h, const void *payload)
{
	if (h->ack != p->tx.una) {
		bipfw_tx_wake(fw, src);
		take_ack(fw, p, h->ack);
	}
	if (deliver_small(fw, src, p, h, payload) != DELIVERED)
		return false; /* held in the link until the queue has room */
	if (src == fw->cfg.node && fw->self_unseq)
		fw->self_unseq--;
	fw->cnt.packets_received++;
	p->rx_at = fw->now;
	return true;
}

/* Returns false when a lossless peer's packet must stay in the link, held
 * until there is room for it. */
static bool handle_packet(struct bipfw *fw, const struct bip_pkt_hdr *h,
			  const void *payload)
{
	int src = h->src;
	struct bipfw_peer *p = &fw->peers[src];

	/* A peer that closed or died is done: nothing it sent after that
	 * may start new work here. One that closed on a lossy wire resends
	 * its CLOSE until acknowledged: a duplicate is acknowledged again. */
	if (p->state != BIPFW_PEER_LIVE) {
		bipfw_tx_wake(fw, src);
		if (p->lossy && p->state == BIPFW_PEER_CLOSED &&
		    h->type != BIP_PKT_ACK && h->type != BIP_PKT_NACK)
			(void)bipfw_rel_on_arrival(&p->rx, h->seq);
		return true;
	}
	if (h->flags & BIP_PKTF_NOSEQ)
		return take_unsequenced(fw, src, p, h, payload);
	/* More may follow that only a step takes (bipfw_poll). */
	fw->step_due = true;
	/* Whatever else it is, it may leave us owing src something (an ack,
	 * a CTS, a verdict, a resend). */
	bipfw_tx_wake(fw, src);
	fw->cnt.packets_received++;
	p->rx_at = fw->now;
	take_ack(fw, p, h->ack);

	switch (h->type) {
	case BIP_PKT_ACK:
		return true;
	case BIP_PKT_NACK:
		/* What we sent a lossless peer is gone from our memory (a
		 * small message may have been written straight into the
		 * link): such a peer holds, never refuses. */
		if (!p->lossy) {
			fw->cnt.dropped_bad++;
			bip_dbg("NACK from node %d on a lossless wire", src);
			return true;
		}
		fw->cnt.nacks_received++;
		bipfw_rel_on_nack(&p->tx, h->seq, h->flags & BIP_PKTF_BUSY,
				  fw->now, fw->cfg.nack_backoff_us);
		return true;
	}

	/* The sender's window is full: it waits on this ack. */
	if (h->flags & BIP_PKTF_ACKREQ)
		p->rx.ack_urgent = true;
	switch (bipfw_rel_on_arrival(&p->rx, h->seq)) {
	case BIPFW_RX_ACCEPT:
		if (deliver(fw, src, p, h, payload) == DELIVERED) {
			bipfw_rel_on_delivered(&p->rx, fw->now);
		} else if (!p->lossy) {
			fw->cnt.packets_received--; /* counted when taken */
			return false;
		} else {
			bipfw_rel_on_refused(&p->rx);
		}
		return true;
	case BIPFW_RX_DUP:
	case BIPFW_RX_GAP:
		fw->cnt.dropped_dup++;
		return true;
	}
	return true;
}

/* The packets of a wire, from the one its peek just found (wh, payload,
 * avail) on. */
static int rx_wire_from(struct bipfw *fw, unsigned wire, unsigned budget,
			const void *wh, const void *payload, size_t avail)
{
	const struct bipfw_port *w = &fw->wires[wire];
	bool copied = w->cls->flags & BIPFW_WIRE_PEEK_COPY;
	struct bip_pkt_hdr copy;
	const struct bip_pkt_hdr *h;
	unsigned n = 0, held = 0;
	bool unseq;

	do {
		/* Validate and use a private copy: the link's copy may be in
		 * memory the sender can still write, and unaligned. A wire
		 * that shows one (PEEK_COPY) needs no second. */
		h = wh;
		if (!copied) {
			memcpy(&copy, wh, sizeof(copy));
			h = &copy;
		}
		if (h->flags & BIP_PKTF_INLINE)
			payload = h->inline_data;
		/* An inline payload is in our copy of the header: no loan. */
		fw->rx_lend = w->cls->keep && !(h->flags & BIP_PKTF_INLINE)
				      ? (uint8_t)(wire + 1)
				      : 0;
		/* Most packets between lossless peers are small messages
		 * outside the sequence: those pass the shorter check, which
		 * accepts nothing packet_valid refuses (asserted where
		 * asserts run: fuzzing, debug builds). */
		unseq = small_unseq_valid(fw, wire, h, avail);
		assert(!unseq || packet_valid(fw, wire, h, payload, avail));
		if (!(unseq || packet_valid(fw, wire, h, payload, avail)) ||
		    handle_packet(fw, h, payload)) {
			if (fw->rx_lent)
				fw->rx_lent->token = w->cls->keep(w->ctx);
			else
				w->cls->release(w->ctx);
			fw->rx_lent = NULL;
			n++;
			continue;
		}
		/* Held: the other senders' packets may still be taken, once
		 * each sender came round. */
		w->cls->hold(w->ctx);
		if (++held >= w->npeers)
			break;
	} while (n < budget &&
		 w->cls->peek(w->ctx, &wh, &payload, &avail) == 0);
	return (int)n;
}

/* The packet the direct wire's peek found, if it is a small message that
 * asks nothing of the event loop (bipfw_poll): its header checked in the
 * wire's own copy (BIPFW_WIRE_PEEK_COPY), it goes to the host. Anything
 * else is a turn's: one runs now (waiting for the next poll would leave
 * it there while a crowded host's idle policy gives the core away), and
 * the next poll runs one too. NULL then, else the sender. */
static inline __attribute__((always_inline)) struct bipfw_peer *
direct_check(struct bipfw *fw, const struct bip_pkt_hdr *h,
	     const void *payload, size_t avail)
{
	unsigned wire = (unsigned)fw->direct_wire;
	struct bipfw_peer *p;

	/* The shorter check accepts nothing packet_valid refuses. */
	assert(!small_unseq_valid(fw, wire, h, avail) ||
	       packet_valid(fw, wire, h,
			    h->flags & BIP_PKTF_INLINE ? h->inline_data
						       : payload,
			    avail));
	if (!small_unseq_valid(fw, wire, h, avail) ||
	    (p = &fw->peers[h->src])->state != BIPFW_PEER_LIVE ||
	    h->ack != p->tx.una) {
		fw->step_due = true;
		bipfw_step(fw);
		return NULL;
	}
	fw->cnt.small_direct++;
	fw->cnt.packets_received++;
	p->rx_at = fw->now;
	/* Takes count as polls (bipfw_rx_direct). */
	if (++fw->polls % BIPFW_STEP_EVERY == 0)
		fw->turn_due = true;
	return p;
}

/* Held as fw->direct, for the host's peek and pop: a tiny payload copied,
 * a larger one lent where it lies (keep). */
static __attribute__((noinline)) int rx_direct_take(struct bipfw *fw,
						    const void *wh,
						    const void *payload,
						    size_t avail)
{
	const struct bipfw_port *w = &fw->wires[fw->direct_wire];
	const struct bip_pkt_hdr *h = wh;
	struct bipfw_small_entry *e = &fw->direct;
	struct bipfw_peer *p = direct_check(fw, h, payload, avail);

	if (!p)
		return 0;
	if (h->flags & BIP_PKTF_INLINE) {
		entry_fill(fw, e, h->src, p, h, h->inline_data, 0, 0, e->inl);
		w->cls->release(w->ctx);
	} else {
		entry_fill(fw, e, h->src, p, h, payload, 0,
			   (uint8_t)(fw->direct_wire + 1), e->inl);
		e->token = w->cls->keep(w->ctx);
	}
	fw->direct_out = true;
	return 1;
}

/* The packet leaves the ring before fn sees it, so that a turn fn runs
 * cannot take it again: a tiny payload copied out of the wire's header
 * copy (which that turn may overwrite; all of its 32 bytes, a fixed copy
 * cheaper than one of len), a larger one kept where it lies until fn is
 * done with it. */
static __attribute__((noinline)) int rx_direct_to(struct bipfw *fw,
						  const void *wh,
						  const void *payload,
						  size_t avail,
						  bipfw_small_fn fn, void *arg,
						  int *stop)
{
	const struct bipfw_port *w = &fw->wires[fw->direct_wire];
	const struct bip_pkt_hdr *h = wh;
	struct bipfw_peer *p = direct_check(fw, h, payload, avail);
	uint8_t inl[BIP_PKT_INLINE_MAX];
	uint64_t token;
	size_t len;
	int src;

	if (!p)
		return 0;
	small_taken(fw, p);
	/* Now: a turn fn runs may overwrite the wire's header copy. */
	src = h->src;
	len = h->len;
	if (h->flags & BIP_PKTF_INLINE) {
		memcpy(inl, h->inline_data, sizeof(inl));
		w->cls->release(w->ctx);
		*stop = fn(arg, inl, len, src);
		return 1;
	}
	fw->cnt.small_in_place++;
	token = w->cls->keep(w->ctx);
	*stop = fn(arg, payload, len, src);
	w->cls->unkeep(w->ctx, src, token);
	return 1;
}

/* Most looks find nothing: those cost the wire's peek and no frame. A turn
 * due goes first (after other packets, a send to ourselves, and every
 * BIPFW_STEP_EVERY takes: receive calls alone, against a ring that never
 * empties, still give the transmit side and the timers their turns). It
 * is a light one, which leaves the ring to this take; but it may have to
 * be a whole one, which can queue messages: those are older than the
 * ring's, so the caller serves the queue first. In line in its callers
 * (hostif.c, by LTO). */
inline __attribute__((always_inline)) int
bipfw_rx_direct(struct bipfw *fw, bipfw_small_fn fn, void *arg, int *stop)
{
	const struct bipfw_port *w = &fw->wires[fw->direct_wire];
	const void *wh, *payload;
	size_t avail;

	if (fw->step_due || fw->turn_due) {
		bipfw_poll_light(fw);
		if (fw->sq_count)
			return 0;
	}
	if (w->cls->peek(w->ctx, &wh, &payload, &avail))
		return 0;
	return fn ? rx_direct_to(fw, wh, payload, avail, fn, arg, stop)
		  : rx_direct_take(fw, wh, payload, avail);
}

/* A wire's first look is here, so that an empty wire (most looks) costs a
 * peek and no more. */
static inline int rx_wire(struct bipfw *fw, unsigned wire, unsigned budget)
{
	const struct bipfw_port *w = &fw->wires[wire];
	const void *wh, *payload;
	size_t avail;

	if (!budget || w->cls->peek(w->ctx, &wh, &payload, &avail))
		return 0;
	return rx_wire_from(fw, wire, budget, wh, payload, avail);
}

/* A wire that only carries bulk runs is read every BULK_LOOK_EVERY steps
 * (a look at a socket is a system call, which the latency of the peer's
 * own wire would pay on every poll), and on every step for BULK_HOT_US
 * after a packet came by it. */
#define BULK_LOOK_EVERY 16
#define BULK_HOT_US 2000

int bipfw_rx_run(struct bipfw *fw, unsigned budget, int skip)
{
	int n = 0;

	/* A wire no peer uses is not read: what comes there waits for the
	 * first peer to connect through it. */
	for (unsigned i = 0; i < fw->nwires; i++) {
		struct bipfw_port *w = &fw->wires[i];
		int got;

		if ((int)i == skip)
			continue;
		if (w->npeers) {
			n += rx_wire(fw, i, budget);
		} else if (w->nbulk && (fw->now < w->hot_until ||
					fw->tick % BULK_LOOK_EVERY == 0)) {
			got = rx_wire(fw, i, budget);
			if (got)
				w->hot_until = fw->now + BULK_HOT_US;
			n += got;
		}
	}
	return n;
}
