/*
 * bip_am.c - MPICH's active messages (MPIDIG: RMA, partitioned
 * communication, ...) over the same control and long-message machinery as
 * point-to-point.
 *
 * An active message whose header and data fit one control message goes as
 * AM. A larger one uses the three-way protocol: AM_RTS carries the header;
 * the receiver hands it to MPIDIG at once (so MPI's ordering holds), posts a
 * BIP long receive - straight into the user buffer when it is contiguous,
 * else into a bounce buffer - and answers AM_CTS naming the tag; the sender
 * then sends the data as a BIP long message.
 */
#include "mpidimpl.h"
#include "bip_state.h"

MPL_COMPILE_TIME_ASSERT(sizeof(MPIDI_BIP_ctl_am_t) <= MPIDI_BIP_CTL_ROOM);
MPL_COMPILE_TIME_ASSERT(sizeof(MPIDI_BIP_ctl_ack_t) <= MPIDI_BIP_CTL_ROOM);
MPL_COMPILE_TIME_ASSERT(sizeof(MPIDI_BIP_ctl_rts_t) <= MPIDI_BIP_CTL_ROOM);

/* Header first, then the MPIDIG header: returns where data would go. */
static char *am_format(char *msg, int type, int handler_id,
		       const void *am_hdr, MPI_Aint am_hdr_sz, int src_vci,
		       int dst_vci, uint64_t data_sz)
{
	MPIDI_BIP_ctl_am_t *am = (MPIDI_BIP_ctl_am_t *)msg;

	MPIR_Assert(am_hdr_sz <= (MPI_Aint)MPIDI_BIP_AM_INLINE_MAX);
	*am = (MPIDI_BIP_ctl_am_t){
		.h.type = (uint8_t)type,
		.handler_id = (uint8_t)handler_id,
		.src_vci = (uint8_t)src_vci,
		.dst_vci = (uint8_t)dst_vci,
		.am_hdr_sz = (uint32_t)am_hdr_sz,
		.data_sz = data_sz,
	};
	memcpy(am + 1, am_hdr, am_hdr_sz);
	return (char *)(am + 1) + am_hdr_sz;
}

int MPIDI_BIP_am_send_hdr(int node, int handler_id, const void *am_hdr,
			  MPI_Aint am_hdr_sz, int src_vci, int dst_vci)
{
	char msg[BIP_SMALL_MAX];
	char *end = am_format(msg, MPIDI_BIP_CTL_AM, handler_id, am_hdr,
			      am_hdr_sz, src_vci, dst_vci, 0);

	MPIDI_BIP_global.cnt.am_short++;
	return MPIDI_BIP_ctl_send(node, msg, (size_t)(end - msg));
}

int MPIDI_BIP_am_isend(int node, int handler_id, const void *am_hdr,
		       MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
		       MPI_Datatype datatype, int src_vci, int dst_vci,
		       MPIR_Request *sreq)
{
	MPIDI_BIP_am_request_t *am = &sreq->dev.ch4.am.netmod_am.bip;
	char msg[BIP_SMALL_MAX], *p;
	int mpi_errno = MPI_SUCCESS, dt_contig;
	size_t data_sz;
	MPI_Aint true_lb, packed;
	MPIR_Datatype *dt_ptr;

	MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr,
				true_lb);
	if (am_hdr_sz + data_sz <= MPIDI_BIP_AM_INLINE_MAX) {
		/* Inline: BIP copies it (contiguous data straight from the
		 * user buffer), the send is complete locally. */
		const void *src = MPIR_get_contig_ptr(data, true_lb);

		p = am_format(msg, MPIDI_BIP_CTL_AM, handler_id, am_hdr,
			      am_hdr_sz, src_vci, dst_vci, data_sz);
		if (!dt_contig) {
			mpi_errno = MPIR_Typerep_pack(data, count, datatype, 0,
						      p, data_sz, &packed);
			MPIR_ERR_CHECK(mpi_errno);
			src = p;
		}
		mpi_errno = MPIDI_BIP_ctl_sendv(node, msg, (size_t)(p - msg),
						src, data_sz);
		MPIR_ERR_CHECK(mpi_errno);
		MPIDI_BIP_global.cnt.am_short++;
		mpi_errno = MPIDIG_global.origin_cbs[handler_id](sreq);
		goto fn_exit;
	}

	/* Three-way: announce; the data follows the receiver's AM_CTS. */
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
	am->handle = MPIDI_BIP_handle_new(&MPIDI_BIP_global.am_sends, sreq);
	MPIR_ERR_CHKANDJUMP(!am->handle, mpi_errno, MPI_ERR_OTHER, "**nomem");
	p = am_format(msg, MPIDI_BIP_CTL_AM_RTS, handler_id, am_hdr, am_hdr_sz,
		      src_vci, dst_vci, data_sz);
	((MPIDI_BIP_ctl_am_t *)msg)->sreq = am->handle;
	MPIDI_BIP_global.cnt.am_3way++;
	mpi_errno = MPIDI_BIP_ctl_send(node, msg, (size_t)(p - msg));
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

/* --- arriving ------------------------------------------------------------ */

/* MPIDIG's handlers read their header in place, and more than once: they
 * get a private copy (BIP may lend its ring, which the sender can still
 * write: bip_peek). The data is only copied out. */
int MPIDI_BIP_am_arrived(int node, const MPIDI_BIP_ctl_am_t *am,
			 const void *payload)
{
	_Alignas(max_align_t) char am_hdr[MPIDI_BIP_AM_INLINE_MAX];
	int attr = 0;

	memcpy(am_hdr, payload, am->am_hdr_sz);
	MPIDIG_AM_ATTR_SET_VCIS(attr, am->src_vci, am->dst_vci);
	return MPIDIG_global.target_msg_cbs[am->handler_id](
		am_hdr, (char *)payload + am->am_hdr_sz,
		(MPI_Aint)am->data_sz, attr, NULL);
}

/* The announced message is over: its origin callback completes it (with
 * err in its status when it failed). */
static int am_send_end(MPIR_Request *sreq, int err)
{
	MPIDI_BIP_am_request_t *am = &sreq->dev.ch4.am.netmod_am.bip;

	MPIDI_BIP_handle_free(&MPIDI_BIP_global.am_sends, am->handle);
	if (err)
		sreq->status.MPI_ERROR = err;
	return MPIDIG_global.origin_cbs[am->handler_id](sreq);
}

static int am_lsend_done(MPIDI_BIP_lsend_t *ls, int err)
{
	return am_send_end(ls->arg, err);
}

/* Announced messages waiting for a dead peer's AM_CTS. */
int MPIDI_BIP_am_peer_failed(int node, int err)
{
	MPIDI_BIP_handles_t *t = &MPIDI_BIP_global.am_sends;
	int mpi_errno = MPI_SUCCESS;

	for (uint32_t i = 0; i < t->cap && !mpi_errno; i++) {
		MPIR_Request *sreq = MPIDI_BIP_handle_at(t, i);

		if (sreq && sreq->dev.ch4.am.netmod_am.bip.node == node)
			mpi_errno = am_send_end(sreq, err);
	}
	return mpi_errno;
}

/* AM_CTS: send the data on the receiver's tag; FAILED: its receive could
 * not be posted, and the message fails, here too in the call that ran
 * progress (MPIDIG's origin callbacks drop a request's error). */
int MPIDI_BIP_am_cts(int node, MPIR_Request *sreq,
		     const MPIDI_BIP_ctl_ack_t *cts)
{
	MPIDI_BIP_am_request_t *am = &sreq->dev.ch4.am.netmod_am.bip;

	if (cts->flags & MPIDI_BIP_ACK_FAILED) {
		int err = MPIDI_BIP_error(-BIP_ESYS, "the receiver's fetch");
		int mpi_errno = am_send_end(sreq, err);

		return mpi_errno ? mpi_errno : err;
	}

	return MPIDI_BIP_lsend(cts, node, am->data, am_lsend_done, sreq);
}

/* The data is in: copy it out of the bounce buffer if it needed one. */
static int am_lrecv_done(MPIDI_BIP_lrecv_t *lr, int err)
{
	MPIR_Request *rreq = lr->arg;
	void **tmp = &rreq->dev.ch4.am.netmod_am.bip.pack_buf;

	if (err) {
		/* Its sender died, or the receive could not be posted: the
		 * request ends with the error in its status (which MPIDIG's
		 * target callbacks do not read; lrecv_fail reports the
		 * latter). */
		rreq->status.MPI_ERROR = err;
		MPL_free(*tmp);
		*tmp = NULL;
		MPIDIG_REQUEST(rreq, req->recv_async).in_data_sz = 0;
	} else if (*tmp) {
		int done = MPIDIG_recv_copy_seg(*tmp, (MPI_Aint)lr->ack.len,
						rreq);

		MPIR_Assert(done);
		MPL_free(*tmp);
		*tmp = NULL;
	} else {
		/* Landed in place: only the bookkeeping of a copy is left. */
		MPIDIG_REQUEST(rreq, req->recv_async).in_data_sz = 0;
	}
	return MPIDIG_REQUEST(rreq, req->target_cmpl_cb)(rreq);
}

/* AM_RTS: MPIDIG matches the header now, the data comes later. */
int MPIDI_BIP_am_rts(int node, const MPIDI_BIP_ctl_am_t *am,
		     const void *payload)
{
	_Alignas(max_align_t) char am_hdr[MPIDI_BIP_AM_INLINE_MAX];
	MPIR_Request *rreq = NULL;
	MPIDIG_rreq_async_t *a;
	void *dst;
	int attr = MPIDIG_AM_ATTR__IS_ASYNC, mpi_errno;

	memcpy(am_hdr, payload, am->am_hdr_sz); /* as in am_arrived */
	MPIDIG_AM_ATTR_SET_VCIS(attr, am->src_vci, am->dst_vci);
	mpi_errno = MPIDIG_global.target_msg_cbs[am->handler_id](
		am_hdr, NULL, (MPI_Aint)am->data_sz, attr, &rreq);
	MPIR_ERR_CHECK(mpi_errno);
	MPIR_Assert(rreq);
	MPIDIG_recv_setup(rreq);
	a = &MPIDIG_REQUEST(rreq, req->recv_async);
	if (a->recv_type == MPIDIG_RECV_CONTIG && !rreq->status.MPI_ERROR &&
	    a->iov_one.iov_len >= (size_t)am->data_sz) {
		dst = a->iov_one.iov_base;
	} else {
		/* NULL: no memory, the message fails at both ends. */
		dst = MPL_malloc(am->data_sz, MPL_MEM_BUFFER);
		rreq->dev.ch4.am.netmod_am.bip.pack_buf = dst;
	}
	return MPIDI_BIP_lrecv(node, MPIDI_BIP_CTL_AM_CTS, am->sreq, 0,
			       am->data_sz, 0, NULL, dst, am_lrecv_done, rreq);
fn_fail:
	return mpi_errno;
}
