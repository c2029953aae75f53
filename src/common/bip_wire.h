/*
 * bip_wire.h - the format of a BIP packet on every wire (shm, udp, eth).
 *
 * The values below are the wire format: they must not change silently.
 * Change BIP_WIRE_VERSION whenever a field, offset or type value changes.
 * Only fixed-width integers, little-endian (every supported host is), so the
 * NIC program and the kernel module can share this header.
 */
#ifndef BIP_COMMON_WIRE_H
#define BIP_COMMON_WIRE_H

#ifdef __KERNEL__
#include <linux/stddef.h>
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

#include "bip_limits.h"

#define BIP_WIRE_VERSION 8

/* Packet types: one list generates the enum and the names used in logs. */
#define BIP_PKT_TYPES(X)                                                       \
	X(SMALL)     /* a whole small message */                               \
	X(LONG_RTS)  /* long message announced: tag, total length */           \
	X(LONG_CTS)  /* receiver posted a matching receive: go */             \
	X(LONG_DATA) /* one packet of a long message at an offset */           \
	X(ACK)       /* cumulative ack only (not sequenced) */                \
	X(NACK)      /* "resend from seq" (not sequenced) */                   \
	X(CLOSE)     /* the sender closed its endpoint (sequenced) */

enum bip_pkt_type {
	BIP_PKT_NONE = 0,
#define BIP_PKT_ENUM(name) BIP_PKT_##name,
	BIP_PKT_TYPES(BIP_PKT_ENUM)
#undef BIP_PKT_ENUM
	BIP_PKT_NTYPES
};

/* Name of a packet type, for logs. */
static inline const char *bip_pkt_name(unsigned type)
{
	static const char *const names[] = {
		[BIP_PKT_NONE] = "NONE",
#define BIP_PKT_NAME(name) [BIP_PKT_##name] = #name,
		BIP_PKT_TYPES(BIP_PKT_NAME)
#undef BIP_PKT_NAME
	};

	return type < BIP_PKT_NTYPES ? names[type] : "INVALID";
}

/* Flags. */
#define BIP_PKTF_BUSY 0x1    /* NACK: receiver had no buffer, back off */
#define BIP_PKTF_DIRECT 0x2  /* LONG_DATA: data was written by single copy */
#define BIP_PKTF_TRUNC 0x4   /* LONG_CTS: posted buffer too small, cancel */
#define BIP_PKTF_CSUM 0x8    /* payload checksum in csum is valid */
#define BIP_PKTF_INLINE 0x10 /* SMALL: payload in the header from 24 on */
#define BIP_PKTF_READY 0x20  /* LONG_DATA: ready mode, no RTS/CTS: the
			      * receiver posted already; total length at 40.
			      * LONG_CTS: the verdict on a ready message
			      * (with TRUNC: it did not fit) */
#define BIP_PKTF_REFUSED 0x40 /* LONG_CTS with READY: no receive was posted;
			       * the message was dropped */
#define BIP_PKTF_ACKREQ 0x80 /* sequenced: the sender's window is full,
			      * acknowledge at once */
#define BIP_PKTF_MORE 0x100  /* SMALL: a piece of a message wider than the
			      * wire's packet, more follows; offset says
			      * where it goes (pieces of one message are
			      * consecutive among the SMALL packets) */
#define BIP_PKTF_PULL 0x200  /* LONG_DATA with READY, the only packet of
			      * its message: the receiver reads the data
			      * from the sender's memory by single copy;
			      * the payload is the address (8 bytes).
			      * LONG_CTS with READY: that read failed */
#define BIP_PKTF_NOSEQ 0x400 /* SMALL, whole, on a lossless wire: outside
			      * the sequence (seq is 0, nothing acks it);
			      * the link's order and room are all it needs */

struct bip_pkt_hdr {
	uint32_t job_key; /*  0: low 32 bits of the job key */
	uint8_t version;  /*  4: BIP_WIRE_VERSION */
	uint8_t type;     /*  5: enum bip_pkt_type */
	uint16_t flags;   /*  6: BIP_PKTF_* */
	uint16_t src;     /*  8: source node */
	uint16_t dst;     /* 10: destination node */
	uint32_t seq;     /* 12: sequence number (sequenced types only) */
	uint32_t ack;     /* 16: cumulative ack: next seq expected from dst */
	uint32_t len;     /* 20: payload bytes following the header */
	union {
		struct {
			uint32_t tag;    /* 24: long messages: tag */
			uint32_t msg_id; /* 28: long: sender's message id */
			uint64_t offset; /* 32: LONG_DATA: offset; RTS/CTS:
					  *     total length */
			uint64_t addr;   /* 40: LONG_CTS: receive buffer
					  *     address (single copy);
					  *     LONG_DATA with READY: total
					  *     length */
			uint32_t csum;   /* 48: payload CRC32C when
					  *     BIP_PKTF_CSUM */
			uint32_t hcsum;  /* 52: header CRC32C, computed
					  *     with hcsum = 0 */
		};
		/* 24: SMALL with BIP_PKTF_INLINE: the payload itself, so a
		 * tiny message is one cache line on the wire. Lossy wires
		 * keep the checksums: 24 bytes there, 32 on lossless ones. */
		uint8_t inline_data[32];
	};
	uint64_t link;    /* 56: the wire's own (shm: record stamp); else 0 */
};                        /* 64 bytes: one cache line */

_Static_assert(sizeof(struct bip_pkt_hdr) == 64, "wire header is 64 bytes");
_Static_assert(offsetof(struct bip_pkt_hdr, inline_data) == 24 &&
		       offsetof(struct bip_pkt_hdr, csum) == 48,
	       "wire header offsets");

#define BIP_PKT_INLINE_MAX 32        /* lossless wires */
#define BIP_PKT_INLINE_MAX_SEALED 24 /* lossy ones: checksums follow */

_Static_assert(offsetof(struct bip_pkt_hdr, csum) ==
		       offsetof(struct bip_pkt_hdr, inline_data) +
			       BIP_PKT_INLINE_MAX_SEALED,
	       "inline data on a lossy wire ends where the checksums start");

/* The largest inline payload a wire carries. */
static inline size_t bip_pkt_inline_max(int lossy)
{
	return lossy ? BIP_PKT_INLINE_MAX_SEALED : BIP_PKT_INLINE_MAX;
}

/*
 * The outer header a network wire (udp, eth) puts before every packet. The
 * job key is a filter, not a guard; the tag is: a keyed hash of the job's
 * random secret, which only the job's processes know. A packet whose tag is
 * not the job's (another job, an earlier run of this one) is dropped before
 * its header is read.
 */
#define BIP_OUTER_MAGIC 0x314e5042u /* "BPN1": a BIP packet follows */
/* Liveness, outer header alone: a process that computes does not poll, so
 * a thread of its wire answers PROBE with ALIVE for it; a peer that stays
 * unanswered is dead, one that answers is only busy. */
#define BIP_OUTER_PROBE 0x504e5042u /* "BPNP" */
#define BIP_OUTER_ALIVE 0x414e5042u /* "BPNA" */

struct bip_outer_hdr {
	uint32_t magic; /* 0: BIP_OUTER_* */
	uint32_t node;  /* 4: PROBE, ALIVE: the sender's node; a packet:
			 * its destination's (hosts' processes share
			 * packet sockets' frames) */
	uint64_t tag;   /* 8: the job's network tag */
};

_Static_assert(sizeof(struct bip_outer_hdr) == 16, "outer header is 16 bytes");

/* The eth wire's EtherTypes (IEEE 802's local experimental ones): packets,
 * and liveness probes to a process's answering thread. */
#define BIP_ETHERTYPE 0x88b5
#define BIP_ETHERTYPE_LIVE 0x88b6

#endif
