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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "bip_copy.h" /* struct bip_rvec */
#include "bip_wire.h"
#include "knob.h"

struct bipfw;
struct bipfw_kdev;

/* What a peer has become, as seen by the NIC program and the wire. */
enum bipfw_peer_state {
	BIPFW_PEER_LIVE,
	BIPFW_PEER_CLOSED, /* closed its endpoint */
	BIPFW_PEER_GONE,   /* its process died */
	BIPFW_PEER_CUT,    /* the wire to it failed (said when it did) */
};

/* --- counters ----------------------------------------------------------- */

#define BIPFW_COUNTERS(X)                                                      \
	X(small_sent) X(small_received) X(long_sent) X(long_received)         \
	X(packets_sent) X(packets_received) X(acks_sent) X(nacks_sent)        \
	X(nacks_received) X(retransmits) X(small_overflows)                   \
	X(dropped_foreign) X(dropped_bad) X(dropped_dup) X(cma_transfers)     \
	X(peers_lost) X(faults_injected) X(runs_sent) X(runs_received)        \
	X(kernel_copies) X(small_in_place) X(small_direct)

struct bipfw_counters {
#define BIPFW_COUNTER_FIELD(name) uint64_t name;
	BIPFW_COUNTERS(BIPFW_COUNTER_FIELD)
#undef BIPFW_COUNTER_FIELD
};

/* --- wires: the link and DMA engine under the NIC program ------------- */

/* A set of CPUs, as many as cpu_set_t holds, without <sched.h>'s
 * _GNU_SOURCE in every file that includes this header. */
#define BIPFW_CPUS_MAX 1024
struct bipfw_cpus {
	uint64_t bits[BIPFW_CPUS_MAX / 64];
};

/* What every wire class is opened with. */
struct bipfw_wire_params {
	int node, nnodes;
	int host, nhosts;   /* this node's host among the job's nhosts */
	int local_nodes;    /* nodes on this host, this one included */
	bool shared_cores;  /* they share cores, so they often sleep */
	uint64_t job_key;
	uint64_t secret;    /* the job's secret: names and guards its traffic */
	size_t packet_size; /* payload bytes per packet (agreed by all) */
	struct bipfw_counters *cnt; /* where the wire counts what it drops */
	struct bipfw_kdev *kdev;    /* /dev/bip, joined to the job (fd -1:
				     * absent): the wire may use its copy */
};

/* Where a wire reaches. */
enum bipfw_wire_scope {
	BIPFW_SCOPE_HOST,    /* processes of this host */
	BIPFW_SCOPE_NETWORK, /* processes of any host */
	BIPFW_SCOPE_SELF,    /* this process alone: its own node, which no
			      * other scope carries */
};

/* Most nodes in a job: node numbers travel in 16 bits, and the values
 * above stay free for markers (a forged source, an unset one). */
#define BIPFW_NODES_MAX 0xfff0

#define BIPFW_WIRE_LOSSY 0x1 /* may lose, corrupt, duplicate or reorder */
/* The kernel segments and coalesces its runs of packets (UDP GSO/GRO):
 * long data is cheaper by it than by a wire that pays per packet. */
#define BIPFW_WIRE_BULK 0x2
/* peek shows a private, aligned copy of the header, which only the next
 * peek overwrites: it may be checked and used in place. */
#define BIPFW_WIRE_PEEK_COPY 0x4

/*
 * A wire class: one per kind of link (src/firmware/wire/<name>.c). The NIC
 * program keeps a (class, context) port per peer and never names a class.
 * Functions return 0 or a negative BIP_E* code.
 *
 * Sending is reserve/commit: reserve gives room for a header and len payload
 * bytes on the link toward a peer (NULL: the link is full, retry later), the
 * NIC program writes the packet there, commit puts it on the link. Receiving
 * is peek/release: peek shows the next packet in place (-BIP_EAGAIN: none)
 * and how many payload bytes follow its header, release gives its room
 * back. What peek shows may be written by another
 * process: the NIC program copies the header before it trusts it.
 *
 * A lossless wire also has hold: the receiver has no room for the packet
 * peek showed yet, so it stays where it is, unread, and holds back its
 * sender (back-pressure instead of a resend: nothing sent on a lossless
 * wire is ever sent again). The next peeks may show other sources first.
 */
struct bipfw_wire_class {
	const char *name; /* its cards read "name,..." */
	unsigned flags;   /* BIPFW_WIRE_* */
	enum bipfw_wire_scope scope;
	const struct bip_knob_table *knobs; /* read by open */

	int (*open)(const struct bipfw_wire_params *p, void **ctx_p);
	void (*close)(void *ctx);
	/* This process's address on the wire, "name,...". */
	int (*card)(void *ctx, char *buf, size_t len);
	/* Reach a peer through its card: -BIP_ECARD if malformed, -BIP_EWIRE
	 * if this wire cannot reach it. */
	int (*connect)(void *ctx, int peer, const char *card);
	/* Largest payload of a packet (say, what fits the MTU); NULL: the
	 * packet size. Wider small messages go in pieces. */
	size_t (*chunk)(void *ctx);
	/* Payloads of up to this many bytes are written into the room
	 * reserve gives by plain stores (bip_copy_plain), never the string
	 * stores memcpy may pick: the wire asks for those lines ahead of the
	 * copy. NULL: none. */
	size_t (*plain_max)(void *ctx);

	struct bip_pkt_hdr *(*reserve)(void *ctx, int peer, size_t len);
	void (*commit)(void *ctx, int peer, struct bip_pkt_hdr *pkt,
		       size_t len);
	/* Commit with the len payload bytes left where they are (reserve
	 * was asked for len): the caller keeps them unchanged until the next
	 * flush. NULL: the caller copies them behind the header. */
	void (*commit_ref)(void *ctx, int peer, struct bip_pkt_hdr *pkt,
			   const void *payload, size_t len);
	/* Push out what commit batched; NULL if commit sends at once. */
	void (*flush)(void *ctx);
	/* The header may sit unaligned (a segment of a GRO run) and in
	 * memory the sender can still write: copy it before reading. */
	int (*peek)(void *ctx, const void **hdr,
		    const void **payload, size_t *avail);
	void (*release)(void *ctx);
	void (*hold)(void *ctx); /* lossless wires only */
	/* Lossless wires, optional: go past the packet as release does, but
	 * leave its payload where it is, unchanged, until unkeep(token) (the
	 * token keep returned, for packets from that peer in the order they
	 * were kept). The small queue lends it to the host instead of a
	 * copy. */
	uint64_t (*keep)(void *ctx);
	void (*unkeep)(void *ctx, int peer, uint64_t token);

	/* DMA: write len bytes at addr in the peer's memory, which the peer
	 * may have exposed under key (0: not); NULL if absent. -BIP_EAGAIN
	 * when denied (the caller falls back to packets). */
	int (*dma_write)(void *ctx, int peer, uint64_t addr, uint64_t key,
			 const void *src, size_t len);
	/* Let the peer's dma_write reach [buf, buf + len) of ours, a receive
	 * its CTS names: *key is what the CTS carries to it, 0 if the wire
	 * needs none for this peer and size. unexpose ends it. NULL: none. */
	int (*expose)(void *ctx, int peer, void *buf, size_t len,
		      uint64_t *key);
	void (*unexpose)(void *ctx, uint64_t key);
	/* Single copy by the receiver: ready-mode long messages of at least
	 * pull_min(peer) bytes are read by the peer from our memory (SIZE_MAX:
	 * never). NULL if absent. */
	size_t (*pull_min)(void *ctx, int peer);
	/* One-sided single copy: len bytes between local and addr in the
	 * peer's memory (write: to the peer), with no action by the peer.
	 * addr is one the peer gave: the kernel checks it, we never
	 * dereference it. -BIP_EAGAIN when the peer cannot be reached so
	 * (messages then). rma_reach says beforehand (NULL: every peer the
	 * wire has). NULL if absent. */
	int (*rma)(void *ctx, int peer, void *local, uint64_t addr, size_t len,
		   bool write);
	/* Optional: rma's reads of n pieces (at most BIP_READV_MAX), in one
	 * call of the kernel where it can; each piece's rc is rma's for it
	 * alone. */
	void (*readv)(void *ctx, int peer, struct bip_rvec *v, unsigned n);
	bool (*rma_reach)(void *ctx, int peer);
	/* Lossless wires, optional: whether the peer has read everything we
	 * wrote into its link (what bip_close waits for). */
	bool (*read_all)(void *ctx, int peer);
	/* Memory the host's processes share, for one-sided access by load
	 * and store: mem_alloc gives len bytes, zeroed, at *addr_p and the
	 * key that names them to peers; mem_free ends them (addr NULL: only
	 * the key, the memory staying mapped here; a peer's mapping stays
	 * valid until it unmaps). mem_map maps len bytes at off of what
	 * the peer allocated under key, checked against what the key names:
	 * -BIP_EINVAL if it names nothing that long, -BIP_EAGAIN if the
	 * peer's memory cannot be mapped; mem_unmap ends a mapping. NULL if
	 * absent. */
	int (*mem_alloc)(void *ctx, size_t len, void **addr_p, uint64_t *key_p);
	void (*mem_free)(void *ctx, void *addr, size_t len, uint64_t key);
	int (*mem_map)(void *ctx, int peer, uint64_t key, uint64_t off,
		       size_t len, void **addr_p);
	void (*mem_unmap)(void *ctx, void *addr, size_t len);
	/* Waiting on that memory: while mem_watch names a word (NULL: none),
	 * a sleep (wait, wait_fd) is not begun once *word >= value. A process
	 * that raised a word another may wait on calls mem_wake_barrier, then
	 * mem_wake for each such peer: its doorbell rings if it sleeps. NULL
	 * if absent. */
	void (*mem_watch)(void *ctx, const uint64_t *word, uint64_t value);
	void (*mem_wake_barrier)(void *ctx);
	void (*mem_wake)(void *ctx, int peer);
	/* Host-scope wires, optional: say that this process waits on cpu
	 * (the host's other processes read it); with others, add to it the
	 * CPUs its peers said they wait on, and return 1 if the kernel shows
	 * one of them runnable on cpu now, else 0. */
	int (*host_cpus)(void *ctx, int cpu, struct bipfw_cpus *others);
	/* The peer as the wire sees it: enum bipfw_peer_state. */
	int (*peer_state)(void *ctx, int peer);
	/* Lossy wires: ask whether the peer's process is there even if it
	 * does not poll (it computes), and when it last answered (bipfw_now_us
	 * time, 0: never). NULL: the wire cannot tell. */
	void (*ping)(void *ctx, int peer);
	uint64_t (*answered_at)(void *ctx, int peer);
	/* The NIC's interrupt: sleep until a packet may have arrived, at most
	 * timeout_us (NULL for a self-scope wire: see wait_fd). */
	void (*wait)(void *ctx, unsigned timeout_us);
	/* The same when several wires are open: arm the interrupt and return
	 * a file descriptor that polls readable when a packet may have
	 * arrived, -BIP_EAGAIN if one is there already, or another code if
	 * there is no descriptor (the wire is then looked at every
	 * millisecond); wait_end disarms it. NULL: never a descriptor. A
	 * self-scope wire needs none: peek says whether a packet waits, and
	 * none comes while we sleep. */
	int (*wait_fd)(void *ctx);
	void (*wait_end)(void *ctx);
	/* Remove what a crashed process of the job left behind (NULL:
	 * nothing can be left): how many were removed, or a negative code. */
	int (*cleanup)(uint64_t secret, uint64_t job_key, int node);
	/* Whether the wire can work here with packets of packet_size bytes,
	 * and its state or why not in why: 0, or a negative code (NULL:
	 * always works). */
	int (*probe)(size_t packet_size, char *why, size_t len);
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
	unsigned retrans_us;   /* knob: lossy wires: first and largest
				* retransmission timeout */
	unsigned retrans_min_us; /* knob: its floor */
	unsigned nack_backoff_us; /* knob: first wait after a "busy" NACK */
	unsigned liveness_ms;  /* knob: how often idle peers are checked */
	unsigned peer_timeout_ms; /* knob: lossy wires: a peer that acks
				   * nothing for this long is gone */
	/* Debug faults on lossy wires: knobs. */
	unsigned fault_drop_pct, fault_dup_pct, fault_seed;
	char fault_types[128]; /* packet type names, or "all" */
};

extern const struct bip_knob_table bipfw_knobs;

int bipfw_create(const struct bipfw_config *cfg, struct bipfw **fw_p);
/* The small-message queue's capacity for a job of nnodes: the knob's
 * value, or for auto (BIP_KNOB_AUTO_COUNT) one sized by nnodes. */
unsigned bipfw_small_queue(unsigned knob, int nnodes);
/* What bipfw_create allocates for cfg (returned), and what each peer adds
 * once a packet goes to it (*per_peer): the retention buffers are the send
 * slots' copies and the senders' own buffers, shared by all peers. */
size_t bipfw_memory(const struct bipfw_config *cfg, size_t *per_peer);
void bipfw_destroy(struct bipfw *fw);

/* --- ports: which wire carries each peer ----------------------------- */

/* The wire classes built in, in order of preference (NULL-terminated). */
extern const struct bipfw_wire_class *const bipfw_wire_classes[];
/* BIP_WIRE: the wire every peer must use, or auto. */
extern const struct bip_knob_table bipfw_port_knobs;

/* Open the wires this job may need: host-scope ones always, network ones
 * when the job spans hosts (or BIP_WIRE names one); and the kernel module,
 * when it is there and BIP_KMOD allows. */
int bipfw_wires_open(struct bipfw *fw, const struct bipfw_wire_params *p);
/* What this NIC program uses of the kernel module, or why nothing, in
 * *why: 0 when it uses it. */
int bipfw_kmod_state(const struct bipfw *fw, const char **why);
/* Whether BIP_KMOD lets the NIC program use the module (a wire's probe). */
bool bipfw_kmod_wanted(void);
/* Whether the kernel module is loaded here and speaks our ABI (bip_info):
 * 0 or an error, and what it offers or why not in why. */
int bipfw_kmod_probe(char *why, size_t len);
/* Add an opened wire (tests): its index. The NIC program closes it. */
int bipfw_wire_add(struct bipfw *fw, const struct bipfw_wire_class *cls,
		   void *ctx);
/* Every open wire's card, joined by ';'. */
int bipfw_cards(const struct bipfw *fw, char *buf, size_t len);
/* Connect a peer through the best wire both ends have: same_host allows
 * host-scope wires. cards is the peer's bipfw_cards. */
int bipfw_connect(struct bipfw *fw, int peer, const char *cards,
		  bool same_host);
/* Put a peer on an open wire (tests, whose wires need no card). */
int bipfw_port_set(struct bipfw *fw, int peer, unsigned wire);
/* Carry the peer's messages wider than a packet by a second open wire
 * (tests; bipfw_connect does it by BIP_BULK). */
int bipfw_bulk_set(struct bipfw *fw, int peer, unsigned wire);
/* The wire a peer uses, and why it was chosen (NULL if not connected). */
const char *bipfw_port_name(const struct bipfw *fw, int peer,
			    const char **why);
/* Message bytes per packet to peer on the wire that carries messages
 * wider than one packet (they go in pieces of that size); 0 if it is not
 * connected. */
size_t bipfw_port_chunk(const struct bipfw *fw, int peer);
/* Single copy by the receiver: messages to peer of at least
 * bipfw_read_min bytes may be read by peer from our memory (SIZE_MAX:
 * never). One-sided single copy: bipfw_rma_reach says whether peer's
 * memory can be read and written with no action by peer; bipfw_rma reads
 * (or with write, writes) len bytes at addr, an address peer gave, in its
 * memory: -BIP_EAGAIN when its wire cannot. */
size_t bipfw_read_min(const struct bipfw *fw, int peer);
bool bipfw_rma_reach(const struct bipfw *fw, int peer);
int bipfw_rma(struct bipfw *fw, int peer, void *local, uint64_t addr,
	      size_t len, bool write);
/* Reads of n pieces of peer's memory (at most BIP_READV_MAX): each
 * piece's rc is what bipfw_rma returns for it alone; returns the first rc
 * that is not 0, else 0. One system call for them all where the wire can
 * (a window of messages read at once). */
int bipfw_readv(struct bipfw *fw, int peer, struct bip_rvec *v,
		unsigned n);
/* Memory shared within the host, allocated and unmapped by the first open
 * wire that can share memory, mapped through the peer's own wire: see the
 * wire class's mem_* operations. -BIP_EAGAIN when no wire can. */
int bipfw_mem_alloc(struct bipfw *fw, size_t len, void **addr_p,
		    uint64_t *key_p);
void bipfw_mem_free(struct bipfw *fw, void *addr, size_t len, uint64_t key);
int bipfw_mem_map(struct bipfw *fw, int peer, uint64_t key, uint64_t off,
		  size_t len, void **addr_p);
void bipfw_mem_unmap(struct bipfw *fw, void *addr, size_t len);
int bipfw_mem_watch(struct bipfw *fw, const uint64_t *word, uint64_t value);
void bipfw_mem_wake_barrier(struct bipfw *fw);
void bipfw_mem_wake(struct bipfw *fw, int peer);
/* The idle policy's look at the host's processes (the wires' host_cpus):
 * say that we wait on cpu; with others, whether a peer runs on cpu too
 * (0 when no wire can tell), *others getting the CPUs they said they wait
 * on. */
int bipfw_host_cpus(struct bipfw *fw, int cpu, struct bipfw_cpus *others);
/* Remove what crashed processes of a job left behind, on every wire. */
int bipfw_job_cleanup(uint64_t secret, uint64_t job_key, int nnodes);

/* One turn of the event loop: receive, then transmit, then timers.
 * Returns the number of events handled. */
int bipfw_step(struct bipfw *fw);

/* A poll: a step, or between lossless peers only a count when no step is
 * due, small messages then being taken straight from the link by
 * bipfw_small_peek. Returns the number of events handled. */
int bipfw_poll(struct bipfw *fw);

/* Sleep through the wire until traffic arrives, at most max_us (shorter
 * when timers are pending). Pending acks are sent first. */
void bipfw_block(struct bipfw *fw, unsigned max_us);

/* Close: queue a CLOSE, sequenced, to every live peer (after the sends
 * drained), and acknowledge once more the peers that closed before us. */
void bipfw_announce_close(struct bipfw *fw);

/* True while a peer on a lossy wire has not acknowledged our CLOSE (nor
 * closed): the closing process must go on stepping, since the peer may
 * resend packets whose acks were lost and its sends complete only on our
 * ack. The dead-peer timeout (BIP_PEER_TIMEOUT_MS) bounds it. */
bool bipfw_close_pending(const struct bipfw *fw);

/* True when every send has been acknowledged (or its peer is gone). */
bool bipfw_sends_drained(const struct bipfw *fw);

/* --- host interface: sends --------------------------------------------- */

/* Small send, gathered from iov: copied at once. 1: it is on the link
 * already (nothing to kick); 0: it waits in the peer's send FIFO for a kick
 * or a step; -BIP_EAGAIN when no send slot is free; -BIP_ENODE or
 * -BIP_EPEERGONE for the peer, then, piece by piece, -BIP_EINVAL for one
 * with bytes but no address and -BIP_ETOOLONG past BIP_SMALL_MAX. */
int bipfw_post_small(struct bipfw *fw, int peer, const struct iovec *iov,
		     int iovcnt);

/* Immediate sending: put on the link what waits for one peer, now. Without
 * flush, packets may wait in the wire's batch for the next flush (a kick
 * with it, a step): a stream of messages then leaves in one batch, by the
 * peer's bulk wire if it has one. */
void bipfw_tx_kick(struct bipfw *fw, int peer, bool flush);

/* Long send: returns the slot (>= 0) used as a request id. With
 * BIPFW_LONG_READY the data goes at once, without RTS/CTS, because the
 * caller knows the receive on tag is posted; the receiver's verdict (done,
 * truncated, or refused for want of a receive) completes it. With
 * BIPFW_LONG_PACKETS as well, the data goes in packets, never for the
 * receiver to read (try_pull): it chose that way itself. */
#define BIPFW_LONG_READY 0x1
#define BIPFW_LONG_PACKETS 0x2
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
/* The oldest out of the queue: 0, or -BIP_EAGAIN if it is empty (none
 * is taken from the link for that). */
int bipfw_small_pop(struct bipfw *fw);
/* bipfw_poll_light, then up to max small messages, oldest first, each to fn
 * (its data valid until fn returns), then consumed; a non-zero return of
 * fn stops after its message. Returns how many fn was given. */
typedef int (*bipfw_small_fn)(void *arg, const void *data, size_t len,
			      int node);
int bipfw_drain(struct bipfw *fw, int max, bipfw_small_fn fn, void *arg);

/* Asynchronous errors (overflow): returns and clears the pending one. */
int bipfw_take_error(struct bipfw *fw);

/* Number of peers that are neither gone nor closed and may still send to
 * us: the others, and this node while its packets to itself are due. */
int bipfw_live_peers(const struct bipfw *fw);
/* Whether that number is not 0 (cheaper: the other nodes first). */
bool bipfw_any_live(const struct bipfw *fw);
bool bipfw_peer_gone(const struct bipfw *fw, int peer);

const struct bipfw_counters *bipfw_counters(const struct bipfw *fw);

/* xorshift64*: a small seeded generator, so that a run that draws from it
 * (fault injection, simulated wires) can be replayed. */
static inline uint64_t bipfw_rand(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ull;
}

/* Monotonic microseconds, the firmware's clock. */
uint64_t bipfw_now_us(void);
uint64_t bipfw_now_ns(void);

/* SipHash-2-4 of len bytes under a 128-bit key. */
uint64_t bipfw_siphash(const uint64_t key[2], const void *data, size_t len);

/* Checksums used on lossy wires: CRC32C. */
uint32_t bipfw_csum(const void *buf, size_t len);
void bipfw_hdr_seal(struct bip_pkt_hdr *hdr);
bool bipfw_hdr_intact(const struct bip_pkt_hdr *hdr);

#endif
