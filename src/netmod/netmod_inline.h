/*
 * netmod_inline.h - the inline entry points of the bip netmod. Each is a
 * thin call into the netmod's .c files (editing this file recompiles all of
 * MPICH; editing those takes seconds). Point-to-point is native, and so are
 * put and get where BIP reaches the target's memory, and so are small
 * collectives within one host (shared memory); the rest of RMA and of the
 * collectives, and partitioned communication, use MPICH's generic layers,
 * whose messages ride on the active-message functions below.
 */
#ifndef NETMOD_INLINE_H_INCLUDED
#define NETMOD_INLINE_H_INCLUDED

#include "bip_impl.h"

/* MPICH's active-message RMA but put and get (renamed out of the way:
 * bip_rma.c's come first and fall back to MPIDIG's). */
#define MPIDI_NM_mpi_put MPIDI_BIP_am_put
#define MPIDI_NM_mpi_get MPIDI_BIP_am_get
#define MPIDI_NM_mpi_rput MPIDI_BIP_am_rput
#define MPIDI_NM_mpi_rget MPIDI_BIP_am_rget
#include "netmod_am_fallback_rma.h"
#undef MPIDI_NM_mpi_put
#undef MPIDI_NM_mpi_get
#undef MPIDI_NM_mpi_rput
#undef MPIDI_NM_mpi_rget
/* MPICH's collectives over point-to-point, but those bip_coll.c may take
 * (below). */
#define MPIDI_NM_mpi_barrier MPIDI_BIP_pt2pt_barrier
#define MPIDI_NM_mpi_bcast MPIDI_BIP_pt2pt_bcast
#define MPIDI_NM_mpi_allreduce MPIDI_BIP_pt2pt_allreduce
#define MPIDI_NM_mpi_reduce MPIDI_BIP_pt2pt_reduce
#define MPIDI_NM_mpi_allgather MPIDI_BIP_pt2pt_allgather
#define MPIDI_NM_mpi_alltoall MPIDI_BIP_pt2pt_alltoall
#include "netmod_am_fallback_coll.h"
#undef MPIDI_NM_mpi_barrier
#undef MPIDI_NM_mpi_bcast
#undef MPIDI_NM_mpi_allreduce
#undef MPIDI_NM_mpi_reduce
#undef MPIDI_NM_mpi_allgather
#undef MPIDI_NM_mpi_alltoall
#include "netmod_am_fallback_part.h"

/* --- collectives within the host ------------------------------------- */

/* The byte count decides, the same on every rank (MPI's matching rule). */
static inline MPI_Aint MPIDI_BIP_coll_bytes(MPI_Aint count,
					    MPI_Datatype datatype)
{
	MPI_Aint size;

	MPIR_Datatype_get_size_macro(datatype, size);
	return size * count;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_barrier(MPIR_Comm *comm,
						  MPIR_Errflag_t *errflag)
{
	if (MPIDI_BIP_coll_fits(comm, 0))
		return MPIDI_BIP_coll_barrier(comm, errflag);
	return MPIDI_BIP_pt2pt_barrier(comm, errflag);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_bcast(void *buf, MPI_Aint count,
						MPI_Datatype datatype,
						int root, MPIR_Comm *comm,
						MPIR_Errflag_t *errflag)
{
	if (MPIDI_BIP_coll_fits(comm, MPIDI_BIP_coll_bytes(count, datatype)) ||
	    MPIDI_BIP_coll_pieces(comm))
		return MPIDI_BIP_coll_bcast(buf, count, datatype, root, comm,
					    errflag);
	return MPIDI_BIP_pt2pt_bcast(buf, count, datatype, root, comm,
				     errflag);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_allreduce(const void *sendbuf,
						    void *recvbuf,
						    MPI_Aint count,
						    MPI_Datatype datatype,
						    MPI_Op op,
						    MPIR_Comm *comm,
						    MPIR_Errflag_t *errflag)
{
	if (MPIDI_BIP_coll_allreduce_fits(comm,
					  MPIDI_BIP_coll_bytes(count, datatype)))
		return MPIDI_BIP_coll_allreduce(sendbuf, recvbuf, count,
						datatype, op, comm, errflag);
	return MPIDI_BIP_pt2pt_allreduce(sendbuf, recvbuf, count, datatype,
					 op, comm, errflag);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_reduce(const void *sendbuf,
						 void *recvbuf,
						 MPI_Aint count,
						 MPI_Datatype datatype,
						 MPI_Op op, int root,
						 MPIR_Comm *comm,
						 MPIR_Errflag_t *errflag)
{
	if (MPIDI_BIP_coll_reduce_fits(comm,
				       MPIDI_BIP_coll_bytes(count, datatype)))
		return MPIDI_BIP_coll_reduce(sendbuf, recvbuf, count, datatype,
					     op, root, comm, errflag);
	return MPIDI_BIP_pt2pt_reduce(sendbuf, recvbuf, count, datatype, op,
				      root, comm, errflag);
}

/* Each rank's block, recvcount of recvtype: the same bytes on every rank
 * (MPI_IN_PLACE leaves only the receive side). */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_allgather(const void *sendbuf,
						    MPI_Aint sendcount,
						    MPI_Datatype sendtype,
						    void *recvbuf,
						    MPI_Aint recvcount,
						    MPI_Datatype recvtype,
						    MPIR_Comm *comm,
						    MPIR_Errflag_t *errflag)
{
	if (MPIDI_BIP_coll_fits(comm, MPIDI_BIP_coll_bytes(recvcount,
							   recvtype)))
		return MPIDI_BIP_coll_allgather(sendbuf, sendcount, sendtype,
						recvbuf, recvcount, recvtype,
						comm, errflag);
	return MPIDI_BIP_pt2pt_allgather(sendbuf, sendcount, sendtype, recvbuf,
					 recvcount, recvtype, comm, errflag);
}

/* Here what a rank writes is a block for each rank. */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_alltoall(const void *sendbuf,
						   MPI_Aint sendcount,
						   MPI_Datatype sendtype,
						   void *recvbuf,
						   MPI_Aint recvcount,
						   MPI_Datatype recvtype,
						   MPIR_Comm *comm,
						   MPIR_Errflag_t *errflag)
{
	if (MPIDI_BIP_coll_alltoall_fits(comm,
					 MPIDI_BIP_coll_bytes(recvcount,
							      recvtype) *
						 comm->local_size))
		return MPIDI_BIP_coll_alltoall(sendbuf, sendcount, sendtype,
					       recvbuf, recvcount, recvtype,
					       comm, errflag);
	return MPIDI_BIP_pt2pt_alltoall(sendbuf, sendcount, sendtype, recvbuf,
					recvcount, recvtype, comm, errflag);
}

/* --- native point-to-point -------------------------------------------- */

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_isend(const void *buf,
						MPI_Aint count,
						MPI_Datatype datatype,
						int rank, int tag,
						MPIR_Comm *comm,
						int context_offset,
						MPIDI_av_entry_t *addr,
						MPIR_Request **request)
{
	return MPIDI_BIP_isend(buf, count, datatype, rank, tag, comm,
			       context_offset, addr, request, false);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_issend(const void *buf,
						 MPI_Aint count,
						 MPI_Datatype datatype,
						 int rank, int tag,
						 MPIR_Comm *comm,
						 int context_offset,
						 MPIDI_av_entry_t *addr,
						 MPIR_Request **request)
{
	return MPIDI_BIP_isend(buf, count, datatype, rank, tag, comm,
			       context_offset, addr, request, true);
}

/* Collectives mark a failure seen upstream in the tag's error bits. */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_isend_coll(const void *buf,
						 MPI_Aint count,
						 MPI_Datatype datatype,
						 int rank, int tag,
						 MPIR_Comm *comm,
						 int context_offset,
						 MPIDI_av_entry_t *addr,
						 MPIR_Request **request,
						 MPIR_Errflag_t *errflag)
{
	if (*errflag == MPIR_ERR_PROC_FAILED)
		MPIR_TAG_SET_PROC_FAILURE_BIT(tag);
	else if (*errflag != MPIR_ERR_NONE)
		MPIR_TAG_SET_ERROR_BIT(tag);
	return MPIDI_BIP_isend(buf, count, datatype, rank, tag, comm,
			       context_offset, addr, request, false);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_cancel_send(MPIR_Request *sreq)
{
	return MPIDI_BIP_cancel_send(sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_irecv(void *buf, MPI_Aint count,
						MPI_Datatype datatype,
						int rank, int tag,
						MPIR_Comm *comm,
						int context_offset,
						MPIDI_av_entry_t *addr,
						MPIR_Request **request,
						MPIR_Request *partner)
{
	return MPIDI_BIP_irecv(buf, count, datatype, rank, tag, comm,
			       context_offset, request);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_imrecv(void *buf, MPI_Aint count,
						 MPI_Datatype datatype,
						 MPIR_Request *message)
{
	return MPIDI_BIP_imrecv(buf, count, datatype, message);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_cancel_recv(MPIR_Request *rreq)
{
	return MPIDI_BIP_cancel_recv(rreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_iprobe(int source, int tag,
						 MPIR_Comm *comm,
						 int context_offset,
						 MPIDI_av_entry_t *addr,
						 int *flag, MPI_Status *status)
{
	return MPIDI_BIP_iprobe(source, tag, comm, context_offset, flag, NULL,
				status);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_improbe(int source, int tag,
						  MPIR_Comm *comm,
						  int context_offset,
						  MPIDI_av_entry_t *addr,
						  int *flag,
						  MPIR_Request **message,
						  MPI_Status *status)
{
	return MPIDI_BIP_iprobe(source, tag, comm, context_offset, flag,
				message, status);
}

/* --- put and get: by the origin alone, else MPIDIG's ------------------ */

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_put(const void *origin_addr,
					      int origin_count,
					      MPI_Datatype origin_datatype,
					      int target_rank,
					      MPI_Aint target_disp,
					      int target_count,
					      MPI_Datatype target_datatype,
					      MPIR_Win *win,
					      MPIDI_av_entry_t *addr,
					      MPIDI_winattr_t winattr)
{
	return MPIDI_BIP_put(origin_addr, origin_count, origin_datatype,
			     target_rank, target_disp, target_count,
			     target_datatype, win, addr, NULL);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_rput(const void *origin_addr,
					       int origin_count,
					       MPI_Datatype origin_datatype,
					       int target_rank,
					       MPI_Aint target_disp,
					       int target_count,
					       MPI_Datatype target_datatype,
					       MPIR_Win *win,
					       MPIDI_av_entry_t *addr,
					       MPIDI_winattr_t winattr,
					       MPIR_Request **request)
{
	return MPIDI_BIP_put(origin_addr, origin_count, origin_datatype,
			     target_rank, target_disp, target_count,
			     target_datatype, win, addr, request);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_get(void *origin_addr,
					      int origin_count,
					      MPI_Datatype origin_datatype,
					      int target_rank,
					      MPI_Aint target_disp,
					      int target_count,
					      MPI_Datatype target_datatype,
					      MPIR_Win *win,
					      MPIDI_av_entry_t *addr,
					      MPIDI_winattr_t winattr)
{
	return MPIDI_BIP_get(origin_addr, origin_count, origin_datatype,
			     target_rank, target_disp, target_count,
			     target_datatype, win, addr, NULL);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_rget(void *origin_addr,
					       int origin_count,
					       MPI_Datatype origin_datatype,
					       int target_rank,
					       MPI_Aint target_disp,
					       int target_count,
					       MPI_Datatype target_datatype,
					       MPIR_Win *win,
					       MPIDI_av_entry_t *addr,
					       MPIDI_winattr_t winattr,
					       MPIR_Request **request)
{
	return MPIDI_BIP_get(origin_addr, origin_count, origin_datatype,
			     target_rank, target_disp, target_count,
			     target_datatype, win, addr, request);
}

/* --- progress and active messages -------------------------------------- */

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_progress(int vci, int blocking)
{
	return MPIDI_BIP_progress(vci, blocking);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr(int rank, MPIR_Comm *comm,
						  int handler_id,
						  const void *am_hdr,
						  MPI_Aint am_hdr_sz,
						  int src_vci, int dst_vci)
{
	return MPIDI_BIP_am_send_hdr(MPIDI_BIP_node_of(comm, rank),
				     handler_id, am_hdr, am_hdr_sz, src_vci,
				     dst_vci);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend(int rank, MPIR_Comm *comm,
					       int handler_id,
					       const void *am_hdr,
					       MPI_Aint am_hdr_sz,
					       const void *data, MPI_Aint count,
					       MPI_Datatype datatype,
					       int src_vci, int dst_vci,
					       MPIR_Request *sreq)
{
	return MPIDI_BIP_am_isend(MPIDI_BIP_node_of(comm, rank), handler_id,
				  am_hdr, am_hdr_sz, data, count, datatype,
				  src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr_reply(MPIR_Comm *comm,
							int src_rank,
							int handler_id,
							const void *am_hdr,
							MPI_Aint am_hdr_sz,
							int src_vci,
							int dst_vci)
{
	return MPIDI_NM_am_send_hdr(src_rank, comm, handler_id, am_hdr,
				    am_hdr_sz, src_vci, dst_vci);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend_reply(MPIR_Comm *comm,
						     int src_rank,
						     int handler_id,
						     const void *am_hdr,
						     MPI_Aint am_hdr_sz,
						     const void *data,
						     MPI_Aint count,
						     MPI_Datatype datatype,
						     int src_vci, int dst_vci,
						     MPIR_Request *sreq)
{
	return MPIDI_NM_am_isend(src_rank, comm, handler_id, am_hdr,
				 am_hdr_sz, data, count, datatype, src_vci,
				 dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_hdr_max_sz(void)
{
	return MPIDI_BIP_AM_INLINE_MAX;
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_limit(void)
{
	return MPIDI_BIP_AM_INLINE_MAX;
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_buf_limit(void)
{
	return BIP_SMALL_MAX;
}

/* Eager when header and data fit one control message; otherwise MPIDIG
 * runs its own rendezvous and the data goes through am_isend anyway. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_NM_am_check_eager(MPI_Aint am_hdr_sz,
						      MPI_Aint data_sz,
						      const void *data,
						      MPI_Aint count,
						      MPI_Datatype datatype,
						      MPIR_Request *sreq)
{
	return am_hdr_sz + data_sz <= (MPI_Aint)MPIDI_BIP_AM_INLINE_MAX;
}

MPL_STATIC_INLINE_PREFIX MPIDIG_recv_data_copy_cb
MPIDI_NM_am_get_data_copy_cb(uint32_t attr)
{
	return NULL;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_init(MPIR_Request *req)
{
	req->dev.ch4.am.netmod_am.bip.pack_buf = NULL;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_finalize(MPIR_Request *req)
{
	MPIDI_BIP_am_request_finalize(req);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_rank_is_local(int rank, MPIR_Comm *comm)
{
	return MPIDIU_rank_is_local(rank, comm);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_comm_get_gpid(MPIR_Comm *comm_ptr,
						    int idx, uint64_t *gpid_ptr,
						    bool is_remote)
{
	int avtid = 0, lpid = 0;

	if (comm_ptr->comm_kind == MPIR_COMM_KIND__INTRACOMM || is_remote)
		MPIDIU_comm_rank_to_pid(comm_ptr, idx, &lpid, &avtid);
	else
		MPIDIU_comm_rank_to_pid_local(comm_ptr, idx, &lpid, &avtid);
	*gpid_ptr = MPIDIU_GPID_CREATE(avtid, lpid);
	return MPI_SUCCESS;
}

#include "bip_noinline.h"

#endif
