/*
 * bip_ctl.h - the bip netmod's control messages: the wire format between
 * processes of one job, carried as BIP small messages. No MPICH types
 * here: tests, fuzzers and a hostile peer's test library use it too.
 *
 * The values below are the wire format: they must not change silently.
 * Only processes of one build talk to each other (the business card says
 * which), so there is no version field in every message.
 *
 * Two kinds of BIP messages carry MPI (MPI-BIP, section 3): control
 * messages (BIP small messages, counted by credits) and large data (BIP
 * long messages on a tag the receiver chose).
 */
#ifndef BIP_CTL_H_INCLUDED
#define BIP_CTL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "bip_limits.h"

/* Control message types: one list makes the enum and the names. */
#define MPIDI_BIP_CTL_TYPES(X)                                                 \
	X(CREDITS)      /* credits only (section 3.5) */                       \
	X(SHORT)        /* an MPI message with its data inline */              \
	X(RTS3)         /* three-way: the receiver answers at once (ACK), */   \
			/* into the user buffer or a temporary one */          \
	X(RNDV)         /* rendezvous: the receiver answers (ACK) once a */    \
			/* receive matches, one fragment per ACK */            \
	X(ACK)          /* a BIP long receive is posted on bip_tag: send */    \
			/* [offset, +len) */                                   \
	X(AM)           /* MPIDIG's active message, inline */                  \
	X(AM_RTS)       /* an active message announced: its data follows */   \
			/* the receiver's AM_CTS */                            \
	X(AM_CTS)       /* the answer to an announcement (body of ACK) */    \
	X(EAGER)        /* a message sent whole at once, in pieces: its */     \
			/* envelope, size and first bytes (body of RTS3) */    \
	X(MORE)         /* the next bytes of that message (header only) */   \
	X(WITHDRAW)     /* the sender cancels an RNDV whose data we may */    \
			/* read: drop it if no receive took it (body of ACK) */ \
	X(PUSH)         /* a receiver that reads the data asks its sender */  \
			/* to write the rest into its memory meanwhile */      \
	X(PUSHED)       /* the answer: written, or FAILED (body of ACK) */

enum MPIDI_BIP_ctl_type {
	MPIDI_BIP_CTL_NONE = 0,
#define MPIDI_BIP_CTL_ENUM(name) MPIDI_BIP_CTL_##name,
	MPIDI_BIP_CTL_TYPES(MPIDI_BIP_CTL_ENUM)
#undef MPIDI_BIP_CTL_ENUM
	MPIDI_BIP_CTL_NTYPES
};

/* 16 bytes: a SHORT message with 8 bytes of data fits BIP's inline header. */
typedef struct {
	uint8_t type;    /*  0: enum MPIDI_BIP_ctl_type */
	uint8_t credits; /*  1: credits given back to the receiver */
	uint16_t ctx;    /*  2: MPI context id */
	int32_t rank;    /*  4: sender's rank in the communicator */
	int32_t tag;     /*  8: MPI tag */
	uint32_t len;    /* 12: SHORT: bytes of data following the header */
} MPIDI_BIP_ctl_t;

/* RTS3, RNDV and EAGER (whose h.len bytes of data follow). */
typedef struct {
	MPIDI_BIP_ctl_t h;
	uint64_t data_sz; /* 16 */
	uint64_t sreq;    /* 24: the sender's request, named in the ACKs */
	uint64_t addr;    /* 32: RTS3, RNDV: where the data lies in the
			   * sender's memory, for the receiver to read
			   * itself (bip_read) when it would ask for the
			   * data; 0 (always for EAGER): it asks instead */
} MPIDI_BIP_ctl_rts_t;

/* ACK and AM_CTS. */
typedef struct {
	MPIDI_BIP_ctl_t h;
	uint64_t sreq;    /* 16 */
	uint64_t offset;  /* 24: first byte to send */
	uint64_t len;     /* 32: bytes to send as one BIP long message */
	uint32_t bip_tag; /* 40 */
	uint32_t flags;   /* 44: ACK: MPIDI_BIP_ACK_*; AM_CTS: FAILED or 0 */
} MPIDI_BIP_ctl_ack_t;

/* The receive is smaller than the message: after these bytes the sender is
 * done, and the rest is not sent at all (the receiver reports the
 * truncation). */
#define MPIDI_BIP_ACK_LAST 0x1
/* The receiver read [offset, +len) from the sender's memory itself (the
 * announcement's addr): those bytes are not to be sent, they are taken. */
#define MPIDI_BIP_ACK_READ 0x2
/* With READ: that read failed; alone (in an AM_CTS too, its only flag):
 * the receive of the bytes asked for could not be posted (BIP refused it,
 * no memory, the receive FIFO at its limit). The receive failed; so does
 * the send. */
#define MPIDI_BIP_ACK_FAILED 0x4
/* Alone: the answer to a WITHDRAW that found the announcement still
 * waiting for a receive: it is dropped, the send is cancelled. */
#define MPIDI_BIP_ACK_WITHDRAWN 0x8
/* The receiver could read these bytes but asks for them (measured cheaper,
 * bip_path.h, or MPIR_CVAR_CH4_BIP_FETCH=ask, or the kernel's copy is
 * slow there): they go in BIP's packets, never for it to read after all
 * (bip_irsend_packets). */
#define MPIDI_BIP_ACK_CHOSEN 0x10

/* PUSH: the receiver reads [0, offset) of the data itself while the
 * sender writes [offset, +len) at addr in the receiver's memory (two
 * processes copy at once, MPIDI_BIP_split_min); PUSHED, an ACK whose sreq
 * is the receiver's split, says it is done (flags: FAILED if not). */
typedef struct {
	MPIDI_BIP_ctl_t h;
	uint64_t sreq;    /* 16: the sender's request, as in ACK */
	uint64_t offset;  /* 24 */
	uint64_t len;     /* 32 */
	uint64_t addr;    /* 40: where [offset, +len) goes */
	uint64_t split;   /* 48: the receiver's handle, named in PUSHED */
} MPIDI_BIP_ctl_push_t;

/* AM and AM_RTS: the MPIDIG header (and AM's data) follow. */
typedef struct {
	MPIDI_BIP_ctl_t h;
	uint8_t handler_id;       /* 16 */
	uint8_t src_vci, dst_vci; /* 17, 18 */
	uint8_t pad;              /* 19 */
	uint32_t am_hdr_sz;       /* 20 */
	uint64_t data_sz;         /* 24 */
	uint64_t sreq;            /* 32: AM_RTS */
} MPIDI_BIP_ctl_am_t;

_Static_assert(sizeof(MPIDI_BIP_ctl_t) == 16 &&
		       sizeof(MPIDI_BIP_ctl_rts_t) == 40 &&
		       sizeof(MPIDI_BIP_ctl_ack_t) == 48 &&
		       sizeof(MPIDI_BIP_ctl_am_t) == 40 &&
		       sizeof(MPIDI_BIP_ctl_push_t) == 56,
	       "control message sizes are the wire format");

/* Message sizes fit an MPI_Aint. */
#define MPIDI_BIP_DATA_MAX ((uint64_t)INT64_MAX)

/* Why a control message is dropped: one list makes the enum and the names.
 * The first six are found by MPIDI_BIP_ctl_decode (SHORT's three by
 * MPIDI_BIP_ctl_short_check, which it shares with the progress engine's
 * shorter way for SHORT), the last three by the handler that looks the
 * named request, or the eager message, up. */
#define MPIDI_BIP_CTL_DROPS(X)                                                 \
	X(TOO_SHORT) /* shorter than its type's header */                      \
	X(TYPE)      /* an unknown type */                                     \
	X(LENGTH)    /* its length disagrees with its type or its fields */    \
	X(CREDITS)   /* it gives back credits that were never given */         \
	X(SIZE)      /* a size, offset or rank out of range */                 \
	X(HANDLER)   /* an active-message handler that does not exist */       \
	X(HANDLE)    /* a request handle that names no request of ours */      \
	X(RANGE)     /* bytes outside the request it names */                  \
	X(PIECE)     /* an EAGER while one is in flight, a MORE without one */ \
		     /* or beyond its end */

enum MPIDI_BIP_ctl_drop {
	MPIDI_BIP_CTL_OK = 0,
#define MPIDI_BIP_CTL_DROP_ENUM(name) MPIDI_BIP_CTL_DROP_##name,
	MPIDI_BIP_CTL_DROPS(MPIDI_BIP_CTL_DROP_ENUM)
#undef MPIDI_BIP_CTL_DROP_ENUM
	MPIDI_BIP_CTL_NDROPS
};

/* A control message's fixed part, copied out of the bytes it came in. */
typedef union {
	MPIDI_BIP_ctl_t h;
	MPIDI_BIP_ctl_rts_t rts;
	MPIDI_BIP_ctl_ack_t ack;
	MPIDI_BIP_ctl_am_t am;
	MPIDI_BIP_ctl_push_t push;
} MPIDI_BIP_ctl_msg_t;

/* What the receiver knows of the peer a message came from. */
typedef struct {
	int credits;       /* C(i->j): credits we hold for it now */
	int ncredits;      /* N of the pair: never more than that */
	uint64_t rts3_max; /* the largest three-way message it sends */
	/* Does an active-message handler of this id exist here? */
	int (*handler_ok)(unsigned id);
} MPIDI_BIP_ctl_peer_t;

/*
 * Copy the fixed part of the len-byte message at bytes into *m and check
 * it against its type and what we know of its sender. Returns 0, with
 * *fixed_p the bytes of the fixed part (SHORT's data, an AM's header and
 * data follow it in bytes), or the MPIDI_BIP_CTL_DROP_* reason to drop it.
 * A pure function: it reads bytes and peer only.
 */
int MPIDI_BIP_ctl_decode(const void *bytes, size_t len,
			 const MPIDI_BIP_ctl_peer_t *peer,
			 MPIDI_BIP_ctl_msg_t *m, size_t *fixed_p);

/*
 * A SHORT message's header takes a whole cache line instead of its 16
 * bytes where that costs no line more (data of a multiple of 64 bytes, or
 * 49-63 past one): the data then starts on a line of BIP's record, so
 * the sender's stores and the receiver's loads of it each touch one line,
 * not two (raw BIP, windows of 1 KiB behind a 16-byte header: 4.2 GB/s,
 * behind a 64-byte one 5.0, on an AMD Zen 4). The data is always the
 * message's last h.len bytes: either header does.
 */
#define MPIDI_BIP_SHORT_LINE 64

static inline size_t MPIDI_BIP_short_hdr_len(size_t data_sz)
{
	/* What a 16-byte header leaves of its line. */
	const size_t room = MPIDI_BIP_SHORT_LINE - sizeof(MPIDI_BIP_ctl_t);
	size_t tail = data_sz % MPIDI_BIP_SHORT_LINE;

	if (data_sz <= room || (tail && tail <= room) ||
	    data_sz > BIP_SMALL_MAX - MPIDI_BIP_SHORT_LINE)
		return sizeof(MPIDI_BIP_ctl_t);
	return MPIDI_BIP_SHORT_LINE;
}

/*
 * What MPIDI_BIP_ctl_decode checks of a SHORT message (len bytes, its
 * header copied out to *h), so that the receiver takes the commonest
 * message without the copy into the union and the switches on its type:
 * its data, the last h->len bytes, follows a header of either length.
 * credit_room: N of the pair minus the credits we hold for its sender.
 */
static inline int MPIDI_BIP_ctl_short_check(const MPIDI_BIP_ctl_t *h,
					    size_t len, int credit_room)
{
	/* Credits: C + returned never exceeds N (each was given once). */
	if (h->credits > credit_room)
		return MPIDI_BIP_CTL_DROP_CREDITS;
	if (len - sizeof(*h) != h->len &&
	    (len < MPIDI_BIP_SHORT_LINE || len - MPIDI_BIP_SHORT_LINE != h->len))
		return MPIDI_BIP_CTL_DROP_LENGTH;
	return h->rank < 0 ? MPIDI_BIP_CTL_DROP_SIZE : 0;
}

/*
 * The netmod's business card: what a peer must know of us before the first
 * message, then BIP's own card. "bipnm7;A;R;B;P;H;" + BIP's card, where A
 * is the number of control messages we can hold from each peer (our
 * credits CVAR, bounded by BIP's queue shared among the peers), R the
 * largest message we send by the three-way protocol (the receiver sizes a
 * temporary buffer for it), B 1 if our MPI_Init ends with the world's
 * barrier, else 0 (all ranks must agree, or some would wait in it for
 * ever), P our pid and H our host's name (for the error that names a peer
 * gone). A pair uses the smaller of the two A.
 */
#define MPIDI_BIP_HOST_MAX 64
#define MPIDI_BIP_CARD_EXTRA (64 + MPIDI_BIP_HOST_MAX) /* before BIP's */
#define MPIDI_BIP_HOST_CHARS                                                   \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-_"

typedef struct {
	uint32_t credits;  /* A */
	uint64_t rts3_max; /* R */
	uint32_t barrier;  /* B: 0 or 1 */
	uint32_t pid;      /* P */
	char host[MPIDI_BIP_HOST_MAX]; /* H: of MPIDI_BIP_HOST_CHARS */
} MPIDI_BIP_card_t;

/* A host name as a card carries it: at most MPIDI_BIP_HOST_MAX - 1
 * characters, any outside MPIDI_BIP_HOST_CHARS written as '_'. */
void MPIDI_BIP_card_host(char *host, const char *name);

/* Write the card into buf (len bytes): 0, or -1 if it does not fit. */
int MPIDI_BIP_card_format(char *buf, size_t len, const MPIDI_BIP_card_t *c,
			  const char *bip_card);
/* Read a card strictly: 0 and BIP's card in *bip_card_p, or -1. */
int MPIDI_BIP_card_parse(const char *card, MPIDI_BIP_card_t *c,
			 const char **bip_card_p);

/* Names of the drop reasons and of the types, for logs and counters. */
const char *MPIDI_BIP_ctl_drop_name(int reason);
const char *MPIDI_BIP_ctl_type_name(int type);

#endif
