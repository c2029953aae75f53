/*
 * bip_state.h - the bip netmod's private state (FIFOs, long transfers in
 * flight). Only the netmod's .c files include it: editing it rebuilds
 * seconds of code, not MPICH.
 */
#ifndef BIP_STATE_H_INCLUDED
#define BIP_STATE_H_INCLUDED

#include "bip_impl.h"

/* A large active message being received into a BIP long receive. */
typedef struct MPIDI_BIP_lrecv {
	MPIR_Request *rreq;
	void *tmp;           /* bounce buffer, when it cannot land in place */
	uint64_t data_sz;
	uint64_t sreq;       /* the sender's request, named in the CTS */
	int src;
	int tag;
	bip_req_t breq;
	struct MPIDI_BIP_lrecv *next; /* receive FIFO: waiting for a tag */
} MPIDI_BIP_lrecv_t;

/* A large active message being sent on the tag its receiver chose. */
typedef struct MPIDI_BIP_lsend {
	MPIR_Request *sreq;
	int tag;
	bool posted;         /* false: BIP had no send slot yet */
	bip_req_t breq;
	struct MPIDI_BIP_lsend *next;
} MPIDI_BIP_lsend_t;

/* A control message BIP could not take yet (send FIFO). */
typedef struct MPIDI_BIP_ctlq {
	struct MPIDI_BIP_ctlq *next;
	int node;
	size_t len;
	char msg[];
} MPIDI_BIP_ctlq_t;

/* What each protocol did, printed at finalize on request. */
typedef struct {
	uint64_t am_short;   /* active messages in one control message */
	                     /* (header only, or header and data) */
	uint64_t am_3way;    /* large ones: RTS, CTS, BIP long message */
	uint64_t to_self;    /* messages to our own rank */
	unsigned sfifo_depth, sfifo_max;  /* send FIFO */
	unsigned rfifo_depth, rfifo_max;  /* receive FIFO (waiting for a tag) */
} MPIDI_BIP_counters_t;

typedef struct {
	bip_ep_t *ep;
	MPIDI_BIP_counters_t cnt;
	int ntags;
	MPIDI_BIP_lrecv_t **tag_owner;  /* receive per BIP tag; NULL: free */
	MPIDI_BIP_lrecv_t *rfifo_head, *rfifo_tail;
	MPIDI_BIP_lsend_t *lsends;
	MPIDI_BIP_ctlq_t *sfifo_head, *sfifo_tail;
	MPIDI_BIP_ctlq_t *self_head, *self_tail; /* messages to ourselves */
	unsigned idle;                  /* progress calls with nothing done */
} MPIDI_BIP_global_t;

extern MPIDI_BIP_global_t MPIDI_BIP_global;

#endif
