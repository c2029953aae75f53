/*
 * bip.h - the BIP raw message layer: the one public header of libbip.
 *
 * BIP moves two kinds of messages between the nodes 0..N-1 of a job:
 *  - small messages (at most BIP_SMALL_MAX bytes): a send completes locally at
 *    once; the receiver takes them from a static queue, in arrival order;
 *  - long messages, on tags: a send completes only once the receiver has
 *    posted a long receive on that tag; the data lands in the posted buffer.
 * Delivery is reliable and in order per pair of nodes. Every call returns 0
 * (or a count) on success and a negative BIP_E* code on failure; bip_strerror()
 * names it. Nothing aborts the process behind the caller's back.
 *
 * An endpoint is not thread-safe: callers serialise calls on one endpoint.
 */
#ifndef BIP_H
#define BIP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "bip_copy.h"  /* bip_copy() */
#include "bip_errno.h" /* BIP_E* codes, bip_strerror() */
#include "bip_knob.h"  /* struct bip_knob_desc */
#include "bip_wire.h"  /* BIP_SMALL_MAX */

#ifdef __cplusplus
extern "C" {
#endif

#define BIP_VERSION_MAJOR 0
#define BIP_VERSION_MINOR 1
#define BIP_VERSION_STRING "0.1.0"

/* Largest business card bip_card() produces, terminating NUL included. */
#define BIP_CARD_MAX 256

typedef struct bip_ep bip_ep_t;

/* Handle of a non-blocking long send or receive; filled in by the call. */
typedef struct bip_req {
	uint32_t id;  /* opaque */
	uint32_t gen; /* opaque */
} bip_req_t;

/* What a completed receive brought. */
struct bip_status {
	int node;   /* source node */
	int tag;    /* long messages: tag; small messages: -1 */
	size_t len; /* bytes received */
};

struct bip_open_params {
	int node;         /* this process's node number */
	int nnodes;       /* number of nodes in the job */
	uint64_t job_key; /* carried by every packet; other jobs' traffic is dropped */
	uint64_t secret;  /* the job's secret, the same non-zero value on every
			   * node (bip_secret_new): it names the job's
			   * resources, which no other user can then predict */
	int host;         /* the host this node runs on, 0..nhosts-1, as the
			   * launcher placed it (PMI's process mapping) */
	int nhosts;       /* hosts in the job; 0 or 1: all on this host */
	int local_nodes;  /* nodes on this host, this one included; 0: all
			   * nnodes if nhosts <= 1, else unknown */
};

/* --- set-up ------------------------------------------------------------ */

/* The job key BIP derives from a launcher's job name (the PMI kvsname):
 * every process of a job computes the same key from the same name. */
uint64_t bip_job_key(const char *job_name);

/* A new random job secret (never 0), for one process to draw and hand to
 * the others privately: bip_init does this through PMI. */
int bip_secret_new(uint64_t *secret_p);

/* Remove what the job's processes left behind when they crashed before
 * bip_close (their shared-memory segments), for a launcher that knows the
 * job's secret. Only this user's resources are touched. Returns how many
 * were removed, or a negative code if one could not be. */
int bip_job_cleanup(uint64_t secret, uint64_t job_key, int nnodes);

/* Bootstrap through the PMI-1 environment (Hydra's mpiexec or bip_run):
 * open, exchange cards through PMI, connect every node, synchronise. */
int bip_init(bip_ep_t **ep_p);

/* Open an endpoint; the caller exchanges cards and connects the nodes. */
int bip_open(const struct bip_open_params *params, bip_ep_t **ep_p);

/* This endpoint's address, a NUL-terminated string of < BIP_CARD_MAX bytes. */
int bip_card(bip_ep_t *ep, char *buf, size_t len);

/* Accept a node's card. Every node, this one too (its own card reaches it
 * by the self wire), must be connected before messages flow to or from it. */
int bip_connect(bip_ep_t *ep, int node, const char *card);

/* Flush what was sent, release everything. Safe on a partly set-up ep. */
int bip_close(bip_ep_t *ep);

int bip_node(const bip_ep_t *ep);
int bip_nnodes(const bip_ep_t *ep);

/* Limits fixed at open time (from the knobs). */
struct bip_limits {
	size_t small_max;     /* BIP_SMALL_MAX */
	unsigned small_queue; /* small-message queue capacity */
	unsigned send_slots;  /* outstanding sends */
	unsigned long_tags;   /* tags 0..long_tags-1 */
	size_t packet_size;   /* payload bytes per packet */
};
int bip_limits(const bip_ep_t *ep, struct bip_limits *limits);
/* The limits an endpoint of a job of nnodes opened now would have, from
 * the environment, without opening one: a caller can refuse settings it
 * cannot work with before anything is created. -BIP_EINVAL (logged) for a
 * bad knob, -BIP_ENODE for a bad node count. */
int bip_env_limits(int nnodes, struct bip_limits *limits);

/* --- small messages ---------------------------------------------------- */

/* Send len <= BIP_SMALL_MAX bytes to node. The buffer is reusable at return.
 * bip_send waits for a free send slot; bip_send_try returns -BIP_EAGAIN. */
int bip_send(bip_ep_t *ep, int node, const void *buf, size_t len);
int bip_send_try(bip_ep_t *ep, int node, const void *buf, size_t len);

/* The same, the message gathered from iovcnt pieces (a header and a
 * payload, say) without assembling it first; at most BIP_SMALL_MAX bytes
 * in all. */
int bip_sendv(bip_ep_t *ep, int node, const struct iovec *iov, int iovcnt);
int bip_sendv_try(bip_ep_t *ep, int node, const struct iovec *iov,
		  int iovcnt);
/* As bip_sendv_try, but more messages to node follow at once: this one
 * may wait in BIP until the next bip_sendv_try or bip_poll, so that the
 * stream leaves in one batch (a network wire sends runs of full packets
 * as one segmented datagram). */
int bip_sendv_more(bip_ep_t *ep, int node, const struct iovec *iov,
		   int iovcnt);

/* Take the oldest small message into buf (cap bytes; -BIP_ETOOLONG and the
 * message stays queued if it does not fit). bip_recv waits; bip_recv_try
 * returns -BIP_EAGAIN when the queue is empty. Returns the length. */
int bip_recv(bip_ep_t *ep, void *buf, size_t cap, struct bip_status *st);
int bip_recv_try(bip_ep_t *ep, void *buf, size_t cap, struct bip_status *st);

/* Zero-copy access to the oldest small message: *data stays valid until
 * bip_consume(). -BIP_EAGAIN when empty. From a peer on this host it may
 * point into the ring that peer writes (no copy on the way): a malicious
 * peer could change it while it is read, so copy what is checked before
 * checking it. */
int bip_peek(bip_ep_t *ep, const void **data, struct bip_status *st);
int bip_consume(bip_ep_t *ep);

/* bip_peek without driving progress: for a caller that drains the queue
 * after one bip_poll(). It still takes a small message from a peer of
 * this host straight from that peer's ring when the queue is empty, and
 * runs the turn that any other packet found there needs (see bip_poll). */
int bip_peek_nopoll(bip_ep_t *ep, const void **data, struct bip_status *st);

/* What bip_drain hands each small message to: its len bytes at data, from
 * node, may be read until fn returns (copy what is checked before checking
 * it, as with bip_peek). A non-zero return ends the drain after this
 * message, which is consumed all the same. */
typedef int (*bip_small_fn)(void *arg, const void *data, size_t len,
			    int node);

/* An event loop's turn in one call: bip_poll() (whose periodic turn leaves
 * the rings of this host's nodes to the drain), then bip_peek_nopoll(), fn
 * and bip_consume() for each of up to max small messages, oldest first.
 * Returns how many fn was given; when none, a pending error if there is
 * one, else 0. From within fn, bip_drain, bip_peek, bip_peek_nopoll,
 * bip_consume and the receives of small messages return -BIP_EBUSY (the
 * message fn holds is not theirs to take); everything else may be called
 * but bip_close. */
int bip_drain(bip_ep_t *ep, int max, bip_small_fn fn, void *arg);

/* --- long messages ----------------------------------------------------- */

/* Send len bytes on tag to node; completes once node posted a receive on tag
 * and the data arrived. -BIP_EAGAIN from bip_ilsend when all send slots are
 * in use. */
int bip_lsend(bip_ep_t *ep, int node, int tag, const void *buf, size_t len);
int bip_ilsend(bip_ep_t *ep, int node, int tag, const void *buf, size_t len,
	       bip_req_t *req);

/* Ready mode: the same, for a sender that knows the receive on tag is
 * posted already (the receiver said so): the data leaves at once, without
 * the announcement and its answer. If no receive is posted when it arrives,
 * the receiver drops it and the send fails with -BIP_ENOTREADY; too long for
 * the receive, both sides fail with -BIP_ETRUNC. */
int bip_rsend(bip_ep_t *ep, int node, int tag, const void *buf, size_t len);
int bip_irsend(bip_ep_t *ep, int node, int tag, const void *buf, size_t len,
	       bip_req_t *req);
/* bip_irsend whose data always travels in BIP's own packets (on one host
 * the rings), never read by the receiver from our memory as
 * BIP_SHM_PULL_MIN lets a ready-mode message be when others are in
 * flight: for a receiver that measured both ways and chose this one. */
int bip_irsend_packets(bip_ep_t *ep, int node, int tag, const void *buf,
		       size_t len, bip_req_t *req);

/* A long send not complete yet reads the rest of its data from copy, a
 * copy of its buffer (same bytes, same length): its caller may then reuse
 * the original at return. A message the receiver reads from the original
 * by single copy (ready mode, BIP_SHM_CMA_MIN) is waited for until that
 * read is over. -BIP_ENOREQ if req is not a long send in flight. */
int bip_rebase(bip_ep_t *ep, bip_req_t *req, const void *copy);

/* Post a receive of up to cap bytes on tag, from any node. */
int bip_lrecv(bip_ep_t *ep, int tag, void *buf, size_t cap,
	      struct bip_status *st);
int bip_ilrecv(bip_ep_t *ep, int tag, void *buf, size_t cap, bip_req_t *req);

/* Completion: bip_test sets *done (1 when complete, the request then being
 * released and st filled); bip_wait blocks. A failed request returns its
 * error code (and is released). */
int bip_test(bip_ep_t *ep, bip_req_t *req, int *done, struct bip_status *st);
int bip_wait(bip_ep_t *ep, bip_req_t *req, struct bip_status *st);

/* Withdraw a posted long receive: 0, or -BIP_EBUSY when a message is
 * already arriving into it (wait for it instead), -BIP_ENOREQ. */
int bip_cancel(bip_ep_t *ep, bip_req_t *req);

/* bip_test without driving progress: for a caller that checks many
 * requests after one bip_poll(). */
int bip_test_nopoll(bip_ep_t *ep, bip_req_t *req, int *done,
		    struct bip_status *st);

/* --- single copy ------------------------------------------------------- */

/* Data for node of at least this many bytes may be read by node itself
 * from our memory with bip_read (BIP_SHM_PULL_MIN on the shm wire, 1 on
 * the self wire); SIZE_MAX: node cannot read ours. */
size_t bip_read_min(bip_ep_t *ep, int node);

/* The smallest message of a stream (messages sent back to back) to node
 * that node had better read in one copy than take through the rings: at
 * least bip_read_min, and above BIP_STREAM_RING_MAX (measured per machine
 * by bipmpi-tune); SIZE_MAX: node cannot read ours. */
size_t bip_stream_read_min(bip_ep_t *ep, int node);

/* One-sided: 1 when node's memory can be read and written by bip_read and
 * bip_write with no action by node (on this host, cross-memory attach
 * allowed), else 0 (send messages instead). */
int bip_rma_reach(bip_ep_t *ep, int node);

/* Read len bytes at addr in node's memory into dst (bip_write: write src
 * there), in one copy by this process (cross-memory attach; the kernel
 * module's copy later). addr is what node told us (a receive buffer, an
 * MPI window): the kernel checks it against node's own memory, BIP never
 * dereferences it. Done at return. -BIP_EAGAIN when node's memory cannot
 * be reached so (send messages instead), -BIP_ESYS when the copy failed
 * (addr is not node's memory), -BIP_EPEERGONE. */
int bip_read(bip_ep_t *ep, int node, void *dst, uint64_t addr, size_t len);
int bip_write(bip_ep_t *ep, int node, uint64_t addr, const void *src,
	      size_t len);

/* Several reads from node's memory at once (struct bip_rvec, bip_copy.h):
 * piece i, len bytes at addr into dst, gets in rc what bip_read would
 * return for it alone. One system call for all of them where the wire can
 * (the kernel's per-call cost is paid once: a window of messages read
 * together). At most BIP_READV_MAX pieces. Returns the first piece's rc
 * that is not 0, else 0; for a bad argument -BIP_EINVAL (-BIP_ENODE: a bad
 * node), in every rc too (none with v NULL). */
int bip_readv(bip_ep_t *ep, int node, struct bip_rvec *v, unsigned n);

/* --- memory shared within a host ----------------------------------------- */

/* Memory the other nodes of this host can map, for one-sided access by
 * load and store (MPI windows), as hosts map a card's memory. bip_mem_alloc
 * gives len bytes, zeroed and page-aligned, at *addr_p: -BIP_EAGAIN when
 * BIP cannot share memory here (no shm wire, or BIP_SHM_MEM_MAX regions
 * held already; use malloc), -BIP_ENOMEM.
 * bip_mem_key names a range inside such memory to the other nodes: the
 * key and offset bip_mem_map takes (-BIP_EINVAL: not inside memory from
 * bip_mem_alloc). bip_mem_free ends it (-BIP_EINVAL: addr is not what
 * bip_mem_alloc gave); a node that mapped it keeps its mapping until it
 * unmaps. bip_close ends the keys, and the memory stays the caller's.
 *
 * bip_mem_map maps len bytes at off of the memory node named by key, at
 * *addr_p in this process, until bip_mem_unmap or bip_close. The key is
 * checked against what node really has: -BIP_EINVAL when it names nothing
 * of node's that long (stale or forged), -BIP_EAGAIN when node's memory
 * cannot be mapped (another host, this node itself, the kernel's
 * permission denied: use bip_read/bip_write or messages), -BIP_ENODE,
 * -BIP_ESTATE (node not connected), -BIP_EPEERGONE. No access through a mapping can fault: memory's size is
 * sealed when it is allocated. */
int bip_mem_alloc(bip_ep_t *ep, size_t len, void **addr_p);
int bip_mem_free(bip_ep_t *ep, void *addr);
int bip_mem_key(bip_ep_t *ep, const void *addr, size_t len, uint64_t *key_p,
		uint64_t *off_p);
int bip_mem_map(bip_ep_t *ep, int node, uint64_t key, uint64_t off,
		size_t len, void **addr_p);
int bip_mem_unmap(bip_ep_t *ep, void *addr);

/* Waiting on such memory, as on the NIC: a process that waits for a word
 * there to grow names it with bip_mem_watch; while it does, the idle
 * policy (bip_idle, bip_idle_wait) sleeps only while *word < value. One
 * watch per endpoint: a call replaces the last, word NULL ends it, and so
 * does unmapping or freeing the memory it lies in (0, -BIP_EINVAL,
 * -BIP_EAGAIN: no shared memory here). One that raises such a word calls
 * bip_mem_wake_barrier once (0, -BIP_EINVAL), then bip_mem_wake for each
 * node that may wait on it: the node's doorbell rings if it sleeps (a load
 * when it does not; 0, -BIP_EINVAL, -BIP_ENODE, -BIP_ESTATE). Without the
 * barrier a wakeup may be lost. */
int bip_mem_watch(bip_ep_t *ep, const uint64_t *word, uint64_t value);
int bip_mem_wake_barrier(bip_ep_t *ep);
int bip_mem_wake(bip_ep_t *ep, int node);

/* The smallest data that nodes of this host had better read in one copy
 * where it lies (bip_read) than pass through memory from bip_mem_alloc,
 * copied in by its writer and out by its readers: BIP_MEM_READ_MIN,
 * measured per machine by bipmpi-tune. SIZE_MAX: never (and for no ep). */
size_t bip_mem_read_min(bip_ep_t *ep);

/* --- progress ---------------------------------------------------------- */

/* Drive the NIC program once: returns the number of events handled (>= 0),
 * or a pending asynchronous error (-BIP_EOVERFLOW is reported once per
 * overflow episode, then progress continues). When every other node is on
 * this host and only small messages are under way, a turn runs every 16th
 * call only: the receive calls take small messages straight from the
 * rings (and run a turn at once for any other packet there), and after
 * other packets, a send to ourselves or with work pending every call is a
 * turn. */
int bip_poll(bip_ep_t *ep);

/* Wait until something happens or timeout_us passes (-1: no limit), with the
 * idle policy of BIP_IDLE (spin, then yield, then block). */
int bip_idle_wait(bip_ep_t *ep, long timeout_us);

/* The same idle policy for a caller that polls in its own loop (MPI's
 * progress engine): after each of its polls, say how many events it found.
 * A run of empty polls that follow each other closely is a wait: BIP spins
 * through it, yields the core, then sleeps up to 1 ms at a time until a
 * packet may have arrived (as BIP_IDLE allows; never with may_block 0,
 * which yields only when the host has more nodes than cores).
 * Polls further apart (the caller works in between) are not a wait. Drives
 * no progress. 0, or -BIP_EINVAL. */
int bip_idle(bip_ep_t *ep, int events, int may_block);

/* 1 when this host has more nodes than this process may use cores (the
 * idle policy then yields at once), 0 if not, or -BIP_EINVAL. */
int bip_crowded(const bip_ep_t *ep);

struct bip_counters {
	uint64_t small_sent, small_received;
	uint64_t long_sent, long_received;
	uint64_t packets_sent, packets_received;
	uint64_t acks_sent, nacks_sent, nacks_received;
	uint64_t retransmits;
	uint64_t small_overflows; /* packets refused for a full small queue */
	uint64_t dropped_foreign; /* wrong job key */
	uint64_t dropped_bad;     /* malformed or corrupt packets */
	uint64_t dropped_dup;     /* duplicates and out-of-sequence packets */
	uint64_t cma_transfers;
	uint64_t peers_lost;      /* peers that died or closed */
	uint64_t faults_injected; /* packets dropped or doubled by BIP_FAULT_* */
	uint64_t runs_sent;       /* runs of packets sent as one segmented */
	uint64_t runs_received;   /* datagram (udp GSO), and received whole */
	uint64_t kernel_copies;   /* of cma_transfers, by bip.ko's copy */
	uint64_t idle_yields;     /* cores given away by the idle policy... */
	uint64_t idle_sleeps;     /* ...and sleeps on the doorbell */
	uint64_t small_in_place;  /* small messages read where they arrived
				   * (shm ring), not copied to the queue */
	uint64_t small_direct;    /* small messages a receive call took
				   * straight from a ring (bip_poll) */
	uint64_t idle_moves;      /* moves off a CPU another node of the
				   * host ran on (BIP_SPREAD) */
};
int bip_get_counters(const bip_ep_t *ep, struct bip_counters *c);

/* Peers lost so far (died or closed): cheap to ask at every turn, so that
 * a caller looks at each peer (bip_peer_gone) only when it changed. */
int bip_peers_lost(const bip_ep_t *ep);
/* 1 if node died or closed, 0 if it is alive, or a negative code. */
int bip_peer_gone(const bip_ep_t *ep, int node);

/* --- knobs and environment (for tools such as bip_info) ---------------- */

/* One tunable: struct bip_knob_desc (bip_knob.h). */

/* The i-th knob, or NULL past the last. */
const struct bip_knob_desc *bip_knob(unsigned i);

/* Check the knob's value (its variable's, else the machine profile's, else
 * its default):
 * 0, or -BIP_EINVAL with the reason written to why (if not NULL). */
int bip_knob_check(unsigned i, char *why, size_t len);

/* The machine profile's value of the i-th knob (used where its variable is
 * not set), or NULL. */
const char *bip_knob_profile(unsigned i);

/* The machine profile, a file of knob defaults measured on this machine
 * (BIP_PROFILE, bip(7)): 1 if one applies, 0 if none (absent, or measured
 * on another machine), -BIP_EINVAL if it is malformed or BIP_PROFILE names
 * a file that cannot be read; why says which file and why. */
int bip_profile(char *why, size_t len);

/* --- wires ---------------------------------------------------------------- */

/* A wire BIP is built with. */
struct bip_wire_desc {
	const char *name;  /* "shm", ... */
	const char *scope; /* "this host" or "any host" */
	int lossy;         /* 1 if it may lose packets (BIP then retransmits) */
	int usable;        /* 0 if it works here, else a negative code */
	char state[256];   /* what it can do here, or why it cannot */
};

/* The i-th wire, 0 (filled in) or -BIP_ENODE past the last. */
int bip_wire_info(unsigned i, struct bip_wire_desc *d);

/* The kernel module bip.ko (bip(4)). With ep: what that endpoint uses of
 * it, or why nothing; without (NULL): whether it is loaded here and speaks
 * this library's ABI. The text goes to buf (len bytes); 0 when in use (or
 * loaded), else a negative code: BIP then does all without it. */
int bip_kmod_info(const bip_ep_t *ep, char *buf, size_t len);

/* The wire that carries node's traffic and why it was chosen: 0, or
 * -BIP_ESTATE if node is not connected. */
int bip_peer_wire(const bip_ep_t *ep, int node, const char **name,
		  const char **why);

/* Message bytes one packet to node carries on its wire, in *chunk (a
 * small message wider than that goes in pieces of that size): 0, or
 * -BIP_ESTATE if node is not connected. */
int bip_peer_chunk(const bip_ep_t *ep, int node, size_t *chunk);

/* The memory the NIC program of a job of nnodes nodes needs with the
 * knobs of the environment, when it sends to every peer (wires' buffers
 * apart): 0, or -BIP_EINVAL for a bad knob or nnodes. */
int bip_memory(int nnodes, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif /* BIP_H */
