/*
 * nic.h - private state of the NIC control program, shared by its files
 * (reliable.c, rx.c, tx.c, hostif.c, nic.c) and by the firmware unit tests.
 */
#ifndef BIP_FIRMWARE_NIC_H
#define BIP_FIRMWARE_NIC_H

#include <string.h>

#include "bip_copy.h"
#include "bip_errno.h"
#include "firmware.h"
#include "kdev.h"

#define BIPFW_NONE 0xffffu /* end of an index-linked list */

/*
 * Reliability: go-back-N with modified ACK/NACK, per pair of nodes.
 *
 * Sender invariants: una <= resend <= next (in sequence space, mod 2^32).
 * Packets [una, next) sit in the scoreboard until acknowledged; those in
 * [resend, next) are (again) to be put on the link. An ACK carrying a moves
 * una to a (cumulative). A NACK for s means "everything before s arrived,
 * resend from s": una = s, resend = s. A NACK flagged busy adds a hold-off
 * (doubling, reset on progress) so a receiver out of buffers is not flooded.
 * On lossy wires, no progress for the retransmission timeout (rto_us)
 * rolls resend back to una. The timeout follows the measured round trip
 * (RFC 6298: smoothed RTT + 4 x its mean deviation, within [rto_min_us,
 * rto_max_us]); one packet is timed at a time and never a resent one
 * (Karn: its ack cannot tell which copy it answers); each expiry doubles
 * the timeout up to rto_max_us, the next sample sets it again.
 *
 * Congestion control on lossy wires (AIMD, as TCP Reno): at most cwnd
 * packets in flight, resends included. cwnd grows by one per packet acked
 * below ssthresh (slow start), by one per cwnd packets acked above it; a
 * loss (a NACK for a packet sent after the last reduction, at recover or
 * beyond) sets both to half the packets in flight, a timeout drops cwnd to
 * BIPFW_CWND_MIN. Without it go-back-N resends a whole window per lost
 * packet, and a fast sender overflows a slow receiver's socket, which
 * drops silently. The packet that fills the window asks for an ack at once
 * (BIP_PKTF_ACKREQ) rather than after the receiver's ack delay.
 *
 * Receiver invariant: every packet before expected was delivered exactly
 * once. Only seq == expected is accepted; an older one is a duplicate
 * (dropped, but its ack is re-sent since the sender may have missed it);
 * a newer one follows a loss (dropped, one NACK for expected per gap).
 * A packet the host cannot take (no buffer) is dropped and NACKed busy.
 * Acks ride on every packet going back; a bare ACK goes when ack_every
 * packets are unacknowledged, when ack_delay_us passed, or at once when a
 * sender is blocked on it (urgent).
 */
struct bipfw_rel_tx {
	uint32_t next;        /* seq of the next new packet */
	uint32_t una;         /* oldest unacknowledged seq */
	uint32_t resend;      /* next seq to put on the link */
	uint32_t backoff_us;  /* current busy hold-off, 0 when none */
	uint64_t hold_until;  /* no packet before this time (busy NACK) */
	uint64_t progress_at; /* last ack progress: base of the timer */
	uint64_t acked_at;    /* last ack progress, or since when one is
			       * awaited: a silent peer's age */
	uint32_t rto_us;      /* the retransmission timeout now */
	uint32_t rto_min_us, rto_max_us;
	uint32_t srtt_us;     /* smoothed round trip... */
	uint32_t rttvar_us;   /* ...and its mean deviation... */
	bool rtt_known;       /* ...once a sample came in */
	bool timing;          /* timed_seq is being timed... */
	uint32_t timed_seq;
	uint64_t timed_at;    /* ...since it was sent then */
	uint32_t cwnd;        /* congestion window, packets */
	uint32_t ssthresh;    /* slow start below it */
	uint32_t cwnd_acked;  /* acked toward the next increase above it */
	uint32_t recover;     /* a loss before this seq was answered */
};

#define BIPFW_CWND_INIT 32
#define BIPFW_CWND_MIN 2
#define BIPFW_CWND_MAX 32768 /* the largest BIP_WINDOW */

struct bipfw_rel_rx {
	uint32_t expected;      /* next seq accepted */
	uint32_t unacked;       /* accepted but not yet acknowledged */
	uint64_t unacked_since; /* when the oldest of those was accepted */
	uint32_t nack_seq;      /* seq a NACK is due for */
	uint16_t nack_flags;    /* BIP_PKTF_BUSY or 0 */
	bool nack_due;          /* a NACK must go out */
	bool gap_nacked;        /* the current gap was NACKed already */
	bool ack_urgent;        /* ack without waiting */
};

enum bipfw_rx_verdict {
	BIPFW_RX_ACCEPT, /* seq == expected */
	BIPFW_RX_DUP,    /* already delivered */
	BIPFW_RX_GAP,    /* something before it was lost */
};

static inline bool bipfw_seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* The timeout starts at rto_max_us until a round trip is measured. */
void bipfw_rel_init(struct bipfw_rel_tx *tx, struct bipfw_rel_rx *rx,
		    uint64_t now, uint32_t rto_min_us, uint32_t rto_max_us);
/* Event: cumulative ack a. Returns how many packets it newly covers. */
uint32_t bipfw_rel_on_ack(struct bipfw_rel_tx *tx, uint32_t a, uint64_t now);
/* Event: NACK for seq (after its cumulative ack was applied). */
void bipfw_rel_on_nack(struct bipfw_rel_tx *tx, uint32_t seq, bool busy,
		       uint64_t now, unsigned first_backoff_us);
/* Event: time passes. Returns true if it rolled back (a timeout). */
bool bipfw_rel_on_timer(struct bipfw_rel_tx *tx, uint64_t now);
/* Event: a new packet takes the next seq. */
uint32_t bipfw_rel_on_send_new(struct bipfw_rel_tx *tx, uint64_t now);

/* Predicates, inline: the idle loop asks them for every peer. */
static inline bool bipfw_rel_may_send(const struct bipfw_rel_tx *tx,
				      uint64_t now)
{
	return now >= tx->hold_until;
}

static inline bool bipfw_rel_window_full(const struct bipfw_rel_tx *tx,
					 unsigned window)
{
	return tx->next - tx->una >= window;
}

/* Packets a lossy peer may have in flight: the window, or less while the
 * network is congested. */
static inline uint32_t bipfw_rel_limit(const struct bipfw_rel_tx *tx,
				       unsigned window)
{
	return tx->cwnd < window ? tx->cwnd : window;
}

/* Event: a sequenced packet arrives. */
enum bipfw_rx_verdict bipfw_rel_on_arrival(struct bipfw_rel_rx *rx,
					   uint32_t seq);
/* Event: the host took the expected packet / had no buffer for it. */
void bipfw_rel_on_delivered(struct bipfw_rel_rx *rx, uint64_t now);
void bipfw_rel_on_refused(struct bipfw_rel_rx *rx);
/* Event: a packet carrying our ack (bare ACK or piggyback) left. */
void bipfw_rel_on_ack_sent(struct bipfw_rel_rx *rx);
static inline bool bipfw_rel_ack_due(const struct bipfw_rel_rx *rx,
				     uint64_t now, unsigned every,
				     unsigned delay_us)
{
	if (rx->ack_urgent)
		return true;
	if (!rx->unacked)
		return false;
	return rx->unacked >= every || now - rx->unacked_since >= delay_us;
}

/* --- sends ------------------------------------------------------------- */

enum bipfw_send_state {
	BIPFW_SEND_FREE,
	BIPFW_SEND_QUEUED,   /* waiting for its first packet (FIFO) */
	BIPFW_SEND_WAIT_CTS, /* long: RTS sent, receiver not ready */
	BIPFW_SEND_STREAM,   /* long: cleared (or ready mode), data being
			      * packetized */
	BIPFW_SEND_WAIT_ACK, /* every packet out, waiting for the acks */
	BIPFW_SEND_WAIT_FIN, /* ready mode: all acked, the verdict not in */
	BIPFW_SEND_DONE,     /* long: complete, status set, host to reap */
};

struct bipfw_send {
	uint8_t state;  /* enum bipfw_send_state */
	bool is_long;
	bool ready;     /* long: ready mode, data without RTS/CTS */
	bool fin;       /* ready: the receiver's verdict is in (status) */
	bool run;       /* small: more follow at once (posted, then kicked
			 * without flush): the run takes a bulk wire */
	uint16_t peer;
	uint16_t next;  /* FIFO / stream list link */
	uint32_t gen;   /* request generation */
	uint32_t tag;
	uint32_t rtag;  /* receiver's tag for the data (from the CTS) */
	int status;
	const uint8_t *buf; /* long: user buffer; small: the copy below */
	size_t len;
	size_t sent;    /* bytes packetized so far */
	uint64_t raddr; /* long: receive buffer address, for DMA */
	uint64_t rkey;  /* long: the key it was exposed under (the CTS's
			 * payload), or 0 */
	bool direct;    /* long: data already written by DMA */
	bool pulled;    /* ready: the receiver reads the data itself */
	bool packets;   /* ready: never pulled (BIPFW_LONG_PACKETS) */
	uint64_t src_addr; /* pulled: the address it was told (the payload
			    * of the packet, kept for a resend) */
	uint8_t *copy;  /* small: BIP_SMALL_MAX bytes owned by the slot */
};

/* One packet in flight, enough to rebuild it for a resend. */
struct bipfw_txent {
	uint8_t type;
	uint16_t flags;
	uint16_t slot;   /* owning send slot, or BIPFW_NONE */
	uint32_t len;
	uint32_t tag;
	uint32_t msg_id;
	uint64_t offset;
	uint64_t addr;
	bool last;       /* SMALL, LONG_DATA: completes its send once acked */
};

/* --- long receives --------------------------------------------------- */

enum bipfw_lrecv_state {
	BIPFW_LRECV_FREE,
	BIPFW_LRECV_POSTED, /* waiting for an RTS on this tag */
	BIPFW_LRECV_ACTIVE, /* matched: CTS queued or sent, data arriving */
	BIPFW_LRECV_VERDICT, /* ready mode: all data in, verdict to send */
	BIPFW_LRECV_DONE,   /* complete, status set, host to reap */
};

struct bipfw_lrecv {
	uint8_t state;     /* enum bipfw_lrecv_state */
	bool cts_flagged;  /* TRUNC to be carried by its CTS */
	bool ready;        /* taken by a ready-mode message: a CTS (its
			    * verdict) goes back once all data arrived */
	uint16_t src;
	uint16_t cts_next; /* link in the peer's CTS list */
	uint16_t rts_head, rts_tail; /* announced messages not yet matched */
	uint32_t gen;
	uint32_t msg_id;
	int status;
	uint8_t *buf;
	size_t cap, total, received;
	uint64_t key;      /* buf exposed to src's DMA under it (our CTS
			    * carries it), or 0 */
};

/* An RTS waiting for its tag to be posted, or a refused ready-mode message
 * whose verdict is owed to its sender. */
struct bipfw_rts {
	uint16_t src;
	uint16_t next;
	uint32_t msg_id;
	uint64_t total;
};

/* --- peers -------------------------------------------------------------- */

/* FIFO of indices into an array whose elements link through `field`. */
struct bipfw_list {
	uint16_t head, tail;
};

#define BIPFW_LIST_INIT(l) ((l)->head = (l)->tail = BIPFW_NONE)

#define BIPFW_LIST_PUSH(l, arr, field, i)                                      \
	do {                                                                   \
		(arr)[i].field = BIPFW_NONE;                                   \
		if ((l)->tail == BIPFW_NONE)                                   \
			(l)->head = (uint16_t)(i);                             \
		else                                                           \
			(arr)[(l)->tail].field = (uint16_t)(i);                \
		(l)->tail = (uint16_t)(i);                                     \
	} while (0)

#define BIPFW_LIST_POP(l, arr, field)                                          \
	do {                                                                   \
		(l)->head = (arr)[(l)->head].field;                            \
		if ((l)->head == BIPFW_NONE)                                   \
			(l)->tail = BIPFW_NONE;                                \
	} while (0)

/* An open wire, and the peers it carries. */
#define BIPFW_WIRES_MAX 4
#define BIPFW_NO_WIRE 0xff /* a peer not connected yet */

struct bipfw_port {
	const struct bipfw_wire_class *cls;
	void *ctx;
	bool lossy;      /* checksums, timers */
	size_t chunk;    /* long data per packet */
	size_t plain_max; /* its class's plain_max, or 0 */
	unsigned npeers; /* peers it carries: one nobody uses is not polled */
	unsigned nbulk;  /* peers whose wide messages only it carries... */
	uint64_t hot_until; /* ...read every step until then, else now and
			     * then (bulk runs announce themselves) */
	char bulk_why[48];  /* bip_info's "why" for its bulk peers */
};

struct bipfw_peer {
	uint8_t state;                /* enum bipfw_peer_state */
	uint8_t wire;                 /* index in fw->wires, or NO_WIRE */
	uint8_t bulk;                 /* wire for messages wider than a
				       * packet, or NO_WIRE: see tx.c */
	uint8_t path;                 /* wire our packets take now */
	bool lossy;                   /* its wire's flag, cached */
	uint16_t longs;               /* our long sends to it not complete */
	const char *why;              /* why that wire (bip_info, logs) */
	struct bipfw_rel_tx tx;
	struct bipfw_rel_rx rx;
	struct bipfw_txent *board;    /* scoreboard: window entries by seq,
				       * from the first packet to the peer */
	struct bipfw_list fifo;       /* sends waiting for their first packet */
	struct bipfw_list stream;     /* long sends cleared to send data */
	struct bipfw_list cts;        /* tags owing this peer a CTS */
	struct bipfw_list refused;    /* ready messages refused (rts pool) */
	uint32_t discard_msg;         /* ready message being dropped... */
	uint64_t discard_end;         /* ...up to its last byte... */
	bool discarding;              /* ...while this is set */
	bool close_due;               /* our CLOSE waits for its turn */
	bool tx_listed;               /* in fw->tx_list */
	bool sent;                    /* a packet of ours went to it */
	uint8_t *small_part;          /* a small message coming in pieces */
	uint32_t small_fill;          /* (BIP_PKTF_MORE): bytes so far */
	uint64_t pinged_at;           /* lossy: our last liveness probe */
	uint64_t rx_at;               /* lossy: when its last packet came,
				       * or when it connected */
};

/* An entry of the small-message queue: one cache line, which holds a
 * message of up to BIP_PKT_INLINE_MAX bytes itself. The queue's first
 * laps thus touch a few dense pages, not one page per entry, and the
 * entries do not all fall in the same cache sets. */
struct bipfw_small_entry {
	uint16_t src;
	uint8_t kept;        /* lent by wire kept - 1 (keep), 0: a copy */
	uint32_t len;
	const uint8_t *data; /* the message: inl, buf, or where the wire
			      * keeps it */
	uint8_t *buf;        /* BIP_SMALL_MAX bytes from the pool, or NULL */
	uint64_t token;      /* the wire's, for unkeep */
	uint8_t inl[BIP_PKT_INLINE_MAX];
};

_Static_assert(sizeof(struct bipfw_small_entry) == 64,
	       "a small-queue entry is one cache line");

struct bipfw {
	struct bipfw_config cfg;
	struct bipfw_port wires[BIPFW_WIRES_MAX];
	unsigned nwires;
	bool batching;    /* some wire batches its sends until a flush */
	unsigned forced;  /* BIP_WIRE: 0 auto, else its choice's index */
	bool bulk_auto;   /* BIP_BULK: wide messages by a bulk wire */
	bool any_lossy;   /* some peer is on a lossy wire: run the timers */
	unsigned fault_mask; /* packet types BIP_FAULT_* hit (1 << type) */
	uint64_t fault_rng;  /* their seeded generator */

	struct bipfw_peer *peers;
	int others_lost; /* peers other than ourselves no longer LIVE */
	unsigned self_unseq; /* our unsequenced packets to us, not yet taken */
	struct bipfw_send *slots;
	uint16_t free_slot; /* free list of slots */
	struct bipfw_lrecv *tags;
	struct bipfw_rts *rts;
	uint16_t free_rts;

	struct bipfw_small_entry *smallq;
	unsigned sq_head, sq_count;
	/* The queue's buffers for copies (messages over the inline bytes,
	 * not lent): a stack of free ones, so the ones just freed are used
	 * again and the rest are never touched: a queue sized for many
	 * peers costs its 64-byte entries, not its buffers. nqbufs of them,
	 * at most QBUF_MAX: more copies waiting at once overflow the queue
	 * (the host takes everything at every poll: that takes a host that
	 * stopped polling while thousands came). */
	uint8_t **qbuf_free;
	unsigned nqbufs, nqbuf_free;
	bool in_overflow; /* refusing small packets right now */
	/* The packet rx_wire hands over: its wire may lend its payload
	 * (index + 1, 0: no), and the queue entry that took the loan. */
	uint8_t rx_lend;
	struct bipfw_small_entry *rx_lent;
	int pending_error;
	/* The one wire of every other peer, when small messages can be
	 * taken from it directly (bipfw_rx_direct, ports.c); -1 when not. */
	int direct_wire;
	/* The first 16 bytes of a header such a take accepts, as words
	 * (bipfw_rx_words): all but the source are fixed. */
	uint64_t unseq_w0[2]; /* without and with BIP_PKTF_INLINE */
	uint64_t unseq_w1;
	uint64_t unseq_src; /* the source's bits in the second word */
	/* The message so taken while the queue was empty, until the host
	 * consumes it: older than anything queued since. */
	struct bipfw_small_entry direct;
	bool direct_out;
	bool step_due; /* a poll must run a step: see bipfw_poll */
	bool turn_due; /* the periodic turn: BIPFW_STEP_EVERY takes went by */
	unsigned polls; /* polls and direct takes, for BIPFW_STEP_EVERY */

	uint64_t now;      /* the clock, refreshed every CLOCK_EVERY steps */
	unsigned tick;
	uint64_t next_liveness;
	uint64_t timers_at; /* the lossy timers' last run */
	unsigned rr; /* round-robin start for transmit */
	/* The peers the transmit side may owe something (a packet, an ack,
	 * a NACK, a CLOSE): a step looks at these, not at every peer, so
	 * that an idle poll costs the same with 2 nodes as with 128. */
	int *tx_list;
	unsigned tx_n;

	struct bipfw_counters cnt;
	uint8_t *mem; /* one allocation for the buffers above, or NIC
		       * memory of kdev */
	struct bipfw_kdev kdev; /* /dev/bip, when the module is there */
};

/* The queue's buffers: take one (deliver_small checked there is one), give
 * it back. */
static inline uint8_t *bipfw_qbuf_get(struct bipfw *fw)
{
	return fw->qbuf_free[--fw->nqbuf_free];
}

static inline void bipfw_qbuf_put(struct bipfw *fw, uint8_t *buf)
{
	fw->qbuf_free[fw->nqbuf_free++] = buf;
}

/* The pool of rts entries: take one (BIPFW_NONE when empty), give back. */
static inline uint16_t bipfw_rts_get(struct bipfw *fw)
{
	uint16_t i = fw->free_rts;

	if (i != BIPFW_NONE)
		fw->free_rts = fw->rts[i].next;
	return i;
}

static inline void bipfw_rts_put(struct bipfw *fw, uint16_t i)
{
	fw->rts[i].next = fw->free_rts;
	fw->free_rts = i;
}

/* The scoreboard entry of a sequence number. */
static inline struct bipfw_txent *bipfw_board(const struct bipfw *fw,
					      struct bipfw_peer *p,
					      uint32_t seq)
{
	return &p->board[seq & (fw->cfg.window - 1)];
}

/* A long message's id on the wire: its slot plus a generation, so that a
 * stale CTS for a reused slot is recognised. */
static inline uint32_t bipfw_msg_id(const struct bipfw *fw, unsigned slot)
{
	return (fw->slots[slot].gen % 0x10000) * fw->cfg.send_slots + slot;
}

/* The wire a peer is on (connected peers only). */
static inline const struct bipfw_port *bipfw_port_of(const struct bipfw *fw,
						     int peer)
{
	return &fw->wires[fw->peers[peer].wire];
}

/* The wire our packets to a peer take now: its own, or its bulk wire. */
static inline const struct bipfw_port *bipfw_path_of(const struct bipfw *fw,
						     int peer)
{
	return &fw->wires[fw->peers[peer].path];
}

/* Something may now be owed to peer: the transmit side looks at it from
 * the next step until it owes nothing (tx.c). Every event that can give a
 * peer work calls this: a post for it, a packet from it, a timer of it. */
static inline void bipfw_tx_wake(struct bipfw *fw, int peer)
{
	struct bipfw_peer *p = &fw->peers[peer];

	if (!p->tx_listed) {
		p->tx_listed = true;
		fw->tx_list[fw->tx_n++] = peer;
	}
}

/* A copy into a send slot or a link's room; plain: by plain stores, for a
 * record within its port's plain_max. */
static inline __attribute__((always_inline)) void
bipfw_copy(void *dst, const void *src, size_t len, bool plain)
{
	/* Headers and tiny payloads, in line: most pieces of a small
	 * message (8-byte windows: 71 -> 33 instructions a send). */
	if (len <= BIP_COPY_SMALL_MAX)
		bip_copy_small(dst, src, len);
	else if (plain)
		bip_copy_plain(dst, src, len);
	else
		bip_copy(dst, src, len);
}

/* Gather a small message's pieces into dst (a send slot's copy, or the
 * link's room), as bipfw_copy. */
static inline __attribute__((always_inline)) void
bipfw_gather(uint8_t *dst, const struct iovec *iov, int iovcnt, bool plain)
{
	for (int i = 0; i < iovcnt; i++) {
		bipfw_copy(dst, iov[i].iov_base, iov[i].iov_len, plain);
		dst += iov[i].iov_len;
	}
}

/* rx.c */
/* Every wire a peer uses but skip (-1: none), up to budget packets each. */
int bipfw_rx_run(struct bipfw *fw, unsigned budget, int skip);
/* Between lossless peers, a turn of the event loop at least every this many
 * polls and direct takes (bipfw_poll). */
#define BIPFW_STEP_EVERY 16
/* Whether a poll must run a whole step (bipfw_poll's rule, nic.c): no
 * direct wire, a step due, packets to transmit, a lossy peer. */
static inline bool bipfw_step_needed(const struct bipfw *fw)
{
	return fw->direct_wire < 0 || fw->step_due || fw->tx_n ||
	       fw->batching || fw->any_lossy;
}
/* Counts a poll and says whether that is all it does: with no step needed
 * and no turn due, all but every BIPFW_STEP_EVERY-th. In line: most polls
 * stop here. */
static inline bool bipfw_poll_just_count(struct bipfw *fw)
{
	return !bipfw_step_needed(fw) && !fw->turn_due &&
	       ++fw->polls % BIPFW_STEP_EVERY;
}
/* The turn of a poll that does not only count; light: see
 * bipfw_poll_light. */
int bipfw_poll_turn(struct bipfw *fw, bool light);
/* bipfw_poll for a caller that takes the direct wire's small messages
 * itself right after (bipfw_drain, bipfw_rx_direct): its periodic turn
 * leaves that wire to the caller instead of queueing what it holds. */
static inline int bipfw_poll_light(struct bipfw *fw)
{
	return bipfw_poll_just_count(fw) ? 0 : bipfw_poll_turn(fw, true);
}

/* The small message at the head of the direct wire, handed straight to fn
 * (its verdict in *stop; bipfw_drain), or with fn NULL held as fw->direct
 * (the host's peek and pop): 1, or 0 if there is none, or another kind of
 * packet (then a step ran), or a turn queued messages (serve those
 * first). */
int bipfw_rx_direct(struct bipfw *fw, bipfw_small_fn fn, void *arg,
		    int *stop);
/* The words a small message outside the sequence is checked against
 * (direct takes, and turns first), from the configuration (once, at
 * bipfw_create). */
void bipfw_rx_words(struct bipfw *fw);
/* tx.c */
int bipfw_tx_run(struct bipfw *fw);
/* Whether the transmit side may still owe p something: a packet, or an
 * ack the clock may make due. */
bool bipfw_tx_owes(const struct bipfw_peer *p);
int bipfw_tx_control(struct bipfw *fw, int peer, uint8_t type, uint16_t flags,
		     uint32_t seq);
/* A small message of len bytes to a lossless peer, written straight into
 * the link's room when nothing waits before it there: no send slot, no
 * copy of our own, since nothing sent on a lossless wire is sent again (a
 * receiver without room holds the packet in its link). -BIP_EAGAIN: it
 * must take the send FIFO. */
int bipfw_tx_small(struct bipfw *fw, int peer, const struct iovec *iov,
		   int iovcnt, size_t len);
/* Acknowledge everything received, before sleeping. */
void bipfw_tx_acks_all(struct bipfw *fw);
/* Push out what the wires batched. */
void bipfw_tx_flush(struct bipfw *fw);
/* hostif.c */
void bipfw_match_tag(struct bipfw *fw, uint32_t tag);
void bipfw_send_complete(struct bipfw *fw, unsigned slot, int status);
void bipfw_slot_free(struct bipfw *fw, unsigned slot);
/* ports.c */
void bipfw_wires_close(struct bipfw *fw);
/* Sleep until any wire may have a packet, at most max_us. */
void bipfw_wires_wait(struct bipfw *fw, unsigned max_us);
/* nic.c */
void bipfw_peer_lost(struct bipfw *fw, int peer, enum bipfw_peer_state why);
void bipfw_hostif_to_nicmem(struct bipfw *fw);

#endif
