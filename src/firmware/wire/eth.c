/*
 * wire/eth.c - the eth wire: raw Ethernet frames of BIP's EtherType on the
 * interface BIP_ETH_IFACE names, to hosts on the same Ethernet segment, as
 * GAMMA went: no IP or UDP below the NIC program, which checksums,
 * acknowledges and resends itself (batches and liveness answers are the
 * network wires' own, dgram.c). Frames carry at most the MTU; there is no
 * segmentation offload for packet sockets, so each packet is a frame.
 *
 * Frames arrive in a ring the kernel shares with the process
 * (PACKET_RX_RING): a receive, or a look for one, is a read of the next
 * frame's status word instead of a system call, which is most of what a
 * busy-polling receiver spends per message.
 *
 * A packet socket needs CAP_NET_RAW. Without it, frames go through
 * /dev/bip where bip.ko is loaded and allows the interface (kframe.c): the
 * kernel writes the Ethernet and outer headers and delivers only the job's
 * frames for this node, into a ring like the packet socket's, so the
 * process gets no more than the job's own traffic. With neither, or with
 * BIP_ETH_IFACE=off (the default), the wire does not open and udp carries
 * the other hosts; BIP_WIRE=eth makes that an error. Every packet socket
 * of a host sees every frame of the EtherType there: the outer header
 * names the destination node, and a socket filter keeps only ours (and
 * liveness answers) out of the others' rings; without it, frames for
 * another process are skipped uncounted.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <net/ethernet.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bip_errno.h"
#include "bip_field.h"
#include "kdev.h"
#include "knob.h"
#include "log.h"
#include "wire/dgram.h"
#include "wire/eth.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

struct eth_knobs {
	char iface[64];
	size_t ring;
};

static const struct bip_knob_def knobs[] = {
	{ { "BIP_ETH_IFACE", "off, interface, subnet or auto", "off",
	    "The network interface of the eth wire (raw Ethernet frames to "
	    "hosts on the same segment; needs CAP_NET_RAW, or bip.ko "
	    "allowing the interface): a name (eth0; "
	    "it needs no IP address), a subnet its IPv4 address is in, or "
	    "auto (the first that is up, not loopback). off: the eth wire "
	    "is not used and udp carries the other hosts." },
	  BIP_KNOB_TEXT, 0, 64, NULL, BIP_KNOB_CHARS(struct eth_knobs, iface) },
	{ { "BIP_ETH_RING", "size", "4m",
	    "Receive ring shared with the kernel, which writes frames into "
	    "it (PACKET_RX_RING): polled without a system call. Rounded "
	    "down to whole blocks of 64 KiB (or of one frame, if larger), "
	    "at least one. 0: frames are read by recvmmsg. Through "
	    "/dev/bip: that many bytes of frame slots, at least 16, pinned "
	    "(halved while RLIMIT_MEMLOCK refuses)." },
	  BIP_KNOB_SIZE, 0, 1u << 30, NULL,
	  BIP_KNOB_SIZE_T(struct eth_knobs, ring) },
};

static const struct bip_knob_table eth_knobs = BIP_KNOB_TABLE(knobs);

struct eth {
	struct bipfw_dgram d; /* first: the class's ctx is both */
	struct eth_knobs k;
	int ifindex;
	uint8_t mac[ETH_ALEN];
	uint8_t *ring;       /* frames from the kernel; NULL: recvmmsg */
	size_t ring_len;
	unsigned frame_size; /* bytes per frame slot, a power of two */
	unsigned frames;
	unsigned rx_at;      /* the next frame slot to look at */
	/* Frames through /dev/bip (fd -1: packet sockets): */
	struct bipfw_kframe kf; /* the wire's file (d.fd) */
	struct bipfw_kframe ka; /* the answerer's (d.afd) */
};

static bool kmod(const struct eth *e)
{
	return e->kf.k.fd >= 0;
}

#define RING_BLOCK (64u << 10)

/* A probe came to the answerer's EtherType; its answer goes to the
 * prober's wire socket. */
static void reply_to(union bipfw_dgram_addr *a)
{
	a->ll.sll_protocol = htons(BIP_ETHERTYPE);
}

/* A packet socket of EtherType type bound to our interface; frames we
 * send are not seen again by our own sockets. */
static int packet_socket(struct eth *e, uint16_t type, int flags)
{
	struct sockaddr_ll a = { .sll_family = AF_PACKET,
				 .sll_protocol = htons(type),
				 .sll_ifindex = e->ifindex };
	int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC | flags,
			htons(type));

	if (fd < 0) {
		if (errno == EPERM || errno == EACCES)
			return -BIP_EWIRE;
		bip_err("eth wire: packet socket: %s", strerror(errno));
		return -BIP_ESYS;
	}
	(void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &(int){ 1 },
			 sizeof(int));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		bip_err("eth wire: cannot bind to %s: %s", e->d.ifname,
			strerror(errno));
		close(fd);
		return -BIP_ESYS;
	}
	return fd;
}

/* Only frames for this node, and liveness answers, reach the socket (the
 * filter sees the frame from the outer header on; it loads big-endian). */
static void node_filter(struct eth *e)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct bip_outer_hdr, node)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl((uint32_t)e->d.p.node),
			 2, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct bip_outer_hdr, magic)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(BIP_OUTER_ALIVE), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (setsockopt(e->d.fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
		       sizeof(prog)) < 0)
		bip_info("eth wire: no socket filter (%s): frames for the "
			 "other processes of this host come here too",
			 strerror(errno));
}

/* Interface index and MAC address, read through an inet socket (a packet
 * socket needs the index to exist). */
static int iface_ids(struct eth *e)
{
	struct ifreq ifr;
	int rc;

	e->d.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (e->d.fd < 0)
		return -BIP_ESYS;
	rc = bipfw_dgram_ifreq(&e->d, SIOCGIFINDEX, &ifr);
	if (!rc) {
		e->ifindex = ifr.ifr_ifindex;
		rc = bipfw_dgram_ifreq(&e->d, SIOCGIFHWADDR, &ifr);
	}
	if (!rc && ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		bip_err("eth wire: %s is not an Ethernet interface",
			e->d.ifname);
		rc = -BIP_EINVAL;
	}
	if (!rc) {
		memcpy(e->mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
		rc = bipfw_dgram_mtu(&e->d);
	}
	close(e->d.fd);
	e->d.fd = -1;
	return rc;
}

/* The receive ring, TPACKET_V2: frame slots one after the other, each a
 * status word and the frame behind it. Refused (an old kernel, no
 * memory), frames are read by recvmmsg as on udp. */
static void ring_open(struct eth *e)
{
	struct tpacket_req req = { 0 };
	size_t need = TPACKET_ALIGN(TPACKET2_HDRLEN + 16) + e->d.mtu;
	size_t frame = 1, block;
	void *ring;

	if (!e->k.ring)
		return;
	while (frame < need)
		frame <<= 1;
	block = frame > RING_BLOCK ? frame : RING_BLOCK;
	req.tp_block_size = (unsigned)block;
	req.tp_block_nr = e->k.ring > block ? (unsigned)(e->k.ring / block) : 1;
	req.tp_frame_size = (unsigned)frame;
	req.tp_frame_nr = req.tp_block_nr * (unsigned)(block / frame);
	if (setsockopt(e->d.fd, SOL_PACKET, PACKET_VERSION,
		       &(int){ TPACKET_V2 }, sizeof(int)) < 0 ||
	    setsockopt(e->d.fd, SOL_PACKET, PACKET_RX_RING, &req,
		       sizeof(req)) < 0) {
		bip_info("eth wire: no receive ring (%s): frames are read by "
			 "recvmmsg", strerror(errno));
		return;
	}
	ring = mmap(NULL, block * req.tp_block_nr, PROT_READ | PROT_WRITE,
		    MAP_SHARED, e->d.fd, 0);
	if (ring == MAP_FAILED) {
		bip_info("eth wire: cannot map the receive ring (%s): frames "
			 "are read by recvmmsg", strerror(errno));
		/* Frames would go to the unmapped ring: take it away. */
		memset(&req, 0, sizeof(req));
		(void)setsockopt(e->d.fd, SOL_PACKET, PACKET_RX_RING, &req,
				 sizeof(req));
		return;
	}
	e->ring = ring;
	e->ring_len = block * req.tp_block_nr;
	e->frame_size = (unsigned)frame;
	e->frames = req.tp_frame_nr;
}

static struct tpacket2_hdr *ring_frame(const struct eth *e)
{
	return (struct tpacket2_hdr *)(e->ring + (size_t)e->rx_at *
							 e->frame_size);
}

/* The slot goes back to the kernel once we are done with its frame. */
static void ring_release(struct eth *e)
{
	__atomic_store_n(&ring_frame(e)->tp_status, TP_STATUS_KERNEL,
			 __ATOMIC_RELEASE);
	e->rx_at = e->rx_at + 1 == e->frames ? 0 : e->rx_at + 1;
}

/* The next frame for us in /dev/bip's ring. */
static int kmod_peek(struct eth *e, const void **hdr, const void **payload,
		     size_t *avail)
{
	for (;; bipfw_kframe_release(&e->kf)) {
		struct bip_kabi_slot s;
		const uint8_t *buf = bipfw_kframe_peek(&e->kf, &s);

		if (!buf)
			return -BIP_EAGAIN;
		if (bipfw_dgram_accept(&e->d, buf, s.len)) {
			bipfw_dgram_packet(buf, s.len, hdr, payload, avail);
			return 0;
		}
	}
}

/* The next frame for us in the ring: a frame cut to its slot, or said to
 * lie outside it, is not a packet. */
static int eth_peek(void *ctx, const void **hdr, const void **payload,
		    size_t *avail)
{
	struct eth *e = ctx;

	if (kmod(e))
		return kmod_peek(e, hdr, payload, avail);
	if (!e->ring)
		return bipfw_dgram_peek(ctx, hdr, payload, avail);
	for (;; ring_release(e)) {
		const struct tpacket2_hdr *t = ring_frame(e);
		uint32_t st = __atomic_load_n(&t->tp_status, __ATOMIC_ACQUIRE);
		const uint8_t *buf;

		if (!(st & TP_STATUS_USER))
			return -BIP_EAGAIN;
		if ((st & TP_STATUS_COPY) || t->tp_len != t->tp_snaplen ||
		    t->tp_net < sizeof(*t) || t->tp_net > e->frame_size ||
		    t->tp_snaplen > e->frame_size - t->tp_net) {
			e->d.p.cnt->dropped_bad++;
			continue;
		}
		buf = (const uint8_t *)t + t->tp_net;
		if (bipfw_dgram_accept(&e->d, buf, t->tp_snaplen)) {
			bipfw_dgram_packet(buf, t->tp_snaplen, hdr, payload,
					   avail);
			return 0;
		}
	}
}

static void eth_release(void *ctx)
{
	struct eth *e = ctx;

	if (kmod(e))
		bipfw_kframe_release(&e->kf);
	else if (e->ring)
		ring_release(e);
	else
		bipfw_dgram_release(ctx);
}

static void eth_close(void *ctx)
{
	struct eth *e = ctx;

	if (!e)
		return;
	if (kmod(e)) {
		/* The answerer reads its file's ring until it stops. */
		bipfw_dgram_stop(&e->d);
		e->d.fd = e->d.afd = -1;
	}
	bipfw_kframe_close(&e->kf);
	bipfw_kframe_close(&e->ka);
	if (e->ring)
		munmap(e->ring, e->ring_len);
	bipfw_dgram_close(ctx);
}

/* The packet sockets: the wire's, with its node filter and ring, and the
 * answerer's; -BIP_EWIRE without CAP_NET_RAW. */
static int sockets_open(struct eth *e)
{
	int fd = packet_socket(e, BIP_ETHERTYPE, SOCK_NONBLOCK);

	if (fd < 0)
		return fd;
	e->d.fd = fd;
	fd = packet_socket(e, BIP_ETHERTYPE_LIVE, 0);
	if (fd < 0)
		return fd;
	e->d.afd = fd;
	bipfw_dgram_sockbuf(e->d.fd, 4u << 20);
	node_filter(e);
	ring_open(e);
	return 0;
}

/* Datagrams (one piece each) as frames through /dev/bip: the kernel
 * writes the outer header from the magic and node we give. */
static int kmod_send(struct bipfw_dgram *d, int fd, struct mmsghdr *m,
		     unsigned n)
{
	struct eth *e = (struct eth *)d;
	struct bip_kabi_frame fr[BIPFW_DGRAM_BATCH];

	if (n > BIPFW_DGRAM_BATCH)
		n = BIPFW_DGRAM_BATCH;
	for (unsigned i = 0; i < n; i++) {
		const struct msghdr *h = &m[i].msg_hdr;
		const struct sockaddr_ll *to = h->msg_name;
		const uint8_t *p = h->msg_iov[0].iov_base;
		struct bip_outer_hdr o;

		memcpy(&o, p, sizeof(o));
		fr[i] = (struct bip_kabi_frame){
			.buf = (uint64_t)(uintptr_t)(p + sizeof(o)),
			.len = (uint32_t)(h->msg_iov[0].iov_len - sizeof(o)),
			.magic = o.magic,
			.node = o.node,
			.ethertype = ntohs(to->sll_protocol),
		};
		memcpy(fr[i].dst, to->sll_addr, ETH_ALEN);
	}
	return bipfw_kframe_send(fd == e->ka.k.fd ? &e->ka : &e->kf, fr, n);
}

/* The answerer's next frame, as recvfrom would give it. */
static ssize_t kmod_recv_probe(struct bipfw_dgram *d, void *buf, size_t len,
			       union bipfw_dgram_addr *from)
{
	struct eth *e = (struct eth *)d;
	struct bip_kabi_slot s;
	const uint8_t *frame = bipfw_kframe_peek(&e->ka, &s);

	if (!frame) {
		errno = EAGAIN;
		return -1;
	}
	if (len > s.len)
		len = s.len;
	memcpy(buf, frame, len);
	from->ll = (struct sockaddr_ll){ .sll_family = AF_PACKET,
					 .sll_protocol = htons(s.ethertype),
					 .sll_ifindex = e->ifindex,
					 .sll_halen = ETH_ALEN };
	memcpy(from->ll.sll_addr, s.src, ETH_ALEN);
	bipfw_kframe_release(&e->ka);
	return (ssize_t)len;
}

static unsigned kmod_ring_kib(const struct eth *e)
{
	return (unsigned)((size_t)e->kf.slots * e->kf.slot_size >> 10);
}

/* Without CAP_NET_RAW: two files of the job on /dev/bip, the wire's for
 * this node's frames and the answerer's for probes, each with its ring. */
static int kmod_open(struct eth *e, const struct bipfw_wire_params *p)
{
	int rc = bipfw_kframe_open(&e->kf, p->secret, p->job_key, e->d.ifname,
				   BIP_ETHERTYPE, (uint32_t)p->node, e->d.mtu,
				   e->k.ring);

	if (!rc)
		rc = bipfw_kframe_open(&e->ka, p->secret, p->job_key,
				       e->d.ifname, BIP_ETHERTYPE_LIVE,
				       BIP_KABI_NODE_ANY, ETH_ZLEN - ETH_HLEN, 0);
	if (rc)
		return rc;
	e->d.fd = e->kf.k.fd;
	e->d.afd = e->ka.k.fd;
	e->d.send = kmod_send;
	e->d.recv_probe = kmod_recv_probe;
	bipfw_kdev_why_add(p->kdev, "; eth frames through it on %s (%u KiB "
			   "ring)", e->d.ifname, kmod_ring_kib(e));
	return 0;
}

static int eth_open(const struct bipfw_wire_params *p, void **ctx_p)
{
	struct eth *e = calloc(1, sizeof(*e));
	int rc;

	if (!e)
		return -BIP_ENOMEM;
	e->kf.k.fd = e->ka.k.fd = -1;
	bipfw_dgram_init(&e->d, "eth", p);
	e->d.alen = sizeof(struct sockaddr_ll);
	e->d.reply_to = reply_to;
	rc = bip_knob_table_load(&eth_knobs, &e->k);
	if (!rc && strcmp(e->k.iface, "off") == 0) {
		bip_dbg("eth wire: off (BIP_ETH_IFACE)");
		rc = -BIP_EWIRE;
	}
	if (!rc)
		rc = bipfw_dgram_iface(&e->d, "BIP_ETH_IFACE", e->k.iface,
				       false, NULL);
	if (!rc)
		rc = iface_ids(e);
	if (!rc)
		rc = sockets_open(e);
	if (rc == -BIP_EWIRE && p->kdev && p->kdev->fd >= 0)
		rc = kmod_open(e, p);
	else if (rc == -BIP_EWIRE && e->d.ifname[0])
		bip_info("eth wire: packet sockets need CAP_NET_RAW, and "
			 "/dev/bip is not open (udp carries the other hosts)");
	if (!rc)
		rc = bipfw_dgram_start(&e->d, e->d.mtu - BIPFW_DGRAM_OUTER -
						      BIPFW_DGRAM_HDR);
	if (rc < 0) {
		eth_close(e);
		return rc;
	}
	*ctx_p = e;
	return 0;
}

static int eth_card(void *ctx, char *buf, size_t len)
{
	const uint8_t *m = ((struct eth *)ctx)->mac;
	int n = snprintf(buf, len, "eth,%02x:%02x:%02x:%02x:%02x:%02x", m[0],
			 m[1], m[2], m[3], m[4], m[5]);

	return n < 0 || (size_t)n >= len ? -BIP_ETOOLONG : 0;
}

static int eth_connect(void *ctx, int peer, const char *card)
{
	struct eth *e = ctx;
	struct bipfw_dgram_peer *pp = &e->d.peers[peer];
	struct sockaddr_ll a = { .sll_family = AF_PACKET,
				 .sll_protocol = htons(BIP_ETHERTYPE),
				 .sll_ifindex = e->ifindex,
				 .sll_halen = ETH_ALEN };
	const char *p = card;

	if (!bip_field_lit(&p, ',', "eth"))
		return -BIP_ECARD;
	for (int i = 0; i < ETH_ALEN; i++) {
		uint64_t byte;
		const char *start = p;

		if (!bip_field_uint(&p, i + 1 < ETH_ALEN ? ':' : '\0', 16, 255,
				    &byte) ||
		    p - start != (i + 1 < ETH_ALEN ? 3 : 2))
			return -BIP_ECARD;
		a.sll_addr[i] = (uint8_t)byte;
	}
	if (*p)
		return -BIP_ECARD;
	pp->addr.ll = a;
	pp->answerer.ll = a;
	pp->answerer.ll.sll_protocol = htons(BIP_ETHERTYPE_LIVE);
	return 0;
}

static int eth_probe(size_t packet_size, char *state, size_t len)
{
	struct bipfw_kdev k = { .fd = -1 };
	void *ctx;
	int rc;
	struct eth *e;
	char card[64];
	size_t used;

	if (bipfw_kmod_wanted())
		(void)bipfw_kdev_open(&k, BIP_KABI_DEVICE, 1, 0);
	rc = bipfw_dgram_probe_open(eth_open, packet_size, &k, &ctx);
	bipfw_kdev_close(&k);
	e = ctx;
	if (rc == -BIP_EWIRE) {
		snprintf(state, len, "not used: BIP_ETH_IFACE is off, or no "
			 "CAP_NET_RAW and no bip.ko allowing the interface "
			 "(BIP_LOG=info says which)");
		return rc;
	}
	if (rc) {
		snprintf(state, len, "cannot open (%s)", bip_strerror(rc));
		return rc;
	}
	(void)eth_card(e, card, sizeof(card));
	bipfw_dgram_probe_done(e, card + 4, "BIP_ETH_IFACE", state, len);
	used = strlen(state);
	if (kmod(e))
		snprintf(state + used, len - used, "; frames through /dev/bip "
			 "(no CAP_NET_RAW), %u KiB ring (BIP_ETH_RING)",
			 kmod_ring_kib(e));
	else if (e->ring)
		snprintf(state + used, len - used, "; receive ring %zu KiB "
			 "(BIP_ETH_RING)", e->ring_len >> 10);
	else
		snprintf(state + used, len - used, "; frames read by recvmmsg "
			 "(BIP_ETH_RING)");
	eth_close(e);
	return 0;
}

const struct bipfw_wire_class bipfw_eth_class = {
	.name = "eth",
	.knobs = &eth_knobs,
	.open = eth_open,
	.card = eth_card,
	.connect = eth_connect,
	.probe = eth_probe,
	.close = eth_close,
	.peek = eth_peek,
	.release = eth_release,
	BIPFW_DGRAM_OPS(0),
};
