/*
 * wire/udp.c - the udp wire: one datagram socket per process, on the
 * interface BIP_UDP_IFACE names, reaching any host. Packets leave in
 * batches (sendmmsg) and arrive in batches (recvmmsg); each carries the
 * outer header with the job's network tag, checked before anything else.
 * The wire is lossy: the NIC program checksums, acknowledges and resends.
 * Every packet fits the interface's MTU: the NIC program cuts long data and
 * small messages wider than that into pieces, which a run (below) carries
 * through the kernel at the cost of one datagram, where IP fragments would
 * each pay the whole path.
 *
 * A run of queued packets to one peer, all of one size but the last, leaves
 * as one segmented datagram (UDP GSO): the kernel's path through the
 * stack, veth and bridge is paid once per 64 KiB instead of once per
 * packet, which is what lets TCP stream at gigabytes per second where
 * plain datagrams top out at a few hundred megabytes. The receiving socket
 * takes such runs whole (UDP GRO) and peek walks their segments.
 *
 * A second socket, served by a thread of its own that sleeps in recvfrom,
 * answers liveness probes (BIP_OUTER_PROBE) for the process while it
 * computes and polls nothing: a peer waiting for our acks learns that we
 * are busy, not dead. The thread touches nothing but that socket and
 * values fixed at open.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bip_errno.h"
#include "bip_field.h"
#include "firmware.h"
#include "log.h"
#include "wire/udp.h"

#define OUTER sizeof(struct bip_outer_hdr)
#define HDR sizeof(struct bip_pkt_hdr)
#define IPV4_UDP_HDRS 28       /* IPv4 and UDP headers */
#define DGRAM_MAX 65507        /* largest UDP payload over IPv4 */
#define MTU_MIN 576
#define GSO_SEGS_MAX 64        /* the kernel's UDP_MAX_SEGMENTS (6.1) */
#define GRO_BUF 65536          /* a coalesced run, at most */

struct udp_knobs {
	char iface[64];
	unsigned port;
	unsigned batch;
	size_t sockbuf;
	unsigned gso; /* index in on_off: 1 is on */
};

static const char *const on_off[] = { "off", "on", NULL };

#define T(field) BIP_KNOB_CHARS(struct udp_knobs, field)
#define U(field) BIP_KNOB_UINT(struct udp_knobs, field)

static const struct bip_knob_def knobs[] = {
	{ { "BIP_UDP_IFACE", "interface, subnet or auto", "auto",
	    "The network interface of the udp wire: a name (eth0), a subnet "
	    "its IPv4 address is in (10.1.0.0/16), or auto (the first "
	    "interface that is up, not loopback, with an IPv4 address; "
	    "loopback if there is none)." },
	  BIP_KNOB_TEXT, 0, 64, NULL, T(iface) },
	{ { "BIP_UDP_PORT", "port", "0",
	    "UDP port of the socket (0: any free port)." },
	  BIP_KNOB_COUNT, 0, 65535, NULL, U(port) },
	{ { "BIP_UDP_BATCH", "count", "32",
	    "Packets sent or received per system call." },
	  BIP_KNOB_COUNT, 1, 1024, NULL, U(batch) },
	{ { "BIP_UDP_SOCKBUF", "size", "4m",
	    "Send and receive buffer of the socket (the kernel may cap it "
	    "at net.core.rmem_max/wmem_max unless run as root)." },
	  BIP_KNOB_SIZE, 65536, 1u << 30, NULL,
	  BIP_KNOB_SIZE_T(struct udp_knobs, sockbuf) },
	{ { "BIP_UDP_GSO", "on|off", "on",
	    "Send a run of packets to one peer as one segmented datagram "
	    "(UDP GSO) and receive runs whole (UDP GRO); the receive "
	    "buffers then take 64 KiB each (BIP_UDP_BATCH of them). Turned "
	    "off by itself where the kernel or interface refuses it." },
	  BIP_KNOB_CHOICE, 0, 0, on_off, U(gso) },
};

static const struct bip_knob_table udp_knobs = BIP_KNOB_TABLE(knobs);

/* A peer's addresses; sin_family is 0 until it is connected. */
struct udp_peer {
	struct sockaddr_in addr;
	struct sockaddr_in answerer; /* its liveness socket */
	uint64_t answered_at;        /* its last ALIVE, bipfw_now_us */
};

/* Control data of one message: a GSO segment size or a GRO one. */
union seg_cmsg {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

/* A batch of datagram buffers and the message headers over them. On
 * receive, a buffer may hold a coalesced run: seg is its segment size and
 * off the next segment's offset. On send, runs are gathered into group
 * messages (g), gn[i] datagrams each. */
struct batch {
	uint8_t *buf; /* n buffers of size bufsize */
	size_t bufsize;
	struct mmsghdr *m;
	struct iovec *v;
	union seg_cmsg *cm;
	unsigned start, n; /* tx: [start, n) queued; rx: next, received */
	size_t off, seg;
	struct mmsghdr *g;
	unsigned *gn;
};

struct udp {
	struct bipfw_wire_params p;
	struct udp_knobs k;
	int fd;
	int afd;              /* the answerer's socket */
	bool answering;       /* its thread runs */
	pthread_t answerer;
	uint16_t aport;
	struct sockaddr_in self;
	char ifname[IF_NAMESIZE];
	unsigned mtu;
	size_t bufsize; /* outer header, packet header, largest payload */
	bool gso;       /* segmented sends and coalesced receives work */
	uint64_t tag;   /* the job's network tag */
	struct udp_peer *peers;
	struct batch tx, rx;
};

/* The interface BIP_UDP_IFACE names, by name or subnet, or auto. */
static bool iface_matches(const char *want, const struct ifaddrs *ifa,
			  bool *loopback)
{
	const struct sockaddr_in *sin = (const void *)ifa->ifa_addr;
	char net[INET_ADDRSTRLEN];
	unsigned bits;
	struct in_addr a;

	*loopback = ifa->ifa_flags & IFF_LOOPBACK;
	if (strcmp(want, "auto") == 0)
		return !*loopback;
	if (!strchr(want, '/'))
		return strcmp(want, ifa->ifa_name) == 0;
	if (sscanf(want, "%15[0-9.]/%u", net, &bits) != 2 || bits > 32 ||
	    inet_pton(AF_INET, net, &a) != 1)
		return false;
	return bits == 0 || ((ntohl(a.s_addr) ^ ntohl(sin->sin_addr.s_addr)) >>
			     (32 - bits)) == 0;
}

static int find_iface(struct udp *u)
{
	struct ifaddrs *all, *ifa, *lo = NULL, *found = NULL;
	char have[256] = "";
	size_t used = 0;

	if (getifaddrs(&all) < 0) {
		bip_err("udp wire: getifaddrs: %s", strerror(errno));
		return -BIP_ESYS;
	}
	for (ifa = all; ifa && !found; ifa = ifa->ifa_next) {
		bool loopback;

		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    !(ifa->ifa_flags & IFF_UP))
			continue;
		if (used < sizeof(have)) {
			char a[INET_ADDRSTRLEN];

			inet_ntop(AF_INET,
				  &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr,
				  a, sizeof(a));
			used += (size_t)snprintf(have + used,
						 sizeof(have) - used, "%s%s %s",
						 used ? ", " : "", ifa->ifa_name,
						 a);
		}
		if (iface_matches(u->k.iface, ifa, &loopback))
			found = ifa;
		else if (loopback && !lo)
			lo = ifa;
	}
	if (!found && strcmp(u->k.iface, "auto") == 0)
		found = lo;
	if (!found) {
		bip_err("BIP_UDP_IFACE=%s: no interface that is up has an IPv4 "
			"address there (up: %s)",
			u->k.iface, used ? have : "none");
		freeifaddrs(all);
		return -BIP_EINVAL;
	}
	memcpy(&u->self, found->ifa_addr, sizeof(u->self));
	snprintf(u->ifname, sizeof(u->ifname), "%s", found->ifa_name);
	freeifaddrs(all);
	return 0;
}

static int iface_mtu(struct udp *u)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", u->ifname);
	if (ioctl(u->fd, SIOCGIFMTU, &ifr) < 0 || ifr.ifr_mtu < MTU_MIN) {
		bip_err("udp wire: cannot use the MTU of %s: %s", u->ifname,
			strerror(errno));
		return -BIP_ESYS;
	}
	u->mtu = (unsigned)ifr.ifr_mtu;
	return 0;
}

/* Buffers sized for the kernel's worst case: a full socket buffer is what
 * makes a fast sender's datagrams vanish at a slow receiver. The FORCE
 * variants work for root beyond the system's limits. */
static void sock_buffers(struct udp *u)
{
	int v = (int)u->k.sockbuf;

	if (setsockopt(u->fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0)
		(void)setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(u->fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) < 0)
		(void)setsockopt(u->fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

static int open_socket(struct udp *u)
{
	/* A path narrower than our interface still delivers, fragmented. */
	int pmtu = IP_PMTUDISC_DONT;
	socklen_t len = sizeof(u->self);

	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		bip_err("udp wire: socket: %s", strerror(errno));
		return -BIP_ESYS;
	}
	sock_buffers(u);
	(void)setsockopt(u->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
			 sizeof(pmtu));
	/* Without GRO a segmented run is cut up again before our socket. */
	u->gso = u->k.gso &&
		 setsockopt(u->fd, IPPROTO_UDP, UDP_GRO, &(int){ 1 },
			    sizeof(int)) == 0;
	u->self.sin_port = htons((uint16_t)u->k.port);
	if (bind(u->fd, (struct sockaddr *)&u->self, sizeof(u->self)) < 0 ||
	    getsockname(u->fd, (struct sockaddr *)&u->self, &len) < 0) {
		bip_err("udp wire: cannot bind to %s port %u: %s", u->ifname,
			u->k.port, strerror(errno));
		return -BIP_ESYS;
	}
	return 0;
}

/* The answerer: ALIVE for every PROBE of this job, until shutdown. */
static void *answer(void *arg)
{
	const struct udp *u = arg;

	for (;;) {
		struct bip_outer_hdr o;
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(u->afd, &o, sizeof(o), 0,
				     (struct sockaddr *)&from, &flen);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL; /* shut down */
		if ((size_t)n != sizeof(o) || o.magic != BIP_OUTER_PROBE ||
		    o.tag != u->tag)
			continue;
		o = (struct bip_outer_hdr){ .magic = BIP_OUTER_ALIVE,
					    .node = (uint32_t)u->p.node,
					    .tag = u->tag };
		(void)sendto(u->afd, &o, sizeof(o), MSG_DONTWAIT,
			     (struct sockaddr *)&from, flen);
	}
}

static int open_answerer(struct udp *u)
{
	struct sockaddr_in a = u->self;
	socklen_t len = sizeof(a);
	int rc;

	u->afd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	a.sin_port = 0;
	if (u->afd < 0 || bind(u->afd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(u->afd, (struct sockaddr *)&a, &len) < 0) {
		bip_err("udp wire: liveness socket: %s", strerror(errno));
		return -BIP_ESYS;
	}
	u->aport = ntohs(a.sin_port);
	rc = pthread_create(&u->answerer, NULL, answer, u);
	if (rc) {
		bip_err("udp wire: liveness thread: %s", strerror(rc));
		return -BIP_ESYS;
	}
	u->answering = true;
	return 0;
}

static int batch_init(struct batch *b, unsigned n, size_t bufsize)
{
	b->bufsize = bufsize;
	b->buf = malloc(n * bufsize);
	b->m = calloc(n, sizeof(*b->m));
	b->v = calloc(n, sizeof(*b->v));
	b->cm = calloc(n, sizeof(*b->cm));
	b->g = calloc(n, sizeof(*b->g));
	b->gn = calloc(n, sizeof(*b->gn));
	if (!b->buf || !b->m || !b->v || !b->cm || !b->g || !b->gn)
		return -BIP_ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		b->v[i] = (struct iovec){ b->buf + i * bufsize, bufsize };
		b->m[i].msg_hdr.msg_iov = &b->v[i];
		b->m[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

static void batch_free(struct batch *b)
{
	free(b->buf);
	free(b->m);
	free(b->v);
	free(b->cm);
	free(b->g);
	free(b->gn);
}

static void udp_close(void *ctx)
{
	struct udp *u = ctx;

	if (!u)
		return;
	if (u->answering) {
		/* Wakes its recvfrom with 0. */
		(void)shutdown(u->afd, SHUT_RDWR);
		pthread_join(u->answerer, NULL);
	}
	if (u->afd >= 0)
		close(u->afd);
	if (u->fd >= 0)
		close(u->fd);
	batch_free(&u->tx);
	batch_free(&u->rx);
	free(u->peers);
	free(u);
}

static int udp_open(const struct bipfw_wire_params *p, void **ctx_p)
{
	static const uint8_t what[8] = { 'u', 'd', 'p', '-', 't', 'a', 'g' };
	struct udp *u = calloc(1, sizeof(*u));
	size_t payload;
	int rc;

	if (!u)
		return -BIP_ENOMEM;
	u->fd = u->afd = -1;
	u->p = *p;
	rc = bip_knob_table_load(&udp_knobs, &u->k);
	if (!rc)
		rc = find_iface(u);
	if (!rc)
		rc = open_socket(u);
	if (!rc)
		rc = iface_mtu(u);
	if (rc)
		goto fail;
	/* The tag is derived, so the secret itself (which names the job's
	 * shared-memory segments) never travels. */
	u->tag = bipfw_siphash((const uint64_t[2]){ p->secret, p->job_key },
			       what, sizeof(what));
	rc = open_answerer(u);
	if (rc)
		goto fail;
	/* A packet fills one unfragmented datagram at most. */
	payload = u->mtu - IPV4_UDP_HDRS - OUTER - HDR;
	if (payload > p->packet_size)
		payload = p->packet_size;
	if (payload > DGRAM_MAX - OUTER - HDR)
		payload = DGRAM_MAX - OUTER - HDR;
	u->bufsize = OUTER + HDR + payload;
	u->peers = calloc((size_t)p->nnodes, sizeof(*u->peers));
	if (!u->peers) {
		rc = -BIP_ENOMEM;
		goto fail;
	}
	rc = batch_init(&u->tx, u->k.batch, u->bufsize);
	if (!rc)
		rc = batch_init(&u->rx, u->k.batch,
				u->gso ? GRO_BUF : u->bufsize);
	if (rc)
		goto fail;
	bip_dbg("udp wire on %s %s:%u, MTU %u", u->ifname,
		inet_ntoa(u->self.sin_addr), ntohs(u->self.sin_port), u->mtu);
	*ctx_p = u;
	return 0;
fail:
	udp_close(u);
	return rc;
}

/* Data per packet: what one unfragmented datagram carries. */
static size_t udp_chunk(void *ctx)
{
	return ((struct udp *)ctx)->bufsize - OUTER - HDR;
}

static int udp_card(void *ctx, char *buf, size_t len)
{
	struct udp *u = ctx;
	char a[INET_ADDRSTRLEN];
	int n;

	inet_ntop(AF_INET, &u->self.sin_addr, a, sizeof(a));
	n = snprintf(buf, len, "udp,%s,%u,%u", a, ntohs(u->self.sin_port),
		     u->aport);
	return n < 0 || (size_t)n >= len ? -BIP_ETOOLONG : 0;
}

static int udp_connect(void *ctx, int peer, const char *card)
{
	struct udp *u = ctx;
	struct udp_peer *pp = &u->peers[peer];
	char addr[INET_ADDRSTRLEN];
	const char *p = card;
	uint64_t port, aport;

	if (!bip_field_lit(&p, ',', "udp") ||
	    !bip_field_str(&p, ',', "0123456789.", addr, sizeof(addr)) ||
	    !bip_field_uint(&p, ',', 10, 65535, &port) || !port ||
	    !bip_field_uint(&p, '\0', 10, 65535, &aport) || !aport || *p ||
	    inet_pton(AF_INET, addr, &pp->addr.sin_addr) != 1)
		return -BIP_ECARD;
	pp->addr.sin_family = AF_INET;
	pp->addr.sin_port = htons((uint16_t)port);
	pp->answerer = pp->addr;
	pp->answerer.sin_port = htons((uint16_t)aport);
	return 0;
}

/* How many datagrams from i on go as one segmented run: the same peer,
 * the same size but a smaller last one, under the kernel's limits, and
 * unfragmented (GSO refuses segments beyond the MTU). */
static unsigned run_length(const struct udp *u, const struct batch *b,
			   unsigned i)
{
	size_t seg = b->v[i].iov_len, total = seg;
	unsigned k = 1;

	if (!u->gso || seg + IPV4_UDP_HDRS > u->mtu)
		return 1;
	while (i + k < b->n && k < GSO_SEGS_MAX &&
	       b->m[i + k].msg_hdr.msg_name == b->m[i].msg_hdr.msg_name &&
	       b->v[i + k].iov_len <= seg && total + seg <= DGRAM_MAX) {
		total += b->v[i + k].iov_len;
		if (b->v[i + k++].iov_len < seg)
			break;
	}
	return k;
}

/* Gather [start, n) into messages, runs as one segmented datagram each;
 * returns how many. */
static unsigned group(const struct udp *u, struct batch *b)
{
	unsigned ng = 0;

	for (unsigned i = b->start; i < b->n; i += b->gn[ng++]) {
		struct msghdr *h = &b->g[ng].msg_hdr;
		unsigned k = run_length(u, b, i);

		*h = b->m[i].msg_hdr;
		h->msg_iovlen = k;
		b->gn[ng] = k;
		if (k > 1) {
			struct cmsghdr *c = &b->cm[ng].align;

			h->msg_control = b->cm[ng].buf;
			h->msg_controllen = CMSG_SPACE(sizeof(uint16_t));
			c->cmsg_level = IPPROTO_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
			*(uint16_t *)CMSG_DATA(c) = (uint16_t)b->v[i].iov_len;
		}
	}
	return ng;
}

/* Send what is queued. A full socket buffer keeps the rest queued (reserve
 * then says the link is full); any other error loses that message, which
 * the NIC program's retransmission covers. A kernel or interface that
 * refuses segmentation turns it off (the refused run is resent later). */
static void udp_flush(void *ctx)
{
	struct udp *u = ctx;
	struct batch *b = &u->tx;

	while (b->start < b->n) {
		unsigned ng = group(u, b);
		int sent = sendmmsg(u->fd, b->g, ng, 0);

		if (sent > 0) {
			for (int i = 0; i < sent; i++) {
				b->start += b->gn[i];
				u->p.cnt->runs_sent += b->gn[i] > 1;
			}
			continue;
		}
		if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)
			return;
		if (b->gn[0] > 1 && (errno == EIO || errno == EINVAL ||
				     errno == EOPNOTSUPP)) {
			bip_info("udp wire: %s refuses segmented sends (%s): "
				 "packets go one by one",
				 u->ifname, strerror(errno));
			u->gso = false;
		} else {
			bip_dbg("udp wire: a datagram was not sent: %s",
				strerror(errno));
		}
		b->start += b->gn[0];
	}
	b->start = b->n = 0;
}

static struct bip_pkt_hdr *udp_reserve(void *ctx, int peer, size_t len)
{
	struct udp *u = ctx;
	struct batch *b = &u->tx;

	if (!u->peers[peer].addr.sin_family || OUTER + HDR + len > u->bufsize)
		return NULL;
	if (b->n == u->k.batch) {
		udp_flush(u);
		if (b->n)
			return NULL;
	}
	return (struct bip_pkt_hdr *)(b->buf + b->n * u->bufsize + OUTER);
}

static void udp_commit(void *ctx, int peer, struct bip_pkt_hdr *pkt,
		       size_t len)
{
	struct udp *u = ctx;
	struct batch *b = &u->tx;
	struct bip_outer_hdr *o = (struct bip_outer_hdr *)pkt - 1;

	*o = (struct bip_outer_hdr){ .magic = BIP_OUTER_MAGIC, .tag = u->tag };
	b->v[b->n].iov_len = OUTER + HDR + len;
	b->m[b->n].msg_hdr.msg_name = &u->peers[peer].addr;
	b->m[b->n].msg_hdr.msg_namelen = sizeof(u->peers[peer].addr);
	if (++b->n == u->k.batch)
		udp_flush(u);
}

size_t bipfw_udp_seg_size(const struct msghdr *h, size_t len)
{
	struct cmsghdr *c;
	int seg;

	for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR((struct msghdr *)h, c))
		if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO &&
		    c->cmsg_len == CMSG_LEN(sizeof(int))) {
			memcpy(&seg, CMSG_DATA(c), sizeof(seg));
			return seg > 0 && (size_t)seg < len ? (size_t)seg : len;
		}
	return len;
}

static size_t seg_size(const struct batch *b, unsigned i)
{
	return bipfw_udp_seg_size(&b->m[i].msg_hdr, b->m[i].msg_len);
}

enum bipfw_udp_kind bipfw_udp_classify(const void *buf, size_t len,
				       uint64_t tag, int nnodes,
				       uint32_t *node_p)
{
	struct bip_outer_hdr o;

	if (len < OUTER)
		return BIPFW_UDP_BAD;
	memcpy(&o, buf, sizeof(o));
	if (o.tag != tag)
		return BIPFW_UDP_FOREIGN;
	if (o.magic == BIP_OUTER_ALIVE && len == OUTER &&
	    o.node < (uint32_t)nnodes) {
		*node_p = o.node;
		return BIPFW_UDP_ALIVE;
	}
	if (o.magic != BIP_OUTER_MAGIC || len < OUTER + HDR)
		return BIPFW_UDP_BAD;
	return BIPFW_UDP_PACKET;
}

/* Step past the current datagram: to the next segment of its run, else
 * to the next message of the batch. */
static void advance(struct batch *b)
{
	if ((b->off += b->seg) < b->m[b->start].msg_len)
		return;
	b->off = 0;
	if (++b->start < b->n)
		b->seg = seg_size(b, b->start);
}

/* The datagram at the rx position, else a new batch from the socket. */
static int current_dgram(struct udp *u)
{
	struct batch *b = &u->rx;
	int n;

	if (b->start < b->n)
		return 0;
	for (unsigned i = 0; i < u->k.batch; i++) {
		b->v[i].iov_len = b->bufsize;
		b->m[i].msg_hdr.msg_control = b->cm[i].buf;
		b->m[i].msg_hdr.msg_controllen = sizeof(b->cm[i]);
	}
	n = recvmmsg(u->fd, b->m, u->k.batch, MSG_DONTWAIT, NULL);
	b->start = 0;
	b->n = n > 0 ? (unsigned)n : 0;
	if (n <= 0)
		return -BIP_EAGAIN;
	for (int i = 0; i < n; i++)
		u->p.cnt->runs_received += seg_size(b, (unsigned)i) <
					   b->m[i].msg_len;
	b->seg = seg_size(b, 0);
	return 0;
}

/* The next datagram of this job: others are counted and skipped here. */
static int udp_peek(void *ctx, const struct bip_pkt_hdr **hdr,
		    const void **payload, size_t *avail)
{
	struct udp *u = ctx;
	struct batch *b = &u->rx;
	int rc;

	for (rc = current_dgram(u); rc == 0; advance(b), rc = current_dgram(u)) {
		size_t left = b->m[b->start].msg_len - b->off;
		uint8_t *buf = b->buf + b->start * b->bufsize + b->off;
		size_t len = left < b->seg ? left : b->seg;
		uint32_t node;

		if (b->m[b->start].msg_hdr.msg_flags & MSG_TRUNC) {
			u->p.cnt->dropped_bad++;
			continue;
		}
		switch (bipfw_udp_classify(buf, len, u->tag, u->p.nnodes,
					   &node)) {
		case BIPFW_UDP_FOREIGN:
			u->p.cnt->dropped_foreign++;
			bip_dbg("udp wire: dropped a datagram of another job");
			continue;
		case BIPFW_UDP_ALIVE:
			/* A peer's answerer: its process is there. */
			u->peers[node].answered_at = bipfw_now_us();
			continue;
		case BIPFW_UDP_BAD:
			u->p.cnt->dropped_bad++;
			continue;
		case BIPFW_UDP_PACKET:
			break;
		}
		*hdr = (const struct bip_pkt_hdr *)(buf + OUTER);
		*payload = buf + OUTER + HDR;
		*avail = len - OUTER - HDR;
		return 0;
	}
	return rc;
}

static void udp_release(void *ctx)
{
	advance(&((struct udp *)ctx)->rx);
}

static int udp_peer_state(void *ctx, int peer)
{
	/* A silent peer is judged by the NIC program's ack timeout. */
	return BIPFW_PEER_LIVE;
}

static void udp_ping(void *ctx, int peer)
{
	struct udp *u = ctx;
	struct bip_outer_hdr o = { .magic = BIP_OUTER_PROBE,
				   .node = (uint32_t)u->p.node,
				   .tag = u->tag };

	if (u->peers[peer].answerer.sin_family)
		(void)sendto(u->fd, &o, sizeof(o), MSG_DONTWAIT,
			     (struct sockaddr *)&u->peers[peer].answerer,
			     sizeof(u->peers[peer].answerer));
}

static uint64_t udp_answered_at(void *ctx, int peer)
{
	return ((struct udp *)ctx)->peers[peer].answered_at;
}

static int udp_wait_fd(void *ctx)
{
	struct udp *u = ctx;

	return u->rx.start < u->rx.n ? -BIP_EAGAIN : u->fd;
}

static void udp_wait(void *ctx, unsigned timeout_us)
{
	int fd = udp_wait_fd(ctx);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec ts = { timeout_us / 1000000,
			       (long)(timeout_us % 1000000) * 1000 };

	if (fd >= 0)
		(void)ppoll(&pfd, 1, &ts, NULL);
}

static int udp_probe(size_t packet_size, char *state, size_t len)
{
	struct bipfw_counters cnt;
	struct bipfw_wire_params p = { .nnodes = 1, .secret = 1,
				       .packet_size = packet_size,
				       .cnt = &cnt };
	void *ctx;
	int rc = udp_open(&p, &ctx);

	if (rc) {
		snprintf(state, len, "cannot open a socket (%s)",
			 bip_strerror(rc));
		return rc;
	}
	{
		struct udp *u = ctx;

		snprintf(state, len, "on %s %s (BIP_UDP_IFACE), MTU %u: %zu "
			 "bytes of data per packet",
			 u->ifname, inet_ntoa(u->self.sin_addr), u->mtu,
			 udp_chunk(u));
	}
	udp_close(ctx);
	return 0;
}

const struct bipfw_wire_class bipfw_udp_class = {
	.name = "udp",
	.flags = BIPFW_WIRE_LOSSY,
	.scope = BIPFW_SCOPE_NETWORK,
	.knobs = &udp_knobs,
	.open = udp_open,
	.close = udp_close,
	.card = udp_card,
	.connect = udp_connect,
	.chunk = udp_chunk,
	.reserve = udp_reserve,
	.commit = udp_commit,
	.flush = udp_flush,
	.peek = udp_peek,
	.release = udp_release,
	.peer_state = udp_peer_state,
	.ping = udp_ping,
	.answered_at = udp_answered_at,
	.wait = udp_wait,
	.wait_fd = udp_wait_fd,
	.probe = udp_probe,
};
