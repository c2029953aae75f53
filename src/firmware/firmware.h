/*
 * firmware.h - the NIC control program's host interface and hardware
 * abstraction: the one header libbip includes from this layer.
 *
 * The program is written as it would run on a programmable card: the host
 * posts descriptors (sends, long receives), reads completions and the small
 * message queue, and calls bipfw_step() to run one turn of the event loop.
 * The hardware below is a "wire": link transmit/receive of packets plus an
 * optional DMA engine that writes into another process's memory.
 */
#ifndef BIP_FIRMWARE_H
#define BIP_FIRMWARE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "bip_wire.h"
#include "knob.h"

struct bipfw;

/* What a peer has become, as seen by the NIC program and the wire. */
enum bipfw_peer_state {
	BIPFW_PEER_LIVE,
	BIPFW_PEER_CLOSED, /* closed its endpoint */
	BIPFW_PEER_GONE,   /* its process died */
};

/* Wire capabilities. */
#define BIPFW_WIRE_LOSSY 0x1 /* may lose, corrupt, duplicate or reorder */

/*
 * A wire: the link and DMA engine under the NIC program. All functions
 * return 0 or a negative BIP_E* code; -BIP_EAGAIN means "link full, retry".
 */
struct bipfw_wire {
	const char *name;
	unsigned flags;
	/* Link transmit: copy the header and payload onto the link. */
	int (*tx)(void *ctx, int peer, const struct bip_pkt_hdr *hdr,
		  const void *payload, size_t len);
	/* Link receive: the next packet, in place, until rx_done(). */
	int (*rx)(void *ctx, const struct bip_pkt_hdr **hdr,
		  const void **payload);
	void (*rx_done)(void *ctx);
	/* DMA: write len bytes at addr in the peer's memory; NULL if absent.
	 * Returns -BIP_EAGAIN when denied (the caller falls back to packets). */
	int (*dma_write)(void *ctx, int peer, uint64_t addr, const void *src,
			 size_t len);
	/* The peer as the wire sees it: enum bipfw_peer_state. */
	int (*peer_state)(void *ctx, int peer);
	/* The NIC's interrupt: sleep until a packet may have arrived, at most
	 * timeout_us. */
	void (*wait)(void *ctx, unsigned timeout_us);
};

/* The NIC program's settings. Those marked "knob" are read from the
 * environment by bipfw_knobs (declared beside the code that uses them);
 * the caller sets the others. */
struct bipfw_config {
	int node, nnodes;
	uint32_t job_key;
	size_t packet_size;    /* knob: payload bytes per packet */
	unsigned small_queue;  /* knob: small receive queue capacity */
	unsigned send_slots;   /* knob: outstanding sends */
	unsigned long_tags;    /* knob: long receive tags */
	unsigned window;       /* knob: packets in flight per peer */
	unsigned ack_every;    /* knob: ack at once after this many packets */
	unsigned ack_delay_us; /* knob: else ack after this delay */
	unsigned retrans_us;   /* knob: retransmission timeout (lossy wires) */
	unsigned nack_backoff_us; /* knob: first wait after a "busy" NACK */
	unsigned liveness_ms;  /* knob: how often idle peers are checked */
	size_t dma_min;        /* long messages >= this use DMA (SIZE_MAX:
				* never); the wire's setting */
};

extern const struct bip_knob_table bipfw_knobs;

int bipfw_create(const struct bipfw_config *cfg, const struct bipfw_wire *wire,
		 void *wire_ctx, struct bipfw **fw_p);
void bipfw_destroy(struct bipfw *fw);

/* One turn of the event loop: receive, then transmit, then timers.
 * Returns the number of events handled. */
int bipfw_step(struct bipfw *fw);

/* Sleep through the wire until traffic arrives, at most max_us (shorter
 * when timers are pending). Pending acks are sent first. */
void bipfw_block(struct bipfw *fw, unsigned max_us);

/* Send a CLOSE to every live peer (best effort, before destroy). */
void bipfw_announce_close(struct bipfw *fw);

/* True when every send has been acknowledged (or its peer is gone). */
bool bipfw_sends_drained(const struct bipfw *fw);

/* --- host interface: sends --------------------------------------------- */

/* Small send, gathered from iov: copied at once; -BIP_EAGAIN when no send
 * slot is free. */
int bipfw_post_small(struct bipfw *fw, int peer, const struct iovec *iov,
		     int iovcnt);

/* Immediate sending: put on the link what waits for one peer, now. */
void bipfw_tx_kick(struct bipfw *fw, int peer);

/* Long send: returns the slot (>= 0) used as a request id. With
 * BIPFW_LONG_READY the data goes at once, without RTS/CTS, because the
 * caller knows the receive on tag is posted; the receiver's verdict (done,
 * truncated, or refused for want of a receive) completes it. */
#define BIPFW_LONG_READY 0x1
int bipfw_post_long(struct bipfw *fw, int peer, uint32_t tag, const void *buf,
		    size_t len, unsigned flags, uint32_t *gen_p);

/* A long send reads the rest of its data from copy (same bytes). */
int bipfw_rebase_send(struct bipfw *fw, unsigned slot, uint32_t gen,
		      const void *copy);

/* Long receive on tag, from any node. */
int bipfw_post_lrecv(struct bipfw *fw, uint32_t tag, void *buf, size_t cap,
		     uint32_t *gen_p);

/* Withdraw a posted long receive that nothing matched yet: 0, or
 * -BIP_EBUSY if a message is already arriving into it. */
int bipfw_cancel_lrecv(struct bipfw *fw, uint32_t tag, uint32_t gen);

/* Completion of a posted send or receive: 0 not done, 1 done (released,
 * the source node and length set), or a negative code (done with that error, released). */
int bipfw_reap_send(struct bipfw *fw, unsigned slot, uint32_t gen);
int bipfw_reap_lrecv(struct bipfw *fw, uint32_t tag, uint32_t gen, int *node_p,
		     size_t *len_p);

/* --- host interface: the small-message queue -------------------------- */

/* Oldest small message, or -BIP_EAGAIN. */
int bipfw_small_peek(struct bipfw *fw, const void **data, size_t *len_p,
		     int *node_p);
void bipfw_small_pop(struct bipfw *fw);

/* Asynchronous errors (overflow): returns and clears the pending one. */
int bipfw_take_error(struct bipfw *fw);

/* Number of peers that are neither gone nor closed. */
int bipfw_live_peers(const struct bipfw *fw);
bool bipfw_peer_gone(const struct bipfw *fw, int peer);

/* --- counters ----------------------------------------------------------- */

#define BIPFW_COUNTERS(X)                                                      \
	X(small_sent) X(small_received) X(long_sent) X(long_received)         \
	X(packets_sent) X(packets_received) X(acks_sent) X(nacks_sent)        \
	X(nacks_received) X(retransmits) X(small_overflows)                   \
	X(dropped_foreign) X(dropped_bad) X(dropped_dup) X(cma_transfers)     \
	X(peers_lost)

struct bipfw_counters {
#define BIPFW_COUNTER_FIELD(name) uint64_t name;
	BIPFW_COUNTERS(BIPFW_COUNTER_FIELD)
#undef BIPFW_COUNTER_FIELD
};

const struct bipfw_counters *bipfw_counters(const struct bipfw *fw);

/* --- the shm wire: processes of one host ------------------------------ */

/*
 * Each process owns one shared-memory segment holding an inbound packet ring
 * per peer (single producer, single consumer). Sending is writing into the
 * peer's ring; long data may instead be written straight into the receive
 * buffer by cross-memory attach (the DMA engine). Segments are mode 0600,
 * named from the job's secret so that no other user can predict (and take)
 * a name, and unlinked once every peer has attached.
 */
struct bipfw_shm;

struct bipfw_shm_params {
	int node, nnodes;
	uint64_t job_key;
	uint64_t secret;     /* the job's secret: names the segments */
	size_t packet_size;  /* payload bytes per ring slot */
	unsigned ring_slots; /* knob: slots per inbound ring */
	size_t cma_min;      /* knob: long messages of at least this size go
			      * by cross-memory attach (SIZE_MAX: never) */
};

extern const struct bipfw_wire bipfw_shm_wire;
extern const struct bip_knob_table bipfw_shm_knobs;

int bipfw_shm_open(const struct bipfw_shm_params *params,
		   struct bipfw_shm **shm_p);
/* This process's address on the wire: "shm,HOST,PID,NODE,KEY". */
int bipfw_shm_card(const struct bipfw_shm *shm, char *buf, size_t len);
/* A card's fields, read strictly: 0 or -BIP_ECARD. */
struct bipfw_shm_card {
	char host[HOST_NAME_MAX + 1];
	int pid, node;
	uint64_t job_key;
};
int bipfw_shm_card_parse(const char *card, struct bipfw_shm_card *c);
/* Attach a peer's segment. -BIP_EWIRE if the card is of another host. */
int bipfw_shm_connect(struct bipfw_shm *shm, int peer, const char *card);
/* What connect does once the peer's segment is mapped: copy its header,
 * check the copy against the card's pid and this job, and take the ring
 * geometry from the copy. Tests and fuzzers hand it memory of their own. */
int bipfw_shm_attach(struct bipfw_shm *shm, int peer, int pid, void *seg,
		     size_t size);
/* Where packets from src arrive in our own segment, their ring rewound to
 * position 0 (tests and fuzzers write a ring image there). */
void *bipfw_shm_inbound(struct bipfw_shm *shm, int src, size_t *len_p);
/* Tell peers we are gone, unmap, and unlink what is still linked. */
void bipfw_shm_close(struct bipfw_shm *shm);
/* Name of a node's segment in /dev/shm, without the leading '/':
 * "bip-UID-" and a keyed hash of the node under the job's secret, which the
 * name does not reveal. */
#define BIPFW_SHM_NAME_MAX 48
void bipfw_shm_name(char *buf, size_t len, uint64_t secret, uint64_t job_key,
		    int node);
/* Remove a node's segment that a crashed process left, if it is ours:
 * 1 removed, 0 nothing to remove, or -BIP_ESYS (logged). */
int bipfw_shm_remove(uint64_t secret, uint64_t job_key, int node);

/* Can this process use cross-memory attach on a sibling process?
 * 0 if yes, else the negated errno of the refusal. */
int bipfw_cma_probe(void);

/* Monotonic microseconds, the firmware's clock. */
uint64_t bipfw_now_us(void);

/* SipHash-2-4 of len bytes under a 128-bit key. */
uint64_t bipfw_siphash(const uint64_t key[2], const void *data, size_t len);

/* Checksums used on lossy wires. */
uint32_t bipfw_csum(const void *buf, size_t len);
void bipfw_hdr_seal(struct bip_pkt_hdr *hdr);
bool bipfw_hdr_intact(const struct bip_pkt_hdr *hdr);

#endif
