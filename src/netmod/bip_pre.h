/*
 * bip_pre.h - the netmod's state inside MPICH's objects (requests, AV
 * entries, ...). Pulled into mpidpre.h early: no MPICH includes here.
 */
#ifndef BIP_PRE_H_INCLUDED
#define BIP_PRE_H_INCLUDED

#include <stdbool.h>
#include <stdint.h>

/* Per MPIDIG request: a large active message in flight. */
typedef struct {
	void *pack_buf;      /* packed copy of non-contiguous data, or NULL */
	const void *data;    /* what goes on the wire */
	uint64_t data_sz;
	uint64_t handle;     /* what the receiver's AM_CTS names */
	int handler_id;
	int node;            /* destination BIP node */
} MPIDI_BIP_am_request_t;

/*
 * Per native point-to-point request (send, receive, or a message taken by
 * MPI_Mprobe). Lives in req->dev.ch4.netmod.bip, which overlaps MPIDIG's
 * state: only requests the netmod created itself use it.
 */
typedef struct MPIDI_BIP_request {
	struct MPIR_Request *next; /* posted-receive queue */
	void *buf;           /* user buffer */
	int64_t count;
	int datatype;        /* MPI_Datatype */
	int node;            /* peer BIP node */
	int rank, tag;       /* receive: what to match; send: dest, tag */
	uint16_t ctx;        /* context id */
	uint8_t proto;       /* enum MPIDI_BIP_proto */
	void *pack;          /* packed send data, or receive bounce buffer */
	const void *data;    /* send: what goes on the wire */
	uint64_t data_sz;    /* bytes of the message */
	uint64_t offset;     /* rendezvous: bytes moved so far */
	uint64_t peer;       /* receive: the sender's request handle */
	uint64_t handle;     /* send: what the receiver's ACKs name */
	uint64_t cap;        /* receive: bytes wanted (less when truncated) */
	uint8_t flags;       /* MPIDI_BIP_REQ_* */
	void *unexp;         /* Mprobe'd message (struct MPIDI_BIP_unexp) */
} MPIDI_BIP_request_t;

/* The MPI request completed while the transfer goes on (a send that could
 * not be cancelled): the netmod holds the request and owns the data. */
#define MPIDI_BIP_REQ_DETACHED 0x1
/* Send: its announcement named the data's address: the receiver may read
 * it from there at any moment until its ACK says it did. */
#define MPIDI_BIP_REQ_READ 0x2
/* Send: MPI_Cancel asked its receiver to drop it (a WITHDRAW went). */
#define MPIDI_BIP_REQ_WITHDRAWN 0x4
/* Send: its receiver asked for data it could have read: in flight for the
 * read-or-ask chooser (MPIDI_BIP_path_invited) until the send completes. */
#define MPIDI_BIP_REQ_SERVED 0x8

/* A peer: its BIP node (the world rank). */
typedef struct {
	int node;
} MPIDI_BIP_addr_t;

/* A communicator: the shared memory of its small collectives within the
 * host (bip_coll.c), set up after the first few (coll_calls counts them);
 * coll_off when it has none. */
typedef struct {
	struct MPIDI_BIP_coll *coll;
	unsigned coll_calls;
	bool coll_off;
} MPIDI_BIP_comm_t;

typedef struct {
	int unused;
} MPIDI_BIP_dt_t;

typedef struct {
	int unused;
} MPIDI_BIP_op_t;

/* A window: what each of its ranks exposed (bip_rma.c); NULL when its
 * puts and gets all go by active messages (a dynamic window). */
typedef struct {
	struct MPIDI_BIP_win_target *targets;
} MPIDI_BIP_win_t;

typedef struct {
	int unused;
} MPIDI_BIP_part_t;

#endif
