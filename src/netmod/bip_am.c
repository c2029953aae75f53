/*
 * bip_am.c - MPICH's active messages over BIP.
 *
 * An active message whose header and data fit one BIP small message goes
 * as one control message (AM). A larger one uses the three-way protocol of
 * MPI-BIP: AM_RTS carries the header; the receiver hands it to MPIDIG at
 * once (so MPI's ordering holds), posts a BIP long receive on a free tag -
 * straight into the user buffer when it is contiguous, else into a bounce
 * buffer - and answers AM_CTS naming the tag; the sender then sends the data
 * as a BIP long message. Requests BIP cannot take yet wait in software
 * FIFOs: control messages when BIP's send slots are full, receives when no
 * BIP tag is free (the CTS goes out when the receive leaves the FIFO).
 */
#include "mpidimpl.h"
#include "bip_state.h"

#include <sched.h>

MPIDI_BIP_global_t MPIDI_BIP_global;

#define BIP_CHECK(rc, what)                                                    \
	do {                                                                   \
		if ((rc) < 0)                                                  \
			MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER,         \
					     "**bipfail", "**bipfail %s %s",   \
					     (what), bip_strerror(rc));        \
	} while (0)

/* --- control messages and the send FIFO ---------------------------------- */

static int ctlq_push(MPIDI_BIP_ctlq_t **head, MPIDI_BIP_ctlq_t **tail,
		     int node, const void *msg, size_t len)
{
	MPIDI_BIP_ctlq_t *q = MPL_malloc(sizeof(*q) + len, MPL_MEM_BUFFER);

	if (!q)
		return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					    __func__, __LINE__, MPI_ERR_OTHER,
					    "**nomem", 0);
	q->next = NULL;
	q->node = node;
	q->len = len;
	memcpy(q->msg, msg, len);
	if (*tail)
		(*tail)->next = q;
	else
		*head = q;
	*tail = q;
	return MPI_SUCCESS;
}

static MPIDI_BIP_ctlq_t *ctlq_pop(MPIDI_BIP_ctlq_t **head,
				  MPIDI_BIP_ctlq_t **tail)
{
	MPIDI_BIP_ctlq_t *q = *head;

	*head = q->next;
	if (!*head)
		*tail = NULL;
	return q;
}

/* Send a control message, or queue a copy if BIP has no slot free (the
 * FIFO keeps order: nothing overtakes what is queued for a node). Messages
 * to ourselves never touch BIP: progress dispatches them from self_head. */
static int ctl_send(int node, const void *msg, size_t len)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS, rc = -BIP_EAGAIN;

	if (node == MPIR_Process.rank) {
		g->cnt.to_self++;
		return ctlq_push(&g->self_head, &g->self_tail, node, msg, len);
	}
	if (!g->sfifo_head)
		rc = bip_send_try(g->ep, node, msg, len);
	if (rc == -BIP_EAGAIN) {
		if (++g->cnt.sfifo_depth > g->cnt.sfifo_max)
			g->cnt.sfifo_max = g->cnt.sfifo_depth;
		return ctlq_push(&g->sfifo_head, &g->sfifo_tail, node, msg,
				 len);
	}
	BIP_CHECK(rc, "bip_send");
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

static int drain_send_fifo(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS;

	while (g->sfifo_head) {
		MPIDI_BIP_ctlq_t *q = g->sfifo_head;
		int rc = bip_send_try(g->ep, q->node, q->msg, q->len);

		if (rc == -BIP_EAGAIN)
			break;
		BIP_CHECK(rc, "bip_send");
		MPL_free(ctlq_pop(&g->sfifo_head, &g->sfifo_tail));
		g->cnt.sfifo_depth--;
		(*progress)++;
	}
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

/* --- sending active messages --------------------------------------------- */

int MPIDI_BIP_am_send_hdr(int node, int handler_id, const void *am_hdr,
			  MPI_Aint am_hdr_sz, int src_vci, int dst_vci)
{
	char msg[BIP_SMALL_MAX];
	MPIDI_BIP_ctl_t *ctl = (MPIDI_BIP_ctl_t *)msg;

	MPIR_Assert(am_hdr_sz <= (MPI_Aint)MPIDI_BIP_AM_INLINE_MAX);
	*ctl = (MPIDI_BIP_ctl_t){
		.type = MPIDI_BIP_CTL_AM,
		.handler_id = (uint8_t)handler_id,
		.src_vci = (uint8_t)src_vci,
		.dst_vci = (uint8_t)dst_vci,
		.am_hdr_sz = (uint32_t)am_hdr_sz,
		.src = (uint32_t)MPIR_Process.rank,
	};
	memcpy(ctl + 1, am_hdr, am_hdr_sz);
	MPIDI_BIP_global.cnt.am_short++;
	return ctl_send(node, msg, sizeof(*ctl) + am_hdr_sz);
}

int MPIDI_BIP_am_isend(int node, int handler_id, const void *am_hdr,
		       MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
		       MPI_Datatype datatype, int src_vci, int dst_vci,
		       MPIR_Request *sreq)
{
	MPIDI_BIP_am_request_t *am = &sreq->dev.ch4.am.netmod_am.bip;
	char msg[BIP_SMALL_MAX];
	MPIDI_BIP_ctl_t *ctl = (MPIDI_BIP_ctl_t *)msg;
	int mpi_errno = MPI_SUCCESS, dt_contig;
	size_t data_sz;
	MPI_Aint true_lb, packed;
	MPIR_Datatype *dt_ptr;

	MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr,
				true_lb);
	MPIR_Assert(am_hdr_sz <= (MPI_Aint)MPIDI_BIP_AM_INLINE_MAX);
	*ctl = (MPIDI_BIP_ctl_t){
		.type = MPIDI_BIP_CTL_AM,
		.handler_id = (uint8_t)handler_id,
		.src_vci = (uint8_t)src_vci,
		.dst_vci = (uint8_t)dst_vci,
		.am_hdr_sz = (uint32_t)am_hdr_sz,
		.data_sz = data_sz,
		.src = (uint32_t)MPIR_Process.rank,
	};
	memcpy(ctl + 1, am_hdr, am_hdr_sz);

	if (am_hdr_sz + data_sz <= MPIDI_BIP_AM_INLINE_MAX) {
		/* Short: everything in one control message; BIP copied it, so
		 * the send is complete locally. */
		char *p = (char *)(ctl + 1) + am_hdr_sz;

		if (dt_contig)
			memcpy(p, MPIR_get_contig_ptr(data, true_lb), data_sz);
		else {
			mpi_errno = MPIR_Typerep_pack(data, count, datatype, 0,
						      p, data_sz, &packed);
			MPIR_ERR_CHECK(mpi_errno);
		}
		mpi_errno = ctl_send(node, msg,
				     sizeof(*ctl) + am_hdr_sz + data_sz);
		MPIR_ERR_CHECK(mpi_errno);
		MPIDI_BIP_global.cnt.am_short++;
		mpi_errno = MPIDIG_global.origin_cbs[handler_id](sreq);
		goto fn_exit;
	}

	/* Three-way: announce; the data follows the receiver's CTS. */
	am->handler_id = handler_id;
	am->node = node;
	am->data_sz = data_sz;
	if (dt_contig) {
		am->data = MPIR_get_contig_ptr(data, true_lb);
	} else {
		am->pack_buf = MPL_malloc(data_sz, MPL_MEM_BUFFER);
		MPIR_ERR_CHKANDJUMP(!am->pack_buf, mpi_errno, MPI_ERR_OTHER,
				    "**nomem");
		mpi_errno = MPIR_Typerep_pack(data, count, datatype, 0,
					      am->pack_buf, data_sz, &packed);
		MPIR_ERR_CHECK(mpi_errno);
		am->data = am->pack_buf;
	}
	ctl->type = MPIDI_BIP_CTL_AM_RTS;
	ctl->sreq = (uint64_t)(uintptr_t)sreq;
	MPIDI_BIP_global.cnt.am_3way++;
	mpi_errno = ctl_send(node, msg, sizeof(*ctl) + am_hdr_sz);
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

void MPIDI_BIP_am_request_finalize(MPIR_Request *req)
{
	MPL_free(req->dev.ch4.am.netmod_am.bip.pack_buf);
	req->dev.ch4.am.netmod_am.bip.pack_buf = NULL;
}

/* CTS received: send the data on the receiver's tag. */
static int start_lsend(const MPIDI_BIP_ctl_t *cts)
{
	MPIDI_BIP_lsend_t *s = MPL_malloc(sizeof(*s), MPL_MEM_BUFFER);
	int mpi_errno = MPI_SUCCESS;

	MPIR_ERR_CHKANDJUMP(!s, mpi_errno, MPI_ERR_OTHER, "**nomem");
	s->sreq = (MPIR_Request *)(uintptr_t)cts->sreq;
	s->tag = (int)cts->tag;
	s->posted = false;
	s->next = MPIDI_BIP_global.lsends;
	MPIDI_BIP_global.lsends = s;
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

/* Post what BIP can take, complete what BIP finished. */
static int poll_lsends(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS;

	for (MPIDI_BIP_lsend_t **link = &g->lsends, *s; (s = *link);) {
		MPIDI_BIP_am_request_t *am = &s->sreq->dev.ch4.am.netmod_am.bip;
		int rc, done = 0;

		if (!s->posted) {
			rc = bip_ilsend(g->ep, am->node, s->tag, am->data,
					am->data_sz, &s->breq);
			if (rc == -BIP_EAGAIN) {
				link = &s->next;
				continue;
			}
			BIP_CHECK(rc, "bip_ilsend");
			s->posted = true;
		}
		rc = bip_test(g->ep, &s->breq, &done, NULL);
		BIP_CHECK(rc, "long send");
		if (!done) {
			link = &s->next;
			continue;
		}
		*link = s->next;
		(*progress)++;
		mpi_errno = MPIDIG_global.origin_cbs[am->handler_id](s->sreq);
		MPL_free(s);
		MPIR_ERR_CHECK(mpi_errno);
	}
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

/* --- receiving large active messages ------------------------------------ */

/* A tag is free: post the long receive and tell the sender (CTS). */
static int post_lrecv(MPIDI_BIP_lrecv_t *r, int tag)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDIG_rreq_async_t *a = &MPIDIG_REQUEST(r->rreq, req->recv_async);
	MPIDI_BIP_ctl_t cts = {
		.type = MPIDI_BIP_CTL_AM_CTS,
		.sreq = r->sreq,
		.tag = (uint32_t)tag,
		.src = (uint32_t)MPIR_Process.rank,
	};
	void *dst;
	int mpi_errno = MPI_SUCCESS, rc;

	/* Contiguous and large enough: the data lands in place. */
	if (a->recv_type == MPIDIG_RECV_CONTIG && !r->rreq->status.MPI_ERROR &&
	    a->iov_one.iov_len >= (size_t)r->data_sz) {
		dst = a->iov_one.iov_base;
	} else {
		r->tmp = MPL_malloc(r->data_sz, MPL_MEM_BUFFER);
		MPIR_ERR_CHKANDJUMP(!r->tmp, mpi_errno, MPI_ERR_OTHER,
				    "**nomem");
		dst = r->tmp;
	}
	rc = bip_ilrecv(g->ep, tag, dst, r->data_sz, &r->breq);
	BIP_CHECK(rc, "bip_ilrecv");
	r->tag = tag;
	g->tag_owner[tag] = r;
	mpi_errno = ctl_send(r->src, &cts, sizeof(cts));
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

static int free_tag(void)
{
	for (int t = 0; t < MPIDI_BIP_global.ntags; t++)
		if (!MPIDI_BIP_global.tag_owner[t])
			return t;
	return -1;
}

/* A large message to ourselves: one copy, both sides complete. */
static int finish_self(MPIDI_BIP_lrecv_t *r)
{
	MPIR_Request *sreq = (MPIR_Request *)(uintptr_t)r->sreq;
	MPIDI_BIP_am_request_t *am = &sreq->dev.ch4.am.netmod_am.bip;
	int mpi_errno, done;

	done = MPIDIG_recv_copy_seg((void *)am->data, (MPI_Aint)r->data_sz,
				    r->rreq);
	MPIR_Assert(done);
	mpi_errno = MPIDIG_REQUEST(r->rreq, req->target_cmpl_cb)(r->rreq);
	MPL_free(r);
	if (mpi_errno)
		return mpi_errno;
	return MPIDIG_global.origin_cbs[am->handler_id](sreq);
}

/* RTS received: MPIDIG matches the header now, the data comes later. */
static int handle_rts(const MPIDI_BIP_ctl_t *ctl, void *am_hdr)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_lrecv_t *r;
	int attr = MPIDIG_AM_ATTR__IS_ASYNC, tag, mpi_errno = MPI_SUCCESS;

	r = MPL_calloc(1, sizeof(*r), MPL_MEM_BUFFER);
	MPIR_ERR_CHKANDJUMP(!r, mpi_errno, MPI_ERR_OTHER, "**nomem");
	r->src = (int)ctl->src;
	r->sreq = ctl->sreq;
	r->data_sz = ctl->data_sz;
	MPIDIG_AM_ATTR_SET_VCIS(attr, ctl->src_vci, ctl->dst_vci);
	mpi_errno = MPIDIG_global.target_msg_cbs[ctl->handler_id](
		am_hdr, NULL, (MPI_Aint)ctl->data_sz, attr, &r->rreq);
	MPIR_ERR_CHECK(mpi_errno);
	MPIR_Assert(r->rreq);
	MPIDIG_recv_setup(r->rreq);
	if (r->src == MPIR_Process.rank) {
		/* From ourselves: the data is right here, in the send. */
		mpi_errno = finish_self(r);
		goto fn_exit;
	}

	tag = free_tag();
	if (tag >= 0) {
		mpi_errno = post_lrecv(r, tag);
	} else {
		/* Receive FIFO: waits for a tag; its CTS goes out then. */
		if (++g->cnt.rfifo_depth > g->cnt.rfifo_max)
			g->cnt.rfifo_max = g->cnt.rfifo_depth;
		if (g->rfifo_tail)
			g->rfifo_tail->next = r;
		else
			g->rfifo_head = r;
		g->rfifo_tail = r;
	}
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

static int finish_lrecv(MPIDI_BIP_lrecv_t *r)
{
	MPIR_Request *rreq = r->rreq;
	int mpi_errno = MPI_SUCCESS;

	if (r->tmp) {
		int done = MPIDIG_recv_copy_seg(r->tmp, (MPI_Aint)r->data_sz,
						rreq);

		MPIR_Assert(done);
		MPL_free(r->tmp);
	} else {
		/* Landed in place: only the bookkeeping of a copy is left. */
		MPIDIG_REQUEST(rreq, req->recv_async).in_data_sz = 0;
	}
	mpi_errno = MPIDIG_REQUEST(rreq, req->target_cmpl_cb)(rreq);
	MPL_free(r);
	return mpi_errno;
}

static int poll_lrecvs(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS;

	for (int t = 0; t < g->ntags; t++) {
		MPIDI_BIP_lrecv_t *r = g->tag_owner[t];
		int done = 0, rc;

		if (!r)
			continue;
		rc = bip_test(g->ep, &r->breq, &done, NULL);
		BIP_CHECK(rc, "long receive");
		if (!done)
			continue;
		g->tag_owner[t] = NULL;
		(*progress)++;
		mpi_errno = finish_lrecv(r);
		MPIR_ERR_CHECK(mpi_errno);
		/* The tag is free: the oldest waiting receive takes it. */
		if (g->rfifo_head) {
			r = g->rfifo_head;
			g->rfifo_head = r->next;
			if (!g->rfifo_head)
				g->rfifo_tail = NULL;
			g->cnt.rfifo_depth--;
			mpi_errno = post_lrecv(r, t);
			MPIR_ERR_CHECK(mpi_errno);
		}
	}
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

/* --- progress -------------------------------------------------------- */

/* One control message, from BIP's queue or from the self queue. */
static int dispatch(const MPIDI_BIP_ctl_t *ctl, size_t len)
{
	void *am_hdr = (void *)(ctl + 1);
	int attr = 0;

	MPIR_Assert(len >= sizeof(*ctl));
	switch (ctl->type) {
	case MPIDI_BIP_CTL_AM:
		MPIDIG_AM_ATTR_SET_VCIS(attr, ctl->src_vci, ctl->dst_vci);
		return MPIDIG_global.target_msg_cbs[ctl->handler_id](
			am_hdr, (char *)am_hdr + ctl->am_hdr_sz,
			(MPI_Aint)ctl->data_sz, attr, NULL);
	case MPIDI_BIP_CTL_AM_RTS:
		return handle_rts(ctl, am_hdr);
	case MPIDI_BIP_CTL_AM_CTS:
		return start_lsend(ctl);
	}
	MPIR_Assert(0);
	return MPI_SUCCESS;
}

/* Messages to ourselves, in the order they were sent. */
static int drain_self(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS;

	while (g->self_head && mpi_errno == MPI_SUCCESS) {
		MPIDI_BIP_ctlq_t *q = ctlq_pop(&g->self_head, &g->self_tail);

		mpi_errno = dispatch((const MPIDI_BIP_ctl_t *)q->msg, q->len);
		MPL_free(q);
		(*progress)++;
	}
	return mpi_errno;
}

/* Take every control message out of BIP's queue at once (frees the slot). */
static int drain_control(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	const void *data;
	struct bip_status st;
	int mpi_errno = MPI_SUCCESS, len;

	while ((len = bip_peek(g->ep, &data, &st)) >= 0) {
		mpi_errno = dispatch(data, (size_t)len);
		bip_consume(g->ep);
		(*progress)++;
		MPIR_ERR_CHECK(mpi_errno);
	}
	/* The queue overflowing would mean a missing credit: say so. */
	if (len == -BIP_EOVERFLOW)
		MPL_DBG_MSG(MPIDI_CH4_DBG_GENERAL, VERBOSE,
			    "bip: small-message queue overflowed");
	else if (len != -BIP_EAGAIN && len != -BIP_EPEERGONE)
		BIP_CHECK(len, "bip_peek");
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

int MPIDI_BIP_progress(int vci, int blocking)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS, progress = 0;

	mpi_errno = drain_self(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	mpi_errno = drain_control(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	mpi_errno = drain_send_fifo(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	mpi_errno = poll_lsends(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	mpi_errno = poll_lrecvs(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	/* MPICH polls in a loop: after a while with nothing to do, give the
	 * core away (BIP's idle policy: yield, then sleep until traffic). */
	if (progress) {
		g->idle = 0;
	} else if (++g->idle > 2000) {
		bip_idle_wait(g->ep, g->idle > 20000 ? 1000 : 0);
		if (g->idle <= 20000)
			sched_yield();
	}
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}
