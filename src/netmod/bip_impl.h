/*
 * bip_impl.h - what the inline entry points need: the compiled functions
 * behind them. netmod_inline.h pulls this into every MPICH source file, so it
 * stays small and stable; the wire format and the netmod's state live in
 * bip_state.h, which only the netmod's .c files include.
 */
#ifndef BIP_IMPL_H_INCLUDED
#define BIP_IMPL_H_INCLUDED

#include "mpidimpl.h"
#include "mpidch4r.h"
#include <bip_limits.h> /* not bip.h: this header is in every MPICH file */

/* Room kept for the control-message header in a BIP small message. */
#define MPIDI_BIP_CTL_ROOM 64
/* Largest active message header + inline data in one control message. */
#define MPIDI_BIP_AM_INLINE_MAX (BIP_SMALL_MAX - MPIDI_BIP_CTL_ROOM)

/* The BIP node of a rank of a communicator. */
static inline int MPIDI_BIP_node_of(MPIR_Comm *comm, int rank)
{
	return MPIDIU_comm_rank_to_av(comm, rank)->netmod.bip.node;
}

/* Active messages for MPIDIG (bip_am.c). */
int MPIDI_BIP_am_send_hdr(int node, int handler_id, const void *am_hdr,
			  MPI_Aint am_hdr_sz, int src_vci, int dst_vci);
int MPIDI_BIP_am_isend(int node, int handler_id, const void *am_hdr,
		       MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
		       MPI_Datatype datatype, int src_vci, int dst_vci,
		       MPIR_Request *sreq);
void MPIDI_BIP_am_request_finalize(MPIR_Request *req);

/* Native point-to-point (bip_send.c, bip_recv.c). */
int MPIDI_BIP_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
		    int rank, int tag, MPIR_Comm *comm, int context_offset,
		    MPIDI_av_entry_t *addr, MPIR_Request **req_p, bool sync);
int MPIDI_BIP_cancel_send(MPIR_Request *sreq);
int MPIDI_BIP_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
		    int rank, int tag, MPIR_Comm *comm, int context_offset,
		    MPIR_Request **req_p);
int MPIDI_BIP_imrecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
		     MPIR_Request *message);
int MPIDI_BIP_cancel_recv(MPIR_Request *rreq);
int MPIDI_BIP_iprobe(int source, int tag, MPIR_Comm *comm,
		     int context_offset, int *flag, MPIR_Request **message_p,
		     MPI_Status *status);

int MPIDI_BIP_progress(int vci, int blocking);

/* Small collectives of a communicator within the host (bip_coll.c), up to
 * MPIDI_BIP_coll_max bytes (-1: none): each goes by point-to-point when
 * the communicator or its datatype and op do not qualify. */
extern MPI_Aint MPIDI_BIP_coll_max;
static inline bool MPIDI_BIP_coll_fits(MPIR_Comm *comm, MPI_Aint bytes)
{
	return bytes <= MPIDI_BIP_coll_max && !comm->dev.ch4.netmod.bip.coll_off;
}
/* Reductions, where every rank (allreduce) or the root (reduce) reduces
 * every rank's part, also only up to 1 MiB over the ranks, or 64 KiB:
 * allreduce of 256 KiB on 16 ranks took 3.5 ms so against 2.4 by
 * messages, on 4 ranks 0.21 against 0.26. */
#define MPIDI_BIP_COLL_REDUCE_BUDGET (1 << 20)
#define MPIDI_BIP_COLL_REDUCE_FLOOR (64 << 10)
static inline bool MPIDI_BIP_coll_reduce_fits(MPIR_Comm *comm, MPI_Aint bytes)
{
	return MPIDI_BIP_coll_fits(comm, bytes) &&
	       (bytes <= MPIDI_BIP_COLL_REDUCE_FLOOR ||
		bytes <= MPIDI_BIP_COLL_REDUCE_BUDGET / comm->local_size);
}
/* An allreduce of MPIDI_BIP_coll_split_min bytes or more (-1: none) goes
 * as a reduce-scatter and an allgather in pieces (bip_coll.c,
 * allreduce_split): of any size above 2 ranks, on 2 only where the other
 * reductions go too. Beyond, between 2 ranks, MPICH's reduce-scatter and
 * allgather over messages copies less: each rank's half is read by the
 * other in one copy, where the shared memory takes one copy in and one
 * out (1 MiB 139 us against 170, medians of 9). */
extern MPI_Aint MPIDI_BIP_coll_split_min;
static inline bool MPIDI_BIP_coll_split(MPIR_Comm *comm, MPI_Aint bytes)
{
	return MPIDI_BIP_coll_split_min >= 0 &&
	       bytes >= MPIDI_BIP_coll_split_min &&
	       (comm->local_size > 2 || MPIDI_BIP_coll_reduce_fits(comm, bytes));
}
static inline bool MPIDI_BIP_coll_allreduce_fits(MPIR_Comm *comm,
						 MPI_Aint bytes)
{
	return MPIDI_BIP_coll_reduce_fits(comm, bytes) ||
	       (MPIDI_BIP_coll_split(comm, bytes) &&
		MPIDI_BIP_coll_fits(comm, 0));
}
/* An alltoall of more bytes a rank than coll_max goes in rounds above 2
 * ranks, up to this many (bip_coll.c). */
extern MPI_Aint MPIDI_BIP_coll_alltoall_max;
static inline bool MPIDI_BIP_coll_alltoall_fits(MPIR_Comm *comm,
						MPI_Aint bytes)
{
	return MPIDI_BIP_coll_fits(comm, bytes) ||
	       (bytes <= MPIDI_BIP_coll_alltoall_max &&
		comm->local_size > 2 && MPIDI_BIP_coll_fits(comm, 0));
}
/* A bcast too large for one chunk goes in pieces of one chunk each
 * (MPIR_CVAR_CH4_BIP_NODE_BCAST_PIECES), above two ranks. */
extern bool MPIDI_BIP_coll_bcast_pieces;
static inline bool MPIDI_BIP_coll_pieces(MPIR_Comm *comm)
{
	return MPIDI_BIP_coll_bcast_pieces && comm->local_size > 2 &&
	       !comm->dev.ch4.netmod.bip.coll_off;
}
int MPIDI_BIP_coll_barrier(MPIR_Comm *comm, MPIR_Errflag_t *errflag);
int MPIDI_BIP_coll_bcast(void *buf, MPI_Aint count, MPI_Datatype datatype,
			 int root, MPIR_Comm *comm, MPIR_Errflag_t *errflag);
int MPIDI_BIP_coll_allreduce(const void *sendbuf, void *recvbuf,
			     MPI_Aint count, MPI_Datatype datatype, MPI_Op op,
			     MPIR_Comm *comm, MPIR_Errflag_t *errflag);
int MPIDI_BIP_coll_reduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
			  MPI_Datatype datatype, MPI_Op op, int root,
			  MPIR_Comm *comm, MPIR_Errflag_t *errflag);
int MPIDI_BIP_coll_allgather(const void *sendbuf, MPI_Aint sendcount,
			     MPI_Datatype sendtype, void *recvbuf,
			     MPI_Aint recvcount, MPI_Datatype recvtype,
			     MPIR_Comm *comm, MPIR_Errflag_t *errflag);
int MPIDI_BIP_coll_alltoall(const void *sendbuf, MPI_Aint sendcount,
			    MPI_Datatype sendtype, void *recvbuf,
			    MPI_Aint recvcount, MPI_Datatype recvtype,
			    MPIR_Comm *comm, MPIR_Errflag_t *errflag);

/* Put and get (bip_rma.c): by the origin alone where BIP reaches the
 * target's window, complete at return, else by MPIDIG's active messages;
 * request-based when req_p is not NULL. */
int MPIDI_BIP_put(const void *origin_addr, int origin_count,
		  MPI_Datatype origin_datatype, int target_rank,
		  MPI_Aint target_disp, int target_count,
		  MPI_Datatype target_datatype, MPIR_Win *win,
		  MPIDI_av_entry_t *addr, MPIR_Request **req_p);
int MPIDI_BIP_get(void *origin_addr, int origin_count,
		  MPI_Datatype origin_datatype, int target_rank,
		  MPI_Aint target_disp, int target_count,
		  MPI_Datatype target_datatype, MPIR_Win *win,
		  MPIDI_av_entry_t *addr, MPIR_Request **req_p);

#endif
