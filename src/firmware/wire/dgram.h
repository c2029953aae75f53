/*
 * wire/dgram.h - what the network wires (udp, eth) share: one datagram
 * socket per process, packets sent and received in batches behind the
 * outer header that carries the job's tag, runs of packets as one
 * segmented datagram where the socket can, and a second socket whose
 * thread answers liveness probes while the process computes. A wire class
 * opens the sockets and names its peers' addresses; everything else is
 * here, and its reserve/commit/flush/peek/release, ping, answered_at,
 * wait and wait_fd are these functions.
 */
#ifndef BIP_FIRMWARE_WIRE_DGRAM_H
#define BIP_FIRMWARE_WIRE_DGRAM_H

#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include "firmware.h"

#define BIPFW_DGRAM_OUTER sizeof(struct bip_outer_hdr)
#define BIPFW_DGRAM_HDR sizeof(struct bip_pkt_hdr)
#define BIPFW_DGRAM_BATCH 32 /* default datagrams per system call */
#define BIPFW_DGRAM_GRO_BUF 65536 /* a coalesced run, at most */

/* A peer's address on either wire. */
union bipfw_dgram_addr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_ll ll;
};

/* A batch of datagram buffers and the message headers over them. On
 * receive, a buffer may hold a coalesced run: seg is its segment size and
 * off the next segment's offset. On send, runs are gathered into group
 * messages (g), gn[i] datagrams each. */
union bipfw_dgram_cmsg {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

struct bipfw_dgram_batch {
	uint8_t *buf; /* n buffers of size bufsize */
	size_t bufsize;
	struct mmsghdr *m;
	struct iovec *v;
	union bipfw_dgram_cmsg *cm;
	unsigned start, n; /* tx: [start, n) queued; rx: next, received */
	size_t off, seg;
	struct mmsghdr *g;
	unsigned *gn;
};

struct bipfw_dgram_peer {
	union bipfw_dgram_addr addr;     /* 0 family until connected */
	union bipfw_dgram_addr answerer; /* its liveness socket */
	uint64_t answered_at;            /* its last ALIVE, bipfw_now_us */
	bool unreachable;                /* its host said its port is closed */
};

/* The shared part of a network wire: the first member of the class's own
 * state, so that the class's ctx is one of these too. */
struct bipfw_dgram {
	struct bipfw_wire_params p;
	const char *wire; /* "udp", "eth": for messages */
	int fd;           /* the wire's socket, non-blocking */
	int afd;          /* the answerer's socket */
	int stopfd;       /* an event that stops its thread */
	bool answering;   /* its thread runs */
	pthread_t answerer;
	/* The answerer replies to the prober's address as received, made a
	 * reply to its wire's socket by this (NULL: as it is). */
	void (*reply_to)(union bipfw_dgram_addr *a);
	socklen_t alen;   /* the length of an address */
	/* A class whose files are not sockets (eth through /dev/bip) moves
	 * datagrams its own way (NULL: the sockets'): send like sendmmsg(2)
	 * on fd or afd, each datagram in its first piece (such a class
	 * gathers in its own commit_ref); recv_probe like recvfrom(2) on afd,
	 * where the answerer takes probes. */
	int (*send)(struct bipfw_dgram *d, int fd, struct mmsghdr *m,
		    unsigned n);
	ssize_t (*recv_probe)(struct bipfw_dgram *d, void *buf, size_t len,
			      union bipfw_dgram_addr *from);
	char ifname[IF_NAMESIZE];
	unsigned mtu;     /* bytes of datagram the interface carries */
	unsigned batch;
	size_t bufsize;   /* outer header, packet header, largest payload */
	bool gso;         /* segmented sends and coalesced receives work */
	bool recverr;     /* the socket queues ICMP errors (IP_RECVERR)... */
	uint64_t errors_at; /* ...read then last */
	uint64_t tag;     /* the job's network tag */
	struct bipfw_dgram_peer *peers;
	struct bipfw_dgram_batch tx, rx;
};

/* The interface that knob's value want names (a name, a subnet its IPv4
 * address is in, or auto: the first up, not loopback - loopback if none
 * and loopback_ok): its name in d->ifname, its IPv4 address in *addr;
 * with addr NULL, a link without IPv4 will do (by name or auto); else an
 * error that lists the interfaces there are. */
int bipfw_dgram_iface(struct bipfw_dgram *d, const char *knob,
		      const char *want, bool loopback_ok,
		      struct sockaddr_in *addr);
/* An ioctl on d->ifname through d->fd (SIOCGIFMTU, SIOCGIFHWADDR...). */
int bipfw_dgram_ifreq(struct bipfw_dgram *d, unsigned long request,
		      struct ifreq *ifr);
/* d->mtu from the interface (d->fd open). */
int bipfw_dgram_mtu(struct bipfw_dgram *d);

/* Before the class opens its sockets: the wire's name, the job's tag
 * (derived from its secret, so the secret never travels) and no socket. */
void bipfw_dgram_init(struct bipfw_dgram *d, const char *wire,
		      const struct bipfw_wire_params *p);

/* Once fd, mtu, batch and gso are set (afd opened and bound too): packets
 * of at most payload bytes of data, the per-peer table, the batches, and
 * the answerer's thread. */
int bipfw_dgram_start(struct bipfw_dgram *d, size_t payload);

/* Socket buffers sized for the worst case (root may go beyond the system
 * limits): a full receive buffer is what makes a fast sender's datagrams
 * vanish at a slow receiver. */
void bipfw_dgram_sockbuf(int fd, size_t bytes);

/* Stops the answerer (before its files close, when the class closes
 * them). */
void bipfw_dgram_stop(struct bipfw_dgram *d);

/* Stops the answerer, closes the sockets, frees d (the class's state). */
void bipfw_dgram_close(void *ctx);

/* Data per packet. */
size_t bipfw_dgram_chunk(void *ctx);

struct bip_pkt_hdr *bipfw_dgram_reserve(void *ctx, int peer, size_t len);
void bipfw_dgram_commit(void *ctx, int peer, struct bip_pkt_hdr *pkt,
			size_t len);
void bipfw_dgram_commit_ref(void *ctx, int peer, struct bip_pkt_hdr *pkt,
			    const void *payload, size_t len);
void bipfw_dgram_flush(void *ctx);
int bipfw_dgram_peek(void *ctx, const void **hdr,
		     const void **payload, size_t *avail);
void bipfw_dgram_release(void *ctx);
int bipfw_dgram_peer_state(void *ctx, int peer);
void bipfw_dgram_ping(void *ctx, int peer);
uint64_t bipfw_dgram_answered_at(void *ctx, int peer);
void bipfw_dgram_wait(void *ctx, unsigned timeout_us);
int bipfw_dgram_wait_fd(void *ctx);

/* The class members every network wire shares, for its class's
 * initializer, with the flags it adds (the class adds name, knobs, open,
 * card, connect, probe; and close, peek and release: BIPFW_DGRAM_RX_OPS
 * unless it receives its own way). */
#define BIPFW_DGRAM_OPS(more_flags)                                            \
	.flags = BIPFW_WIRE_LOSSY | (more_flags),                              \
	.scope = BIPFW_SCOPE_NETWORK,                                          \
	.chunk = bipfw_dgram_chunk, .reserve = bipfw_dgram_reserve,            \
	.commit = bipfw_dgram_commit, .commit_ref = bipfw_dgram_commit_ref,    \
	.flush = bipfw_dgram_flush,                                            \
	.peer_state = bipfw_dgram_peer_state, .ping = bipfw_dgram_ping,        \
	.answered_at = bipfw_dgram_answered_at, .wait = bipfw_dgram_wait,      \
	.wait_fd = bipfw_dgram_wait_fd
#define BIPFW_DGRAM_RX_OPS                                                     \
	.close = bipfw_dgram_close, .peek = bipfw_dgram_peek,                  \
	.release = bipfw_dgram_release

/* bip_info's look at a wire: open it for a job of one node (with /dev/bip
 * open in kdev, or NULL); 0 and the class's state in *ctx_p (for
 * bipfw_dgram_probe_done), or the code. */
int bipfw_dgram_probe_open(int (*open)(const struct bipfw_wire_params *,
				       void **),
			   size_t packet_size, struct bipfw_kdev *kdev,
			   void **ctx_p);
/* Describe the probed wire in state: its interface, address (addr) and
 * packet size, the knob that chose the interface. */
void bipfw_dgram_probe_done(void *ctx, const char *addr, const char *knob,
			    char *state, size_t len);

/* Bytes from the network, judged purely (the fuzzer's entry points). */

/* What one received datagram of len bytes is: a BIP packet for node self
 * after the outer header (at least a whole packet header), one for
 * another process (a packet socket sees its host's frames), a peer's
 * liveness answer (its node in *node_p), another job's, or malformed. */
enum bipfw_dgram_kind {
	BIPFW_DGRAM_PACKET,
	BIPFW_DGRAM_OTHER,
	BIPFW_DGRAM_ALIVE,
	BIPFW_DGRAM_FOREIGN,
	BIPFW_DGRAM_BAD,
	BIPFW_DGRAM_NKINDS
};
enum bipfw_dgram_kind bipfw_dgram_classify(const void *buf, size_t len,
					   uint64_t tag, int self, int nnodes,
					   uint32_t *node_p);

/* One received datagram: true when it is a packet for this process;
 * anything else is counted (another job's, malformed) or noted (a peer's
 * liveness answer) here. */
bool bipfw_dgram_accept(struct bipfw_dgram *d, const uint8_t *buf,
			size_t len);

/* An accepted datagram's packet header, payload and payload bytes. */
static inline void bipfw_dgram_packet(const uint8_t *buf, size_t len,
				      const void **hdr, const void **payload,
				      size_t *avail)
{
	*hdr = buf + BIPFW_DGRAM_OUTER;
	*payload = buf + BIPFW_DGRAM_OUTER + BIPFW_DGRAM_HDR;
	*avail = len - BIPFW_DGRAM_OUTER - BIPFW_DGRAM_HDR;
}

/* The segment size of a received message of len bytes: a coalesced run
 * (UDP GRO) says it in its control data, in (0, len); else len. */
size_t bipfw_dgram_seg_size(const struct msghdr *h, size_t len);

#endif
