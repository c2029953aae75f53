/*
 * bip_send.c - the sending side of MPI point-to-point.
 *
 * The protocol is chosen by size (MPI-BIP, section 3.3): up to the short
 * limit the data travels inside one control message and the send completes
 * at once; up to the eager limit, while the peer's credits take all its
 * pieces (above the stream limit, to a rank that can read our memory: and
 * only alone, see eager_fits), it travels in several (EAGER, then MOREs)
 * and completes at once too, since the three-way protocol's extra round
 * trip costs more than the copies of the pieces; below the rendezvous
 * threshold the three-way protocol announces the message (RTS3) and sends
 * it when the receiver's ACK names a BIP tag; above it, and for every
 * synchronous send, the rendezvous protocol (RNDV) sends one fragment per
 * ACK, which the receiver gives only once a receive matched.
 * Non-contiguous data is packed once, up front.
 */
#include "mpidimpl.h"
#include "bip_state.h"

#define BIP_REQ(req) ((req)->dev.ch4.netmod.bip)

/* Contiguous data goes from the user buffer straight into BIP's slot;
 * other data is packed first, out of line (a 4 KiB buffer on the stack). */
static int __attribute__((noinline))
send_short_packed(int node, MPIDI_BIP_ctl_t *h, size_t hdr_len,
		  const void *buf, MPI_Aint count, MPI_Datatype datatype,
		  size_t data_sz)
{
	char packed_data[BIP_SMALL_MAX];
	MPI_Aint packed;
	int mpi_errno;

	mpi_errno = MPIR_Typerep_pack(buf, count, datatype, 0, packed_data,
				      (MPI_Aint)data_sz, &packed);
	if (mpi_errno)
		return mpi_errno;
	return MPIDI_BIP_ctl_sendv(node, h, hdr_len, packed_data, data_sz);
}

/* The header in a line of its own where that costs no line more
 * (MPIDI_BIP_short_hdr_len). */
static inline int send_short(int node, MPIDI_BIP_ctl_t *h, const void *buf,
			     MPI_Aint count, MPI_Datatype datatype,
			     size_t data_sz, bool contig, MPI_Aint true_lb)
{
	union {
		MPIDI_BIP_ctl_t h;
		char line[MPIDI_BIP_SHORT_LINE];
	} line;
	size_t hdr_len = MPIDI_BIP_short_hdr_len(data_sz);

	h->len = (uint32_t)data_sz;
	if (hdr_len != sizeof(*h)) {
		memset(&line, 0, sizeof(line));
		line.h = *h;
		h = &line.h;
	}
	if (contig)
		return MPIDI_BIP_ctl_sendv(node, h, hdr_len,
					   MPIR_get_contig_ptr(buf, true_lb),
					   data_sz);
	return send_short_packed(node, h, hdr_len, buf, count, datatype,
				 data_sz);
}

/* A new request of kind whose errors go to comm's handler; *req_p NULL
 * and an error if there is none to be had. */
static int request_on(int kind, MPIR_Comm *comm, MPIR_Request **req_p)
{
	MPIR_Request *req = MPIR_Request_create_from_pool(kind, 0, 2);

	*req_p = req;
	if (!req)
		return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					    __func__, __LINE__, MPIX_ERR_NOREQ,
					    "**nomemreq", 0);
	req->comm = comm;
	MPIR_Comm_add_ref(comm);
	return MPI_SUCCESS;
}

/* Short, behind a full send FIFO: the data stays in the user's buffer and
 * the send completes when its message leaves (bip_credits.c says why). */
static int send_lent(int node, MPIDI_BIP_ctl_t *h, const void *data,
		     size_t data_sz, MPIR_Comm *comm, MPIR_Request **req_p)
{
	MPIR_Request *sreq;
	MPIDI_BIP_request_t *r;
	int mpi_errno = request_on(MPIR_REQUEST_KIND__SEND, comm, &sreq);

	if (mpi_errno)
		return mpi_errno;
	r = &BIP_REQ(sreq);
	*r = (MPIDI_BIP_request_t){
		.node = node,
		.proto = MPIDI_BIP_PROTO_SHORT,
		.data_sz = data_sz,
	};
	h->type = MPIDI_BIP_CTL_SHORT;
	h->len = (uint32_t)data_sz;
	mpi_errno = MPIDI_BIP_ctl_sendv_lent(node, h, sizeof(*h), data,
					     data_sz, sreq);
	if (mpi_errno) {
		/* Never queued: both references go. */
		MPIDIU_request_complete(sreq);
		MPIR_Request_free(sreq);
		return mpi_errno;
	}
	*req_p = sreq;
	return MPI_SUCCESS;
}

/* Eager: the whole message at once, one control message per piece, back
 * to back in the peer's order (its send FIFO keeps them so), so that
 * nothing else from us comes between them. Every piece but the last has
 * the peer's piece size: whole packets of its wire. */
static int send_eager(int node, MPIDI_BIP_ctl_rts_t *rts, const void *buf,
		      MPI_Aint count, MPI_Datatype datatype, size_t data_sz,
		      bool contig, MPI_Aint true_lb)
{
	const char *data = MPIR_get_contig_ptr(buf, true_lb);
	size_t piece = MPIDI_BIP_global.peers[node].piece;
	size_t n = MPL_MIN(data_sz, piece - sizeof(*rts));
	char *pack = NULL;
	MPI_Aint packed;
	int mpi_errno;

	if (!contig) {
		pack = MPIDI_BIP_buf_get(data_sz);
		if (!pack)
			return MPIR_Err_create_code(MPI_SUCCESS,
						    MPIR_ERR_RECOVERABLE,
						    __func__, __LINE__,
						    MPI_ERR_OTHER, "**nomem",
						    0);
		mpi_errno = MPIR_Typerep_pack(buf, count, datatype, 0, pack,
					      (MPI_Aint)data_sz, &packed);
		if (mpi_errno)
			goto fn_exit;
		data = pack;
	}
	rts->h.type = MPIDI_BIP_CTL_EAGER;
	rts->h.len = (uint32_t)n;
	rts->data_sz = data_sz;
	mpi_errno = MPIDI_BIP_ctl_sendv_more(node, rts, sizeof(*rts), data, n);
	for (size_t off = n; !mpi_errno && off < data_sz; off += n) {
		MPIDI_BIP_ctl_t more = { .type = MPIDI_BIP_CTL_MORE };

		n = MPL_MIN(data_sz - off, piece - sizeof(more));
		more.len = (uint32_t)n;
		mpi_errno = off + n < data_sz
				    ? MPIDI_BIP_ctl_sendv_more(node, &more,
							       sizeof(more),
							       data + off, n)
				    : MPIDI_BIP_ctl_sendv(node, &more,
							  sizeof(more),
							  data + off, n);
	}
fn_exit:
	MPIDI_BIP_buf_put(pack);
	return mpi_errno;
}

/* Eager only when the peer's credits take every piece now, the reserved
 * last one aside, and nothing waits for it before them: queued pieces
 * would hold the send FIFO for the receiver's credits, while the
 * three-way protocol takes one credit and sends the data outside them.
 * Rule (streams): from the peer's stream_min up (above the stream limit,
 * to a rank that can read our memory), a message goes eagerly only
 * alone: if this process completed a receive since its last such message
 * to that rank. A message sent after waiting for one (a ping-pong, an
 * exchange, a ring, a pipeline) is latency, which the pieces serve best:
 * their two copies overlap, the sender writing while the receiver reads,
 * where the three-way protocol pays a round trip first (ping-pong of 32
 * KiB 2.3 against 5.2 us one way, 64 KiB 4.3 against 6.6). One sent right
 * behind another (back-to-back isends, a one-way stream) is a stream,
 * which the receiver's single copy serves better when both sides send:
 * 32 KiB windows both ways at once 7.1 GB/s with every message eager,
 * 8.9-9.5 by three-way. The first message of each window still goes
 * eagerly (8.3-8.7 GB/s), the price of the lone message's gain. */
static bool eager_fits(const MPIDI_BIP_peer_t *p, size_t data_sz)
{
	size_t first = p->piece - sizeof(MPIDI_BIP_ctl_rts_t);
	size_t more = p->piece - sizeof(MPIDI_BIP_ctl_t);
	size_t pieces;

	if (data_sz > MPIDI_BIP_global.eager_limit || p->head ||
	    (data_sz >= p->stream_min &&
	     p->stream_at == MPIDI_BIP_global.recvs_done + 1))
		return false;
	pieces = data_sz <= first ? 1 : 1 + (data_sz - first + more - 1) / more;
	return (size_t)p->credits > pieces;
}

/* A three-way or rendezvous message names its address, for its receiver
 * to read it itself in one copy where it would ask for the data (at once
 * for three-way, once a receive matched for rendezvous), from a size BIP
 * allows (BIP_SHM_PULL_MIN), whatever its size: a long read no longer has
 * one process copy while the other waits, since the receiver shares it
 * with an idle sender (MPIR_CVAR_CH4_BIP_SPLIT_MIN), and with more ranks
 * than cores one copy beats the rings' two (2-4 MiB windowed: 8-12 GB/s
 * by the rings, 13-19 read with the sender's help; an all-to-all of 2 MiB
 * blocks on 4 ranks on 2 cores went by the rings before). The receiver
 * decides whether it reads (bip_recv.c).
 * A synchronous send names it only where the receiver always reads
 * (crowded, our own rank): a named buffer is the receiver's until it
 * answers, so its MPI_Cancel could not complete locally, and synchronous
 * sends are the ones programs cancel (a standard one's cancel waits for
 * the receiver's progress, MPIDI_BIP_cancel_send). */
static bool receiver_may_read(const MPIDI_BIP_peer_t *p, int node,
			      size_t data_sz, bool sync)
{
	return data_sz >= p->read_min &&
	       (!sync || MPIDI_BIP_global.crowded ||
		node == MPIR_Process.rank);
}

/* A request that completed at once with node's failure: MPI_Isend to a
 * dead peer succeeds, and its MPI_Wait reports the failure. */
int MPIDI_BIP_failed_request(int kind, MPIR_Comm *comm, int node,
			     MPIR_Request **req_p)
{
	MPIR_Request *req;
	int mpi_errno = request_on(kind, comm, &req);

	if (mpi_errno)
		return mpi_errno;
	req->status.MPI_ERROR = MPIDI_BIP_proc_failed(node);
	MPIDIU_request_complete(req);
	*req_p = req;
	return MPI_SUCCESS;
}

int MPIDI_BIP_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
		    int rank, int tag, MPIR_Comm *comm, int context_offset,
		    MPIDI_av_entry_t *addr, MPIR_Request **req_p, bool sync)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int node = addr->netmod.bip.node, mpi_errno = MPI_SUCCESS, dt_contig;
	size_t data_sz;
	MPI_Aint true_lb, packed;
	MPIR_Datatype *dt_ptr;
	MPIR_Request *sreq;
	MPIDI_BIP_request_t *r;
	MPIDI_BIP_ctl_rts_t rts = {
		.h.ctx = (uint16_t)(comm->context_id + context_offset),
		.h.rank = comm->rank,
		.h.tag = tag,
	};
	enum MPIDI_BIP_proto proto;

	MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr,
				true_lb);
	if (sync || data_sz >= g->rndv_threshold)
		proto = MPIDI_BIP_PROTO_RNDV;
	else if (data_sz > g->short_limit)
		proto = eager_fits(&g->peers[node], data_sz)
				? MPIDI_BIP_PROTO_EAGER
				: MPIDI_BIP_PROTO_3WAY;
	else
		proto = MPIDI_BIP_PROTO_SHORT;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	/* The limit refuses new sends only: protocol messages always queue. */
	MPIR_ERR_CHKANDJUMP2(g->sfifo_limit && g->cnt.sfifo_depth >=
			     g->sfifo_limit, mpi_errno, MPI_ERR_OTHER,
			     "**bipfifo", "**bipfifo %s %d", "send",
			     (int)g->sfifo_limit);
	if (g->peers[node].failed) {
		mpi_errno = MPIDI_BIP_failed_request(MPIR_REQUEST_KIND__SEND,
						     comm, node, req_p);
		goto fn_exit;
	}
	g->cnt.sent[proto]++;
	g->cnt.ssend += sync;
	if (data_sz >= g->peers[node].stream_min)
		g->peers[node].stream_at = g->recvs_done + 1;
	if (proto == MPIDI_BIP_PROTO_SHORT && dt_contig &&
	    MPIDI_BIP_send_fifo_full(node)) {
		g->cnt.lent++;
		mpi_errno = send_lent(node, &rts.h,
				      MPIR_get_contig_ptr(buf, true_lb),
				      data_sz, comm, req_p);
		goto fn_exit;
	}
	if (proto == MPIDI_BIP_PROTO_SHORT || proto == MPIDI_BIP_PROTO_EAGER) {
		/* BIP copied the data: the send is complete locally (unless
		 * the peer turned out to be dead). */
		if (proto == MPIDI_BIP_PROTO_SHORT) {
			rts.h.type = MPIDI_BIP_CTL_SHORT;
			mpi_errno = send_short(node, &rts.h, buf, count,
					       datatype, data_sz, dt_contig,
					       true_lb);
		} else {
			mpi_errno = send_eager(node, &rts, buf, count,
					       datatype, data_sz, dt_contig,
					       true_lb);
		}
		MPIR_ERR_CHECK(mpi_errno);
		if (g->peers[node].failed)
			mpi_errno = MPIDI_BIP_failed_request(
				MPIR_REQUEST_KIND__SEND, comm, node, req_p);
		else
			*req_p = MPIR_Request_create_complete(
				MPIR_REQUEST_KIND__SEND);
		goto fn_exit;
	}

	mpi_errno = request_on(MPIR_REQUEST_KIND__SEND, comm, &sreq);
	MPIR_ERR_CHECK(mpi_errno);
	*req_p = sreq;
	r = &BIP_REQ(sreq);
	r->node = node;
	r->flags = 0;
	r->proto = (uint8_t)proto;
	r->data_sz = data_sz;
	r->cap = data_sz;
	r->offset = 0;
	r->pack = NULL;
	if (dt_contig) {
		r->data = MPIR_get_contig_ptr(buf, true_lb);
	} else {
		r->pack = MPIDI_BIP_buf_get(data_sz);
		MPIR_ERR_CHKANDJUMP(!r->pack, mpi_errno, MPI_ERR_OTHER,
				    "**nomem");
		mpi_errno = MPIR_Typerep_pack(buf, count, datatype, 0, r->pack,
					      (MPI_Aint)data_sz, &packed);
		MPIR_ERR_CHECK(mpi_errno);
		r->data = r->pack;
	}
	/* The receiver's ACKs name the request by a handle, never by a
	 * pointer: an ACK can reach a live send and nothing else. */
	r->handle = MPIDI_BIP_handle_new(&g->sends, sreq);
	MPIR_ERR_CHKANDJUMP(!r->handle, mpi_errno, MPI_ERR_OTHER, "**nomem");
	rts.h.type = proto == MPIDI_BIP_PROTO_RNDV ? MPIDI_BIP_CTL_RNDV
						   : MPIDI_BIP_CTL_RTS3;
	rts.data_sz = data_sz;
	rts.sreq = r->handle;
	if (receiver_may_read(&g->peers[node], node, data_sz, sync)) {
		r->flags |= MPIDI_BIP_REQ_READ;
		g->peers[node].readable++;
		rts.addr = (uint64_t)(uintptr_t)r->data;
	}
	mpi_errno = MPIDI_BIP_ctl_send(node, &rts, sizeof(rts));
fn_exit:
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

/* The transfer is over. A detached send's MPI request completed at its
 * cancel: only the reference the netmod kept is left to drop. */
static int send_complete(MPIR_Request *sreq)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(sreq);

	MPIDI_BIP_handle_free(&MPIDI_BIP_global.sends, r->handle);
	if (r->flags & MPIDI_BIP_REQ_READ)
		MPIDI_BIP_global.peers[r->node].readable--;
	if (r->flags & MPIDI_BIP_REQ_SERVED)
		MPIDI_BIP_path_served(
			&MPIDI_BIP_global.paths[MPIDI_BIP_PATHS_BOTH],
			r->data_sz);
	MPIDI_BIP_buf_put(r->pack);
	r->pack = NULL;
	if (r->flags & MPIDI_BIP_REQ_DETACHED) {
		MPIDI_BIP_global.detached--;
		MPIR_Request_free(sreq);
	} else
		MPIDIU_request_complete(sreq);
	return MPI_SUCCESS;
}

/* The send ends with err, whatever is left of it. */
static int send_fail(MPIR_Request *sreq, int err)
{
	sreq->status.MPI_ERROR = err;
	return send_complete(sreq);
}

/* A three-way message, or a rendezvous fragment, left: the send completes
 * with its last byte. */
static int send_fragment_done(MPIDI_BIP_lsend_t *ls, int err)
{
	MPIR_Request *sreq = ls->arg;
	MPIDI_BIP_request_t *r = &BIP_REQ(sreq);

	if (err || sreq->status.MPI_ERROR)
		return send_fail(sreq, err ? err : sreq->status.MPI_ERROR);
	r->offset += ls->len;
	if (r->offset < r->cap)
		return MPI_SUCCESS; /* the next ACK asks for more */
	return send_complete(sreq);
}

/* The receiver posted a BIP long receive: send the bytes it asked for. */
int MPIDI_BIP_send_ack(int node, MPIR_Request *sreq,
		       const MPIDI_BIP_ctl_ack_t *ack)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(sreq);

	/* Rule: a truncating receiver wants nothing beyond its last ACK. */
	if (ack->flags & MPIDI_BIP_ACK_LAST)
		r->cap = ack->offset + ack->len;
	/* Rule: a withdrawn send that no receive took is cancelled; bytes the
	 * receiver read are sent; a failed read, or a receive the receiver
	 * could not post, fails the send as it failed the receive. */
	if (ack->flags & MPIDI_BIP_ACK_WITHDRAWN) {
		MPIR_STATUS_SET_CANCEL_BIT(sreq->status, TRUE);
		return send_complete(sreq);
	}
	if (ack->flags & MPIDI_BIP_ACK_FAILED) {
		int err = MPIDI_BIP_error(-BIP_ESYS, "the receiver's fetch");

		/* A fragment still leaving ends the send (its end reads the
		 * error): the request stays until BIP is done with it. */
		if (MPIDI_BIP_lsend_pending(sreq)) {
			sreq->status.MPI_ERROR = err;
			return MPI_SUCCESS;
		}
		return send_fail(sreq, err);
	}
	if (ack->flags & MPIDI_BIP_ACK_READ) {
		r->offset = ack->offset + ack->len;
		return r->offset >= r->cap ? send_complete(sreq)
					   : MPI_SUCCESS;
	}
	if (!ack->len) /* an empty message, or nothing of it is wanted */
		return r->offset >= r->cap ? send_complete(sreq)
					   : MPI_SUCCESS;
	/* The receiver chose asking: our reads from it would hold up what it
	 * asked for, so we try asking too (bip_path.h). */
	if ((ack->flags & MPIDI_BIP_ACK_CHOSEN) &&
	    !(r->flags & MPIDI_BIP_REQ_SERVED)) {
		r->flags |= MPIDI_BIP_REQ_SERVED;
		MPIDI_BIP_path_invited(
			&MPIDI_BIP_global.paths[MPIDI_BIP_PATHS_BOTH],
			r->data_sz);
	}
	return MPIDI_BIP_lsend(ack, node, r->data, send_fragment_done,
				     sreq);
}

/* The receiver reads the first part of our data and asks us to write the
 * rest into its memory meanwhile (its PUSH, checked against this request in
 * bip_progress.c): one copy, at once, then the answer. Our send completes
 * as before, on its ACK once its own read is done too. A write that fails
 * says so, and the receiver reads that part itself. */
int MPIDI_BIP_send_push(int node, MPIR_Request *sreq,
			const MPIDI_BIP_ctl_push_t *push)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_ctl_ack_t done = {
		.h.type = MPIDI_BIP_CTL_PUSHED,
		.sreq = push->split,
		.offset = push->offset,
		.len = push->len,
	};
	int rc = bip_write(g->ep, node, push->addr,
			   (const char *)BIP_REQ(sreq).data + push->offset,
			   push->len);

	if (rc) {
		MPL_DBG_MSG_FMT(MPIDI_CH4_DBG_GENERAL, VERBOSE,
				(MPL_DBG_FDEST, "bip: writing for rank %d: %s",
				 node, bip_strerror(rc)));
		done.flags = MPIDI_BIP_ACK_FAILED;
	} else {
		g->cnt.pushed++;
	}
	return MPIDI_BIP_ctl_send(node, &done, sizeof(done));
}

/*
 * MPI_Cancel of a send, local as MPI requires of the MPI_Wait after it.
 * A short send is complete already. A three-way or rendezvous send whose
 * announcement never left our send FIFO was seen by no one: it is
 * cancelled. Any other may be matched by the receiver at this very moment,
 * so it stands (MPI lets a cancel fail), but its request completes now:
 * the data moves to a copy that the rest of the transfer reads (BIP
 * sends in flight included), and the netmod keeps the request until the
 * receiver has taken it all. One whose receiver reads the data from where
 * it is (MPIDI_BIP_REQ_READ) cannot move: a three-way one completes as any
 * send does, once its receiver's progress took the announcement and read
 * the data, matched or not; a rendezvous one asks its receiver to drop the
 * announcement (WITHDRAW) and completes with the answer: cancelled if no
 * receive had taken it, else once it was read. Either way the wait is for
 * the receiver's progress, never for its program to post a receive.
 */
int MPIDI_BIP_cancel_send(MPIR_Request *sreq)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(sreq);
	int mpi_errno = MPI_SUCCESS;
	char *copy;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	if (MPIR_Request_is_complete(sreq) ||
	    (r->flags & MPIDI_BIP_REQ_DETACHED))
		goto fn_exit;
	if (r->proto == MPIDI_BIP_PROTO_SHORT) {
		/* It lent its data: a copy goes instead, and it is over. */
		mpi_errno = MPIDI_BIP_send_fifo_unlend(r->node, sreq);
		goto fn_exit;
	}
	if (MPIDI_BIP_send_fifo_take(r->node, r->handle)) {
		MPIR_STATUS_SET_CANCEL_BIT(sreq->status, TRUE);
		mpi_errno = send_complete(sreq);
		goto fn_exit;
	}
	if (r->flags & MPIDI_BIP_REQ_READ) {
		MPIDI_BIP_ctl_ack_t withdraw = {
			.h.type = MPIDI_BIP_CTL_WITHDRAW,
			.sreq = r->handle,
		};

		if (r->proto != MPIDI_BIP_PROTO_RNDV ||
		    (r->flags & MPIDI_BIP_REQ_WITHDRAWN))
			goto fn_exit;
		r->flags |= MPIDI_BIP_REQ_WITHDRAWN;
		mpi_errno = MPIDI_BIP_ctl_send(r->node, &withdraw,
					       sizeof(withdraw));
		goto fn_exit;
	}
	if (r->data_sz && !r->pack) {
		copy = MPIDI_BIP_buf_get(r->data_sz);
		MPIR_ERR_CHKANDJUMP(!copy, mpi_errno, MPI_ERR_OTHER, "**nomem");
		memcpy(copy, r->data, r->data_sz);
		mpi_errno = MPIDI_BIP_lsends_move(sreq, r->data, copy);
		r->pack = copy;
		r->data = copy;
		MPIR_ERR_CHECK(mpi_errno);
	}
	r->flags |= MPIDI_BIP_REQ_DETACHED;
	MPIDI_BIP_global.detached++;
	MPIR_Request_add_ref(sreq);
	MPIDIU_request_complete(sreq);
fn_exit:
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

/* Sends that wait for a dead peer's answer (those with data on the way
 * failed with their long sends already). */
int MPIDI_BIP_send_peer_failed(int node, int err)
{
	MPIDI_BIP_handles_t *t = &MPIDI_BIP_global.sends;
	int mpi_errno = MPI_SUCCESS;

	for (uint32_t i = 0; i < t->cap && !mpi_errno; i++) {
		MPIR_Request *sreq = MPIDI_BIP_handle_at(t, i);

		if (sreq && BIP_REQ(sreq).node == node)
			mpi_errno = send_fail(sreq, err);
	}
	return mpi_errno;
}
