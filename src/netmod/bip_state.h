/*
 * bip_state.h - the bip netmod's private state. Only the netmod's .c files
 * include it: editing it rebuilds seconds of code, not MPICH. The control
 * messages' wire format is in bip_ctl.h.
 */
#ifndef BIP_STATE_H_INCLUDED
#define BIP_STATE_H_INCLUDED

#include <bip.h>
#include <time.h>

#include "bip_impl.h"
#include "bip_ctl.h"
#include "bip_handle.h"
#include "bip_path.h"

/* Which protocol a send used (counters, request state). */
enum MPIDI_BIP_proto {
	MPIDI_BIP_PROTO_SHORT,
	MPIDI_BIP_PROTO_3WAY,
	MPIDI_BIP_PROTO_RNDV,
	MPIDI_BIP_PROTO_EAGER,
	MPIDI_BIP_NPROTOS
};

/* A control message waiting in a FIFO (to a peer, or to ourselves): a
 * copy of it, or a copy of its header and the sender's data, lent by the
 * send request that completes when the message leaves. */
typedef struct MPIDI_BIP_ctlq {
	struct MPIDI_BIP_ctlq *next;
	int node;
	size_t len;
	MPIR_Request *lent;
	const void *data;
	size_t data_len;
	char msg[];
} MPIDI_BIP_ctlq_t;

/* A message that arrived before its receive was posted. */
typedef struct MPIDI_BIP_unexp {
	struct MPIDI_BIP_unexp *next;
	int node;
	uint16_t ctx;
	int rank, tag;
	uint8_t type;        /* CTL_SHORT, CTL_RTS3 or CTL_RNDV */
	bool arrived;        /* all data is in `data` */
	int err;             /* why its data will not come (its sender died,
			      * its read or receive failed), or 0 */
	uint64_t data_sz;
	uint64_t sreq;       /* RTS3/RNDV: the sender's request */
	uint64_t addr;       /* RTS3/RNDV: its data, to read (0: ask) */
	MPIR_Request *rreq;  /* RTS3: receive matched while data still flows;
			      * on the due list: the receive it fetches for */
	bool held;           /* RTS3: its data still with the sender... */
	uint64_t held_ns;    /* ...since then (MPIDI_BIP_recv_held_due) */
	uint8_t size;        /* of its entry (MPIDI_BIP_UNEXP_SIZES) */
	char *data;          /* SHORT: inline below; RTS3: temporary buffer */
	char inline_data[];
} MPIDI_BIP_unexp_t;

/* Freed blocks of one size, kept for the next ones (bip_buf.c): a kept
 * block's first bytes link the next. */
typedef struct MPIDI_BIP_spares {
	void *head;
	unsigned n;
} MPIDI_BIP_spares_t;

/* Freed spares of one size kept, at most (bip_buf.c): what the largest
 * burst needed at once, up to this many bytes. Each one fewer than a
 * burst needs is a page fault or two again at the next (bursts of 300
 * unexpected messages of 8 KiB with 1 MiB kept: 1084 page faults in 20). */
#define MPIDI_BIP_SPARES_BYTES (4u << 20)

/* Entries of unexpected messages come in sizes for up to 256, 1 KiB, 4
 * KiB inline bytes and a whole short message (bip_recv.c unexp_alloc). */
#define MPIDI_BIP_UNEXP_SIZES 4

/* A drain's turn may end at a receive this large (bip_progress.c
 * drain_one): what follows stays in the ring. */
#define MPIDI_BIP_DRAIN_STOP_MIN 512

/* A BIP long receive: posted on a free tag (then the ACK goes out) or
 * waiting for one in the receive FIFO. */
typedef struct MPIDI_BIP_lrecv {
	struct MPIDI_BIP_lrecv *next; /* receive FIFO */
	int node, tag;
	void *dst;
	MPIDI_BIP_ctl_ack_t ack;      /* what to tell the sender once posted */
	bip_req_t breq;
	MPIDI_BIP_paths_t *timed;     /* in flight for that chooser
				       * (bip_path.h) until it completes */
	/* The transfer is over: err is MPI_SUCCESS or how it failed. */
	int (*complete)(struct MPIDI_BIP_lrecv *lr, int err);
	void *arg;
} MPIDI_BIP_lrecv_t;

/* Reads of three-way messages from one sender that one progress call
 * started, done by one bip_readv when it ends (bip_recv.c). Per read:
 * landed(arg, err) once it is over; ask_done, the done of the ask that
 * replaces a read BIP could not do. */
typedef struct {
	int node;
	unsigned n;
	uint64_t bytes;
	struct bip_rvec v[BIP_READV_MAX];
	struct {
		uint64_t sreq;
		uint32_t flags;
		int (*landed)(void *arg, int err);
		int (*ask_done)(MPIDI_BIP_lrecv_t *lr, int err);
		void *arg;
		MPIDI_BIP_paths_t *timed; /* the chooser that chose the read */
	} m[BIP_READV_MAX];
} MPIDI_BIP_reads_t;

/* A BIP long send on the tag the receiver named. */
typedef struct MPIDI_BIP_lsend {
	struct MPIDI_BIP_lsend *next;
	int node, tag;
	const void *src;
	uint64_t len;
	bool packets; /* the receiver chose them (MPIDI_BIP_ACK_CHOSEN) */
	bool posted;
	bip_req_t breq;
	int (*complete)(struct MPIDI_BIP_lsend *ls, int err);
	void *arg;
} MPIDI_BIP_lsend_t;

/* The read-or-ask choosers: one for messages that come while no send of
 * ours the peer may read is in flight (one way, a ping-pong: the peer's
 * core is free to copy what we ask for), one for messages that come while
 * some are (both ways at once: the peer copies its own receives). A cost
 * measured in the one says nothing of the other: the same 1 MiB messages
 * asked cost 70-80 ns/KiB one way and 125-190 both ways, where reads cost
 * 60-85, and a chooser shared by both asked for a quarter of each
 * both-ways phase before the costs of asking there had moved. */
enum {
	MPIDI_BIP_PATHS_ALONE,
	MPIDI_BIP_PATHS_BOTH,
	MPIDI_BIP_PATHS_REGIMES
};

/* A message two processes copy at once: we read [0, at) of the sender's
 * data while it writes [at, len) into dst (PUSH). It is over when the
 * sender says so (PUSHED), whatever our read did: until then it may still
 * write into dst. */
typedef struct MPIDI_BIP_split {
	int node;
	uint64_t handle;              /* ours, named in PUSHED */
	uint64_t sreq;                /* the sender's, named in our ACK */
	uint64_t addr, at, len;       /* its data; the sender's part */
	char *dst;
	uint32_t ack_flags;           /* LAST for a truncating receive */
	int err;                      /* how our read failed, if it did */
	MPIDI_BIP_paths_t *paths;     /* the chooser that times it */
	int (*complete)(void *arg, int err);
	void *arg;
} MPIDI_BIP_split_t;

/* The eager message from a peer whose pieces are coming: its bytes land in
 * dst (the matched receive's buffer, or an unexpected message's) up to
 * cap, the rest of a truncated message is counted and dropped. */
typedef struct {
	bool active;
	uint64_t data_sz, got, cap;
	char *dst;
	MPIR_Request *rreq;   /* matched: it completes with the last piece */
	MPIDI_BIP_unexp_t *u; /* else the unexpected message it fills */
	int err;              /* no memory for it: its pieces are dropped, and
			       * it ends in this error */
} MPIDI_BIP_eager_t;

/* Credits and the send FIFO toward one peer (section 3.5). */
typedef struct {
	bool failed;          /* the peer died or left: nothing more to it */
	int ncredits;         /* N of the pair, agreed at start-up */
	int credits;          /* C(i->j): control messages we may still send */
	int owed;             /* B(i<-j): consumed, credits not yet returned */
	bool credits_due;     /* a credits-only message waits for a send slot */
	uint64_t rts3_max;    /* the largest three-way message it sends */
	size_t piece;         /* bytes of each eager piece, header included */
	size_t read_min;      /* it may read our data from this size (BIP) */
	size_t stream_min;    /* from this size a message goes eagerly only
			       * alone (bip_send.c eager_fits) */
	uint64_t stream_at;   /* 1 + recvs_done at our last message to it
			       * from stream_min up; 0: none yet */
	unsigned readable;    /* our sends it may read, not over yet */
	MPIDI_BIP_eager_t eager; /* its eager message in flight to us */
	MPIDI_BIP_ctlq_t *head, *tail;
	unsigned queued;      /* messages in that FIFO */
	uint32_t pid;         /* its process and host, from its card: */
	char host[MPIDI_BIP_HOST_MAX]; /* named when it is gone */
} MPIDI_BIP_peer_t;

/* What each protocol did, printed at finalize on request. */
typedef struct {
	uint64_t sent[MPIDI_BIP_NPROTOS]; /* by enum MPIDI_BIP_proto */
	uint64_t ssend;          /* synchronous sends (always rendezvous) */
	uint64_t fragments;      /* rendezvous fragments */
	uint64_t read;           /* messages we read from their sender */
	uint64_t read_together;  /* ...of them, with others by one bip_readv */
	uint64_t split;          /* ...of them, the sender writing a part */
	uint64_t pushed;         /* parts we wrote for a receiver */
	uint64_t credits_only;   /* credits-only messages sent */
	uint64_t lent;           /* short sends queued with their data lent */
	uint64_t dropped[MPIDI_BIP_CTL_NDROPS]; /* malformed messages, by why */
	uint64_t unexpected;     /* messages that arrived before a receive */
	uint64_t held, held_fetched; /* three-way ones held; fetched after */
	uint64_t bufs, bufs_reused; /* temporary buffers taken; kept ones */
	uint64_t am_short, am_3way;
	uint64_t rma_direct;     /* puts and gets copied by us alone... */
	uint64_t rma_mapped;     /* ...by load and store (the rest: single
				  * copies) */
	uint64_t node_coll;      /* collectives through shared memory */
	uint64_t node_coll_read; /* ...their data read where it lies */
	uint64_t node_coll_split; /* ...allreduces split (allreduce_split) */
	unsigned sfifo_depth, sfifo_max;  /* send FIFOs, all peers */
	unsigned rfifo_depth, rfifo_max;  /* receive FIFO (waiting for a tag) */
	unsigned unexp_depth, unexp_max;
} MPIDI_BIP_counters_t;

/* Temporary buffers kept for reuse, at most so many and so many bytes of
 * capacity (bip_buf.c): a rank that never gets a message before its
 * receive keeps none. */
#define MPIDI_BIP_KEEP 8
#define MPIDI_BIP_KEEP_BYTES (1u << 20)

typedef struct {
	bip_ep_t *ep;
	MPIDI_BIP_counters_t cnt;
	/* limits, from the CVARs at init */
	size_t short_limit;             /* largest SHORT payload */
	size_t rndv_threshold;          /* smallest rendezvous message */
	size_t eager_limit;             /* largest eager one */
	size_t eager_stream_limit;      /* largest eager one behind others;
					 * SIZE_MAX: bip_stream_read_min */
	uint64_t recvs_done;            /* receives completed so far */
	size_t fragment;                /* rendezvous fragment */
	size_t split_min;               /* smallest read shared with the
					 * sender; 0: never */
	int accept;                     /* credits we can take from a peer */
	unsigned sfifo_limit, rfifo_limit;
	/* requests that peers name in control messages */
	MPIDI_BIP_handles_t sends;      /* three-way and rendezvous sends */
	MPIDI_BIP_handles_t am_sends;   /* announced active messages */
	MPIDI_BIP_handles_t splits;     /* reads the sender helps with */
	unsigned detached;              /* sends whose cancel failed, going on */
	int lost_seen;                  /* BIP's count of lost peers, handled */
	unsigned nfailed;               /* peers failed (MPIDI_BIP_peer_failed) */
	/* control messages */
	MPIDI_BIP_peer_t *peers;
	unsigned sfifo_peers;           /* peers with a non-empty send FIFO */
	int sfifo_next;                 /* where the next drain starts */
	unsigned credits_due;           /* peers owed a credits-only message */
	/* matching */
	MPIR_Request *posted_head, *posted_tail;
	/* receives completed of MPIDI_BIP_DRAIN_STOP_MIN bytes or more: a
	 * drain's turn may end at one (bip_progress.c drain_one) */
	uint64_t recvs_large;
	MPIDI_BIP_unexp_t *unexp_head, *unexp_tail;
	MPIDI_BIP_spares_t unexp_spares[MPIDI_BIP_UNEXP_SIZES];
	unsigned nheld;                 /* three-way messages held... */
	uint64_t hold_ns;               /* ...so long at most */
	/* matched by a receive call, their data to read at the next progress
	 * call (MPIDI_BIP_recv_fetch_due), oldest first */
	MPIDI_BIP_unexp_t *due_head, *due_tail;
	MPIDI_BIP_reads_t reads;        /* read at this progress call's end */
	/* long messages */
	int ntags;
	MPIDI_BIP_lrecv_t **tag_owner;  /* receive per BIP tag; NULL: free */
	unsigned nlrecvs;               /* tags owned */
	MPIDI_BIP_lrecv_t *rfifo_head, *rfifo_tail;
	/* Read or ask: what each cost, apart for messages that came while
	 * sends of ours the peer may read were in flight (bip_recv.c). */
	MPIDI_BIP_paths_t paths[MPIDI_BIP_PATHS_REGIMES];
	MPIDI_BIP_lsend_t *lsends, **lsends_tail; /* oldest first */
	bool crowded;                   /* more local ranks than cores */
	/* temporary buffers kept for the next ones (bip_buf.c) */
	char *kept[MPIDI_BIP_KEEP];     /* oldest first */
	unsigned nkept;
	size_t kept_bytes;              /* their capacities */
	/* send FIFO entries kept for the next ones (bip_credits.c): those
	 * of a header, those of a whole control message */
	MPIDI_BIP_spares_t ctlq_spares[2];
} MPIDI_BIP_global_t;

extern MPIDI_BIP_global_t MPIDI_BIP_global;

/* Append e, whose next is NULL, to the queue head .. tail. */
#define MPIDI_BIP_QUEUE_APPEND(head, tail, e)                                  \
	do {                                                                   \
		if (tail)                                                      \
			(tail)->next = (e);                                    \
		else                                                           \
			(head) = (e);                                          \
		(tail) = (e);                                                  \
	} while (0)

/* The chooser for a message node sends us now (MPIDI_BIP_PATHS_*). */
static inline MPIDI_BIP_paths_t *MPIDI_BIP_paths_for(int node)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	return &g->paths[g->peers[node].readable ? MPIDI_BIP_PATHS_BOTH
						 : MPIDI_BIP_PATHS_ALONE];
}

/* Nanoseconds on the monotonic clock, for bip_path.h's samples and the
 * holds of three-way announcements. Not MPICH's MPL_wtime: it reads the
 * wall clock, which steps when the system's time is set. */
static inline uint64_t MPIDI_BIP_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* bip_buf.c: a temporary buffer of at least len bytes (NULL: no memory),
 * given back with MPIDI_BIP_buf_put (NULL: nothing); at finalize the kept
 * ones are freed. */
void *MPIDI_BIP_buf_get(size_t len);
void MPIDI_BIP_buf_put(void *buf);
void MPIDI_BIP_buf_finalize(void);
void *MPIDI_BIP_spare_get(MPIDI_BIP_spares_t *s, size_t size);
void MPIDI_BIP_spare_put(MPIDI_BIP_spares_t *s, void *p, size_t size);
void MPIDI_BIP_spares_free(MPIDI_BIP_spares_t *s);
void MPIDI_BIP_ctlq_finalize(void);
/* bip_recv.c: the kept entries of unexpected messages are freed. */
void MPIDI_BIP_unexp_finalize(void);

/* bip_coll.c: the CVARs are read (checked before), and a communicator's
 * shared memory ends with it. */
#define MPIDI_BIP_NODE_COLL_LIMIT (1 << 20)
void MPIDI_BIP_coll_init(void);
void MPIDI_BIP_coll_free(MPIR_Comm *comm);

/* An MPI error for a failed BIP call. */
int MPIDI_BIP_error(int rc, const char *what);
/* The MPI error for memory we could not get, here. */
#define MPIDI_BIP_NOMEM()                                                      \
	MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,     \
			     __LINE__, MPI_ERR_OTHER, "**nomem", 0)
/* The MPI error (class MPIX_ERR_PROC_FAILED) for an operation with node. */
int MPIDI_BIP_proc_failed(int node);
/* node died or left: every operation with it ends with that error, and
 * operations with the other peers go on. Once per node. */
int MPIDI_BIP_peer_failed(int node);
/* What each part does when a peer fails. */
void MPIDI_BIP_ctl_peer_failed(int node, int err);
int MPIDI_BIP_long_peer_failed(int node, int err);
int MPIDI_BIP_send_peer_failed(int node, int err);
int MPIDI_BIP_am_peer_failed(int node, int err);
int MPIDI_BIP_recv_peer_failed(int node, int err);
/* A request of kind that completed at once with node's failure. */
int MPIDI_BIP_failed_request(int kind, MPIR_Comm *comm, int node,
			     MPIR_Request **req_p);
#define BIP_CHECK(rc, what)                                                    \
	do {                                                                   \
		if ((rc) < 0) {                                                \
			mpi_errno = MPIDI_BIP_error((rc), (what));             \
			goto fn_fail;                                          \
		}                                                              \
	} while (0)

/* bip_credits.c: control messages, credits, send FIFOs. */
int MPIDI_BIP_ctl_send(int node, void *msg, size_t len);
int MPIDI_BIP_ctl_sendv(int node, void *hdr, size_t hdr_len, const void *data,
			size_t data_len);
/* The same, when another message to node follows at once. */
int MPIDI_BIP_ctl_sendv_more(int node, void *hdr, size_t hdr_len,
			     const void *data, size_t data_len);
/* True when node's FIFO is full: it holds as many messages as node's
 * queue takes. A short send then lends its data instead of a copy
 * (MPIDI_BIP_ctl_sendv_lent). */
static inline bool MPIDI_BIP_send_fifo_full(int node)
{
	const MPIDI_BIP_peer_t *p = &MPIDI_BIP_global.peers[node];

	return p->queued >= (unsigned)p->ncredits;
}
/* Queue the message behind the full FIFO with the data where it is: sreq
 * completes when it leaves (or fails with node). */
int MPIDI_BIP_ctl_sendv_lent(int node, void *hdr, size_t hdr_len,
			     const void *data, size_t data_len,
			     MPIR_Request *sreq);
/* The lent data of sreq waiting in node's FIFO is copied there, and sreq
 * completes (its message still goes). */
int MPIDI_BIP_send_fifo_unlend(int node, MPIR_Request *sreq);
/* Rule: the header's credits are added to C(i->j) on arrival. */
static inline void MPIDI_BIP_ctl_arrived(int node, const MPIDI_BIP_ctl_t *ctl)
{
	MPIDI_BIP_global.peers[node].credits += ctl->credits;
}
/* The credits owed to node go back in a message of their own. */
int MPIDI_BIP_credits_return(int node);
/* Rule: B(i<-j)++ once the message left BIP's queue (credits-only ones are
 * not counted: bip_credits.c); at half of N the credits go back on their
 * own. Inline: most messages stop at the count. */
static inline int MPIDI_BIP_ctl_consumed(int node, const MPIDI_BIP_ctl_t *ctl)
{
	MPIDI_BIP_peer_t *p = &MPIDI_BIP_global.peers[node];

	if (ctl->type == MPIDI_BIP_CTL_CREDITS)
		return MPI_SUCCESS;
	if (++p->owed < (p->ncredits + 1) / 2 || p->credits_due)
		return MPI_SUCCESS;
	return MPIDI_BIP_credits_return(node);
}
/* Only when MPIDI_BIP_send_fifo_busy(): an empty poll asks that instead of
 * paying for the call and its frame. */
int MPIDI_BIP_send_fifo_drain(int *progress);
static inline bool MPIDI_BIP_send_fifo_busy(void)
{
	return MPIDI_BIP_global.sfifo_peers || MPIDI_BIP_global.credits_due;
}
/* Take the announcement of the send with this handle out of node's send
 * FIFO, if it is still there: true when it was (it never left). */
bool MPIDI_BIP_send_fifo_take(int node, uint64_t handle);
int MPIDI_BIP_credits_init(unsigned small_queue);
void MPIDI_BIP_credits_agree(int node, int peer_accepts);

/* bip_long.c: BIP long messages, the tag table and the receive FIFO. */
/* Receive len bytes into dst from node on a free tag (or once one frees);
 * the answer ack_type (ACK or AM_CTS) names the tag, sreq, offset and
 * flags (MPIDI_BIP_ACK_*). timed: that chooser counts it in flight until
 * it completes (bip_path.h); that counting is the caller's. complete
 * runs once, maybe before this returns: a receive that cannot be posted
 * nor wait (BIP refused it, no memory, the FIFO at its limit) ends in an
 * error at both ends; dst NULL for len > 0 says the caller had no memory
 * for the data. An error comes back if the answer could not go, and for
 * an active message (see lrecv_fail). */
int MPIDI_BIP_lrecv(int node, int ack_type, uint64_t sreq, uint64_t offset,
		    uint64_t len, uint32_t flags, MPIDI_BIP_paths_t *timed,
		    void *dst,
		    int (*complete)(MPIDI_BIP_lrecv_t *, int), void *arg);
/* Tell node its transfer sreq failed here (ACK or AM_CTS with FAILED). */
int MPIDI_BIP_answer_failed(int node, int ack_type, uint64_t sreq);
int MPIDI_BIP_lsend(const MPIDI_BIP_ctl_ack_t *ack, int node,
			  const void *src,
			  int (*complete)(MPIDI_BIP_lsend_t *, int), void *arg);
/* Only when MPIDI_BIP_long_busy(), as above. */
int MPIDI_BIP_long_progress(int *progress);
static inline bool MPIDI_BIP_long_busy(void)
{
	return MPIDI_BIP_global.lsends || MPIDI_BIP_global.nlrecvs;
}
/* The long sends of request arg read from `to` instead of `from` (a copy
 * of the same bytes), those BIP holds already included. */
int MPIDI_BIP_lsends_move(void *arg, const char *from, const char *to);
/* Whether a long send for arg (its request) is still under way. */
bool MPIDI_BIP_lsend_pending(const void *arg);

/* bip_recv.c, bip_send.c, bip_am.c: what arriving control messages do
 * (checked, and the requests they name looked up, in bip_progress.c). */
int MPIDI_BIP_recv_short(int node, const MPIDI_BIP_ctl_t *ctl,
			 const void *data);
int MPIDI_BIP_recv_rts(int node, const MPIDI_BIP_ctl_rts_t *rts);
/* Three-way messages held past MPIDI_BIP_global.hold_ns are fetched: on a
 * progress call that found nothing else to do. */
int MPIDI_BIP_recv_held_due(int *progress);
/* Messages a receive call matched whose data it may read are fetched. */
int MPIDI_BIP_recv_fetch_due(int *progress);
/* The reads this progress call started (MPIDI_BIP_global.reads) are
 * done, their ACKs sent and their receives completed. */
int MPIDI_BIP_recv_reads_done(void);
int MPIDI_BIP_recv_withdraw(int node, uint64_t sreq);
int MPIDI_BIP_recv_eager(int node, const MPIDI_BIP_ctl_rts_t *rts,
			 const void *data);
int MPIDI_BIP_recv_more(int node, const MPIDI_BIP_ctl_t *more,
			const void *data);
int MPIDI_BIP_recv_pushed(int node, const MPIDI_BIP_ctl_ack_t *pushed);
int MPIDI_BIP_send_ack(int node, MPIR_Request *sreq,
		       const MPIDI_BIP_ctl_ack_t *ack);
int MPIDI_BIP_send_push(int node, MPIR_Request *sreq,
			const MPIDI_BIP_ctl_push_t *push);
int MPIDI_BIP_am_arrived(int node, const MPIDI_BIP_ctl_am_t *am,
			 const void *payload);
int MPIDI_BIP_am_rts(int node, const MPIDI_BIP_ctl_am_t *am,
		     const void *payload);
int MPIDI_BIP_am_cts(int node, MPIR_Request *sreq,
		     const MPIDI_BIP_ctl_ack_t *cts);

#endif
