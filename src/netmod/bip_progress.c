/*
 * bip_progress.c - the netmod's progress engine: take every control message
 * out of BIP's queue (freeing its slot and credit at once) and act on it,
 * send what the FIFOs hold, move long messages along, and give the core away
 * when there is nothing to do.
 */
#include "mpidimpl.h"
#include "bip_state.h"

MPIDI_BIP_global_t MPIDI_BIP_global;

int MPIDI_BIP_error(int rc, const char *what)
{
	return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				    __LINE__, MPI_ERR_OTHER, "**bipfail",
				    "**bipfail %s %s", what, bip_strerror(rc));
}

/* The error of everything a dead peer takes down: it names the rank, its
 * process and host, and the wire that lost it. */
int MPIDI_BIP_proc_failed(int node)
{
	const MPIDI_BIP_peer_t *p = &MPIDI_BIP_global.peers[node];
	const char *wire = "?", *why;

	(void)bip_peer_wire(MPIDI_BIP_global.ep, node, &wire, &why);
	return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				    __LINE__, MPIX_ERR_PROC_FAILED,
				    "**bipdead", "**bipdead %d %d %s %s", node,
				    (int)p->pid, p->host, wire);
}

/* A dead peer takes down its transfers in order: what waits to be sent to
 * it, long transfers with it (whose owners fail), sends and active
 * messages waiting for its answer, and receives only it could match. */
int MPIDI_BIP_peer_failed(int node)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno, err;

	if (g->peers[node].failed)
		return MPI_SUCCESS;
	g->peers[node].failed = true;
	g->nfailed++;
	err = MPIDI_BIP_proc_failed(node);
	MPIDI_BIP_ctl_peer_failed(node, err);
	mpi_errno = MPIDI_BIP_long_peer_failed(node, err);
	if (!mpi_errno)
		mpi_errno = MPIDI_BIP_send_peer_failed(node, err);
	if (!mpi_errno)
		mpi_errno = MPIDI_BIP_am_peer_failed(node, err);
	if (!mpi_errno)
		mpi_errno = MPIDI_BIP_recv_peer_failed(node, err);
	return mpi_errno;
}

/* BIP counts the peers it lost: one look at each peer when that changed. */
static int check_peers(MPIDI_BIP_global_t *g)
{
	int lost = bip_peers_lost(g->ep), mpi_errno = MPI_SUCCESS;

	if (lost == g->lost_seen)
		return MPI_SUCCESS;
	g->lost_seen = lost;
	for (int i = 0; i < MPIR_Process.size && !mpi_errno; i++)
		if (bip_peer_gone(g->ep, i) == 1)
			mpi_errno = MPIDI_BIP_peer_failed(i);
	return mpi_errno;
}

/* A control message from node failed a check: count it, drop it, go on. */
static int drop(int node, int reason)
{
	MPIDI_BIP_global.cnt.dropped[reason]++;
	MPL_DBG_MSG_FMT(MPIDI_CH4_DBG_GENERAL, VERBOSE,
			(MPL_DBG_FDEST, "bip: dropped a control message from "
					"node %d: %s",
			 node, MPIDI_BIP_ctl_drop_name(reason)));
	return MPI_SUCCESS;
}

static int am_handler_ok(unsigned id)
{
	return id < MPIDIG_HANDLER_STATIC_MAX &&
	       MPIDIG_global.target_msg_cbs[id] != NULL;
}

/* The request an answer names, by its handle: it must be a live request
 * of ours of that kind, to that node, and the bytes asked for within it.
 * The pieces of an eager message: one message at a time from a peer, no
 * byte beyond its size. */
static int named_request(int node, const MPIDI_BIP_ctl_msg_t *m,
			 MPIR_Request **req_p)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	const MPIDI_BIP_eager_t *e = &g->peers[node].eager;
	MPIR_Request *req;
	uint64_t data_sz;

	switch (m->h.type) {
	case MPIDI_BIP_CTL_EAGER:
		return e->active ? MPIDI_BIP_CTL_DROP_PIECE : MPIDI_BIP_CTL_OK;
	case MPIDI_BIP_CTL_MORE:
		return !e->active || m->h.len > e->data_sz - e->got
			       ? MPIDI_BIP_CTL_DROP_PIECE
			       : MPIDI_BIP_CTL_OK;
	case MPIDI_BIP_CTL_ACK:
		req = MPIDI_BIP_handle_get(&g->sends, m->ack.sreq);
		if (!req || req->dev.ch4.netmod.bip.node != node)
			return MPIDI_BIP_CTL_DROP_HANDLE;
		/* Only data we let it read can it say it read or chose not
		 * to, only a send we withdrew can it say it dropped. */
		if (((m->ack.flags &
		      (MPIDI_BIP_ACK_READ | MPIDI_BIP_ACK_CHOSEN)) &&
		     !(req->dev.ch4.netmod.bip.flags & MPIDI_BIP_REQ_READ)) ||
		    ((m->ack.flags & MPIDI_BIP_ACK_WITHDRAWN) &&
		     !(req->dev.ch4.netmod.bip.flags &
		       MPIDI_BIP_REQ_WITHDRAWN)))
			return MPIDI_BIP_CTL_DROP_RANGE;
		data_sz = req->dev.ch4.netmod.bip.data_sz;
		break;
	case MPIDI_BIP_CTL_PUSH:
		/* Only data we let it read may it ask us to write. */
		req = MPIDI_BIP_handle_get(&g->sends, m->push.sreq);
		if (!req || req->dev.ch4.netmod.bip.node != node)
			return MPIDI_BIP_CTL_DROP_HANDLE;
		if (!(req->dev.ch4.netmod.bip.flags & MPIDI_BIP_REQ_READ) ||
		    m->push.offset + m->push.len >
			    req->dev.ch4.netmod.bip.data_sz)
			return MPIDI_BIP_CTL_DROP_RANGE;
		*req_p = req;
		return MPIDI_BIP_CTL_OK;
	case MPIDI_BIP_CTL_PUSHED: {
		/* The part we asked that node for, and no other. */
		const MPIDI_BIP_split_t *sp =
			MPIDI_BIP_handle_get(&g->splits, m->ack.sreq);

		if (!sp || sp->node != node)
			return MPIDI_BIP_CTL_DROP_HANDLE;
		return m->ack.offset != sp->at ||
				       m->ack.len != sp->len - sp->at
			       ? MPIDI_BIP_CTL_DROP_RANGE
			       : MPIDI_BIP_CTL_OK;
	}
	case MPIDI_BIP_CTL_AM_CTS:
		req = MPIDI_BIP_handle_get(&g->am_sends, m->ack.sreq);
		if (!req || req->dev.ch4.am.netmod_am.bip.node != node)
			return MPIDI_BIP_CTL_DROP_HANDLE;
		/* One answer per message: its data already leaving says the
		 * receiver answered before. */
		if (MPIDI_BIP_lsend_pending(req))
			return MPIDI_BIP_CTL_DROP_RANGE;
		data_sz = req->dev.ch4.am.netmod_am.bip.data_sz;
		break;
	default:
		return MPIDI_BIP_CTL_OK;
	}
	/* offset and len are within an MPI_Aint (decode): no wrap. */
	if (m->ack.offset + m->ack.len > data_sz)
		return MPIDI_BIP_CTL_DROP_RANGE;
	*req_p = req;
	return MPIDI_BIP_CTL_OK;
}

/* One control message of len bytes from node (SHORT ones come by dispatch's
 * shorter way): its fixed part is copied and
 * checked, and the request it names looked up, before anything is used. A
 * malformed one is dropped and counted, and gives no credit back (its
 * sender did not count it either). Payloads stay where they are, read
 * within the checked lengths. */
static int dispatch_any(int node, const void *msg, size_t len)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	const MPIDI_BIP_ctl_peer_t peer = {
		.credits = g->peers[node].credits,
		.ncredits = g->peers[node].ncredits,
		.rts3_max = g->peers[node].rts3_max,
		.handler_ok = am_handler_ok,
	};
	MPIDI_BIP_ctl_msg_t m;
	MPIR_Request *req = NULL;
	const char *payload;
	size_t fixed;
	int why, mpi_errno, rc;

	why = MPIDI_BIP_ctl_decode(msg, len, &peer, &m, &fixed);
	if (!why)
		why = named_request(node, &m, &req);
	if (why)
		return drop(node, why);
	payload = (const char *)msg + fixed;
	MPIDI_BIP_ctl_arrived(node, &m.h);
	switch (m.h.type) {
	case MPIDI_BIP_CTL_SHORT:
		/* A header its sender rewrote after dispatch looked at it:
		 * what this copy says goes. */
		mpi_errno = MPIDI_BIP_recv_short(node, &m.h, payload);
		break;
	case MPIDI_BIP_CTL_RTS3:
	case MPIDI_BIP_CTL_RNDV:
		mpi_errno = MPIDI_BIP_recv_rts(node, &m.rts);
		break;
	case MPIDI_BIP_CTL_EAGER:
		mpi_errno = MPIDI_BIP_recv_eager(node, &m.rts, payload);
		break;
	case MPIDI_BIP_CTL_MORE:
		mpi_errno = MPIDI_BIP_recv_more(node, &m.h, payload);
		break;
	case MPIDI_BIP_CTL_ACK:
		mpi_errno = MPIDI_BIP_send_ack(node, req, &m.ack);
		break;
	case MPIDI_BIP_CTL_WITHDRAW:
		mpi_errno = MPIDI_BIP_recv_withdraw(node, m.ack.sreq);
		break;
	case MPIDI_BIP_CTL_PUSH:
		mpi_errno = MPIDI_BIP_send_push(node, req, &m.push);
		break;
	case MPIDI_BIP_CTL_PUSHED:
		mpi_errno = MPIDI_BIP_recv_pushed(node, &m.ack);
		break;
	case MPIDI_BIP_CTL_AM:
		mpi_errno = MPIDI_BIP_am_arrived(node, &m.am, payload);
		break;
	case MPIDI_BIP_CTL_AM_RTS:
		mpi_errno = MPIDI_BIP_am_rts(node, &m.am, payload);
		break;
	case MPIDI_BIP_CTL_AM_CTS:
		mpi_errno = MPIDI_BIP_am_cts(node, req, &m.ack);
		break;
	default: /* credits only: counted on arrival */
		mpi_errno = MPI_SUCCESS;
		break;
	}
	/* Rule: the message has left BIP's queue: B++ (even if acting on it
	 * failed: its slot is free all the same). */
	rc = MPIDI_BIP_ctl_consumed(node, &m.h);
	return mpi_errno ? mpi_errno : rc;
}

/* SHORT, the commonest message, is checked as MPIDI_BIP_ctl_decode checks
 * it (MPIDI_BIP_ctl_short_check) in a copy of its header alone: no copy
 * into the union, no switch on its type, no request to look up. */
static int dispatch(int node, const void *msg, size_t len)
{
	const MPIDI_BIP_peer_t *p = &MPIDI_BIP_global.peers[node];
	MPIDI_BIP_ctl_t h;
	int why, mpi_errno, rc;

	if (len < sizeof(h))
		return dispatch_any(node, msg, len);
	memcpy(&h, msg, sizeof(h));
	if (h.type != MPIDI_BIP_CTL_SHORT)
		return dispatch_any(node, msg, len);
	why = MPIDI_BIP_ctl_short_check(&h, len, p->ncredits - p->credits);
	if (why)
		return drop(node, why);
	MPIDI_BIP_ctl_arrived(node, &h);
	mpi_errno = MPIDI_BIP_recv_short(node, &h,
					 (const char *)msg + len - h.len);
	/* As in dispatch_any: the slot is free even if that failed. */
	rc = MPIDI_BIP_ctl_consumed(node, &h);
	return mpi_errno ? mpi_errno : rc;
}

/* A turn takes at most this many control messages: BIP hands small
 * messages from the peers of this host over as they arrive (bip_poll(3)),
 * and a turn that never ends would starve the rest of progress. */
#define DRAIN_MAX 64

/* bip_drain's handler: the message is dispatched; an error ends the
 * drain, and is kept for drain_control.
 * Rule: a message that completed a receive of MPIDI_BIP_DRAIN_STOP_MIN
 * bytes or more and left none posted ends the turn too. What follows it
 * could only be unexpected, and an unexpected message is copied out of
 * the ring into a buffer of its own, then again into its receive; left in
 * the ring, it meets the receive the caller is about to post and is
 * copied once. Each turn still takes at least the message at the head
 * (none waits for ever). Below that size a copy costs less than the turn
 * it saves. 256 blocking sends to a rank that starts receiving late, 2
 * ranks, medians of 9 interleaved runs, us a message: 2 KiB 0.287 ->
 * 0.220, 8 KiB 0.609 -> 0.457; 8 B 0.164 -> 0.176 and 256 B 0.174 ->
 * 0.185 if every size stopped. */
static int drain_one(void *arg, const void *data, size_t len, int node)
{
	int *mpi_errno = arg;
	uint64_t large = MPIDI_BIP_global.recvs_large;

	*mpi_errno = dispatch(node, data, len);
	if (*mpi_errno)
		return *mpi_errno;
	return MPIDI_BIP_global.recvs_large != large &&
	       !MPIDI_BIP_global.posted_head;
}

/* One poll of BIP, then the control messages out of BIP's queue, at most
 * DRAIN_MAX: one call for both (bip_drain). */
static int drain_control(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS, n;

	n = bip_drain(g->ep, DRAIN_MAX, drain_one, &mpi_errno);
	MPIR_ERR_CHECK(mpi_errno);
	if (n > 0)
		*progress += n;
	/* Credits make an overflow impossible: one means a bug, say so. */
	else if (n == -BIP_EOVERFLOW)
		MPL_DBG_MSG(MPIDI_CH4_DBG_GENERAL, VERBOSE,
			    "bip: small-message queue overflowed");
	else
		BIP_CHECK(n, "bip_drain");
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

int MPIDI_BIP_progress(int vci, int blocking)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS, progress = 0;

	/* Reads a receive call left due first: what came since (our sends'
	 * answers) would hide that those sends were in flight at the time
	 * (bip_recv.c fetch_later). */
	if (g->due_head) {
		mpi_errno = MPIDI_BIP_recv_fetch_due(&progress);
		MPIR_ERR_CHECK(mpi_errno);
	}
	mpi_errno = drain_control(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	/* Before the FIFOs: the ACKs of these reads may queue there. */
	if (g->reads.n) {
		mpi_errno = MPIDI_BIP_recv_reads_done();
		MPIR_ERR_CHECK(mpi_errno);
	}
	if (MPIDI_BIP_send_fifo_busy()) {
		mpi_errno = MPIDI_BIP_send_fifo_drain(&progress);
		MPIR_ERR_CHECK(mpi_errno);
	}
	if (MPIDI_BIP_long_busy()) {
		mpi_errno = MPIDI_BIP_long_progress(&progress);
		MPIR_ERR_CHECK(mpi_errno);
	}
	if (g->nheld && !progress) {
		mpi_errno = MPIDI_BIP_recv_held_due(&progress);
		MPIR_ERR_CHECK(mpi_errno);
	}
	/* Held messages fetched just now. */
	if (g->reads.n) {
		mpi_errno = MPIDI_BIP_recv_reads_done();
		MPIR_ERR_CHECK(mpi_errno);
	}
	mpi_errno = check_peers(g);
	MPIR_ERR_CHECK(mpi_errno);
	/* MPICH polls in a loop: after a while with nothing to do, BIP's idle
	 * policy gives the core away. Asleep only in a blocking call (a wait,
	 * MPI_Probe: our MPICH patch says which): a test or an iprobe returns
	 * at once, its caller may wait for something that is not a packet.
	 * Never asleep with threads: the sleeper would hold MPICH's lock. */
	bip_idle(g->ep, progress, blocking && !MPIR_ThreadInfo.isThreaded);
fn_exit:
	return mpi_errno;
fn_fail:
	/* The reads started before the failure are not left waiting. */
	(void)MPIDI_BIP_recv_reads_done();
	goto fn_exit;
}
