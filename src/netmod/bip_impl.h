/*
 * bip_impl.h - what the inline entry points need: the control-message
 * format and the compiled functions behind them. netmod_inline.h pulls this
 * into every MPICH source file, so it stays small and stable; the netmod's
 * state lives in bip_state.h, which only the netmod's .c files include.
 */
#ifndef BIP_IMPL_H_INCLUDED
#define BIP_IMPL_H_INCLUDED

#include "mpidimpl.h"
#include "mpidch4r.h"
#include <bip.h>

/*
 * Control messages are BIP small messages that start with this header.
 * The values are the netmod's wire format: change them together on every
 * node (they travel only between processes of one build).
 *   AM      an active message with its data inline
 *   AM_RTS  a large active message announced (header inline, data later)
 *   AM_CTS  the receiver posted a BIP long receive on `tag`: send the data
 */
enum MPIDI_BIP_ctl_type {
	MPIDI_BIP_CTL_AM = 1,
	MPIDI_BIP_CTL_AM_RTS,
	MPIDI_BIP_CTL_AM_CTS,
};

typedef struct {
	uint8_t type;       /* enum MPIDI_BIP_ctl_type */
	uint8_t handler_id; /* MPIDIG handler */
	uint8_t src_vci, dst_vci;
	uint32_t am_hdr_sz;
	uint64_t data_sz;
	uint64_t sreq;      /* RTS/CTS: the sender's request */
	uint32_t tag;       /* CTS: BIP tag of the long receive */
	uint32_t src;       /* sending node */
} MPIDI_BIP_ctl_t;

/* Largest active message header + inline data in one control message. */
#define MPIDI_BIP_AM_INLINE_MAX (BIP_SMALL_MAX - sizeof(MPIDI_BIP_ctl_t))

/* The BIP node of a rank of a communicator. */
static inline int MPIDI_BIP_node_of(MPIR_Comm *comm, int rank)
{
	return MPIDIU_comm_rank_to_av(comm, rank)->netmod.bip.node;
}

int MPIDI_BIP_am_send_hdr(int node, int handler_id, const void *am_hdr,
			  MPI_Aint am_hdr_sz, int src_vci, int dst_vci);
int MPIDI_BIP_am_isend(int node, int handler_id, const void *am_hdr,
		       MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
		       MPI_Datatype datatype, int src_vci, int dst_vci,
		       MPIR_Request *sreq);
int MPIDI_BIP_progress(int vci, int blocking);
void MPIDI_BIP_am_request_finalize(MPIR_Request *req);

#endif
