/*
 * hostif.c - the host interface of the NIC program: send slots, the table of
 * posted long receives by tag, the small-message queue, and completions.
 * The host (libbip) calls these; the event loop fills in completions.
 */
#include <string.h>

#include "log.h"
#include "nic.h"

/* A free slot for a send to peer, not yet on any list. */
static int slot_alloc(struct bipfw *fw, int peer)
{
	uint16_t i = fw->free_slot;
	struct bipfw_send *s;

	if (i == BIPFW_NONE)
		return -BIP_EAGAIN;
	s = &fw->slots[i];
	fw->free_slot = s->next;
	s->state = BIPFW_SEND_QUEUED;
	s->peer = (uint16_t)peer;
	s->gen++;
	s->status = 0;
	s->sent = 0;
	s->direct = false;
	s->pulled = false;
	s->packets = false;
	s->ready = false;
	s->fin = false;
	s->run = false;
	s->raddr = 0;
	return i;
}

void bipfw_slot_free(struct bipfw *fw, unsigned slot)
{
	struct bipfw_send *s = &fw->slots[slot];

	s->state = BIPFW_SEND_FREE;
	s->next = fw->free_slot;
	fw->free_slot = (uint16_t)slot;
}

void bipfw_send_complete(struct bipfw *fw, unsigned slot, int status)
{
	struct bipfw_send *s = &fw->slots[slot];

	if (!s->is_long) {
		bipfw_slot_free(fw, slot);
		return;
	}
	fw->peers[s->peer].longs--;
	s->state = BIPFW_SEND_DONE;
	s->status = status;
	if (!status)
		fw->cnt.long_sent++;
}

static int check_peer(const struct bipfw *fw, int peer)
{
	if (peer < 0 || peer >= fw->cfg.nnodes)
		return -BIP_ENODE;
	if (fw->peers[peer].state != BIPFW_PEER_LIVE)
		return -BIP_EPEERGONE;
	return 0;
}

int bipfw_post_small(struct bipfw *fw, int peer, const struct iovec *iov,
		     int iovcnt)
{
	struct bipfw_send *s;
	size_t len = 0;
	int rc = check_peer(fw, peer);

	if (rc)
		return rc;
	for (int i = 0; i < iovcnt; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			return -BIP_EINVAL;
		if (iov[i].iov_len > BIP_SMALL_MAX - len)
			return -BIP_ETOOLONG;
		len += iov[i].iov_len;
	}
	if (bipfw_tx_small(fw, peer, iov, iovcnt, len) == 0)
		return 1;
	rc = slot_alloc(fw, peer);
	if (rc < 0)
		return rc;
	s = &fw->slots[rc];
	s->is_long = false;
	s->len = len;
	bipfw_gather(s->copy, iov, iovcnt, false);
	s->buf = s->copy;
	/* Sends to one peer leave in the order they were posted. */
	BIPFW_LIST_PUSH(&fw->peers[peer].fifo, fw->slots, next, rc);
	bipfw_tx_wake(fw, peer);
	fw->cnt.small_sent++;
	return 0;
}

int bipfw_post_long(struct bipfw *fw, int peer, uint32_t tag, const void *buf,
		    size_t len, unsigned flags, uint32_t *gen_p)
{
	struct bipfw_send *s;
	int rc = check_peer(fw, peer);

	if (rc)
		return rc;
	if (tag >= fw->cfg.long_tags)
		return -BIP_ETAG;
	if (!buf && len)
		return -BIP_EINVAL;
	rc = slot_alloc(fw, peer);
	if (rc < 0)
		return rc;
	s = &fw->slots[rc];
	s->is_long = true;
	fw->peers[peer].longs++;
	s->tag = tag;
	s->buf = buf;
	s->len = len;
	if (flags & BIPFW_LONG_READY) {
		/* Ready mode: cleared to stream at once, on the tag given. */
		s->ready = true;
		s->packets = flags & BIPFW_LONG_PACKETS;
		s->state = BIPFW_SEND_STREAM;
		s->rtag = tag;
		BIPFW_LIST_PUSH(&fw->peers[peer].stream, fw->slots, next, rc);
	} else {
		/* The RTS leaves in order with the small messages. */
		BIPFW_LIST_PUSH(&fw->peers[peer].fifo, fw->slots, next, rc);
	}
	bipfw_tx_wake(fw, peer);
	*gen_p = s->gen;
	return rc;
}

int bipfw_rebase_send(struct bipfw *fw, unsigned slot, uint32_t gen,
		      const void *copy)
{
	struct bipfw_send *s;

	if (slot >= fw->cfg.send_slots)
		return -BIP_ENOREQ;
	s = &fw->slots[slot];
	if (s->gen != gen || !s->is_long || s->state == BIPFW_SEND_FREE ||
	    s->state == BIPFW_SEND_DONE)
		return -BIP_ENOREQ;
	/* The receiver reads the old buffer until its verdict says it is
	 * done: the caller waits for that. */
	if (s->pulled && !s->fin)
		return -BIP_EBUSY;
	/* Packets not yet sent, and resends, read the copy from now on;
	 * those the wires hold by reference leave now, before the caller
	 * lets the old buffer go. */
	bipfw_tx_flush(fw);
	s->buf = copy;
	return 0;
}

int bipfw_reap_send(struct bipfw *fw, unsigned slot, uint32_t gen)
{
	struct bipfw_send *s;
	int status;

	if (slot >= fw->cfg.send_slots)
		return -BIP_ENOREQ;
	s = &fw->slots[slot];
	if (s->gen != gen || !s->is_long || s->state == BIPFW_SEND_FREE)
		return -BIP_ENOREQ;
	if (s->state != BIPFW_SEND_DONE)
		return 0;
	status = s->status;
	bipfw_slot_free(fw, slot);
	return status ? status : 1;
}

/* A matched receive lets its sender write the data in one copy, where the
 * wire can (a key in the CTS); a failure only means the data comes by
 * packets. */
static void expose(struct bipfw *fw, struct bipfw_lrecv *r)
{
	const struct bipfw_port *w = bipfw_port_of(fw, r->src);

	r->key = 0;
	if (w->cls->expose && r->total &&
	    w->cls->expose(w->ctx, r->src, r->buf, r->total, &r->key))
		r->key = 0;
}

static void unexpose(struct bipfw *fw, struct bipfw_lrecv *r)
{
	const struct bipfw_port *w;

	if (!r->key)
		return;
	w = bipfw_port_of(fw, r->src);
	if (w->cls->unexpose)
		w->cls->unexpose(w->ctx, r->key);
	r->key = 0;
}

/* Matching rule: the oldest announced message on a tag takes its receive;
 * the receiver then owes the sender a CTS (queued, never waited on). */
void bipfw_match_tag(struct bipfw *fw, uint32_t tag)
{
	struct bipfw_lrecv *r = &fw->tags[tag];
	struct bipfw_rts *m;
	uint16_t i = r->rts_head;

	if (r->state != BIPFW_LRECV_POSTED || i == BIPFW_NONE)
		return;
	m = &fw->rts[i];
	r->rts_head = m->next;
	if (r->rts_head == BIPFW_NONE)
		r->rts_tail = BIPFW_NONE;
	r->src = m->src;
	r->msg_id = m->msg_id;
	r->total = m->total;
	r->received = 0;
	bipfw_rts_put(fw, i);

	r->state = BIPFW_LRECV_ACTIVE;
	r->cts_flagged = r->total > r->cap;
	if (r->cts_flagged) {
		/* Too long for the posted buffer: the CTS cancels the send and
		 * the receive completes in error once that CTS has left. */
		bip_info("long message of %zu bytes from node %u on tag %u "
			 "exceeds the posted %zu bytes",
			 r->total, r->src, tag, r->cap);
		r->status = -BIP_ETRUNC;
	} else {
		expose(fw, r);
	}
	BIPFW_LIST_PUSH(&fw->peers[r->src].cts, fw->tags, cts_next, tag);
	bipfw_tx_wake(fw, r->src);
}

int bipfw_post_lrecv(struct bipfw *fw, uint32_t tag, void *buf, size_t cap,
		     uint32_t *gen_p)
{
	struct bipfw_lrecv *r;

	if (tag >= fw->cfg.long_tags)
		return -BIP_ETAG;
	if (!buf && cap)
		return -BIP_EINVAL;
	r = &fw->tags[tag];
	if (r->state != BIPFW_LRECV_FREE)
		return -BIP_EBUSY;
	r->state = BIPFW_LRECV_POSTED;
	r->ready = false;
	r->gen++;
	r->buf = buf;
	r->cap = cap;
	r->status = 0;
	bipfw_match_tag(fw, tag);
	*gen_p = r->gen;
	return 0;
}

int bipfw_reap_lrecv(struct bipfw *fw, uint32_t tag, uint32_t gen, int *node_p,
		     size_t *len_p)
{
	struct bipfw_lrecv *r;

	if (tag >= fw->cfg.long_tags)
		return -BIP_ENOREQ;
	r = &fw->tags[tag];
	if (r->gen != gen || r->state == BIPFW_LRECV_FREE)
		return -BIP_ENOREQ;
	if (r->state != BIPFW_LRECV_DONE)
		return 0;
	*node_p = r->src;
	*len_p = r->received;
	unexpose(fw, r);
	r->state = BIPFW_LRECV_FREE;
	return r->status ? r->status : 1;
}

int bipfw_cancel_lrecv(struct bipfw *fw, uint32_t tag, uint32_t gen)
{
	struct bipfw_lrecv *r;

	if (tag >= fw->cfg.long_tags || fw->tags[tag].gen != gen ||
	    fw->tags[tag].state == BIPFW_LRECV_FREE)
		return -BIP_ENOREQ;
	r = &fw->tags[tag];
	if (r->state != BIPFW_LRECV_POSTED)
		return -BIP_EBUSY;
	r->state = BIPFW_LRECV_FREE;
	return 0;
}

/* Whether the direct wire's head is the oldest small message: nothing
 * is held or queued before it. */
static inline bool direct_first(const struct bipfw *fw)
{
	return !fw->direct_out && !fw->sq_count && fw->direct_wire >= 0;
}

int bipfw_small_peek(struct bipfw *fw, const void **data, size_t *len_p,
		     int *node_p)
{
	const struct bipfw_small_entry *e;

	/* The ring's head, when nothing waits before it (a turn that packet
	 * may run can queue messages instead). */
	if (direct_first(fw))
		bipfw_rx_direct(fw, NULL, NULL, NULL);
	if (fw->direct_out)
		e = &fw->direct;
	else if (fw->sq_count)
		e = &fw->smallq[fw->sq_head];
	else
		return -BIP_EAGAIN;
	*data = e->data;
	*len_p = e->len;
	*node_p = e->src;
	return 0;
}

/* The host is done with e: its loan ends, its buffer goes back. */
static void entry_done(struct bipfw *fw, struct bipfw_small_entry *e)
{
	if (e->kept) {
		const struct bipfw_port *w = &fw->wires[e->kept - 1];

		w->cls->unkeep(w->ctx, e->src, e->token);
		e->kept = 0;
	}
	if (e->buf) {
		bipfw_qbuf_put(fw, e->buf);
		e->buf = NULL;
	}
}

int bipfw_small_pop(struct bipfw *fw)
{
	if (fw->direct_out) {
		entry_done(fw, &fw->direct);
		fw->direct_out = false;
		return 0;
	}
	if (!fw->sq_count)
		return -BIP_EAGAIN;
	entry_done(fw, &fw->smallq[fw->sq_head]);
	if (++fw->sq_head == fw->cfg.small_queue)
		fw->sq_head = 0;
	fw->sq_count--;
	return 0;
}

/* Here, beside the peek and the pop it repeats, so that both are inline.
 * With nothing queued or held, a small message at the head of the direct
 * wire goes to fn straight from the ring (bipfw_rx_direct). */
int bipfw_drain(struct bipfw *fw, int max, bipfw_small_fn fn, void *arg)
{
	const void *data;
	size_t len;
	int n = 0, node, stop = 0;

	bipfw_poll_light(fw);
	while (!stop && n < max) {
		if (direct_first(fw)) {
			if (bipfw_rx_direct(fw, fn, arg, &stop)) {
				n++;
				continue;
			}
			/* Nothing there, or a turn ran: it may have queued. */
			if (!fw->sq_count)
				break;
		}
		if (bipfw_small_peek(fw, &data, &len, &node))
			break;
		stop = fn(arg, data, len, node);
		bipfw_small_pop(fw);
		n++;
	}
	return n;
}

int bipfw_take_error(struct bipfw *fw)
{
	int err = fw->pending_error;

	fw->pending_error = 0;
	return err;
}
