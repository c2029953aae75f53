/*
 * wire/dgram.c - the machinery of the network wires (see dgram.h): batched
 * sends and receives behind the outer header, segmented runs, liveness
 * answers, the choice of an interface.
 *
 * A run of queued packets to one peer, all of one size but the last, leaves
 * as one segmented datagram (UDP GSO) where the socket can: the kernel's
 * path through the stack, veth and bridge is paid once per 64 KiB instead
 * of once per packet, which is what lets TCP stream at gigabytes per
 * second where plain datagrams top out at a few hundred megabytes. The
 * receiving socket takes such runs whole (UDP GRO) and peek walks their
 * segments.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/errqueue.h>
#include <netinet/ip_icmp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "bip_errno.h"
#include "log.h"
#include "wire/dgram.h"

#define OUTER BIPFW_DGRAM_OUTER
#define HDR BIPFW_DGRAM_HDR
#define IPV4_UDP_HDRS 28 /* IPv4 and UDP headers */
#define DGRAM_MAX 65507  /* largest UDP payload over IPv4 */
#define GSO_SEGS_MAX 64  /* the kernel's UDP_MAX_SEGMENTS (6.1) */
#define MTU_MIN 576

/* --- the interface ------------------------------------------------------- */

/* The interface a knob names, by name or subnet, or auto (an entry of
 * the family the caller lists: AF_INET, or AF_PACKET, which has no
 * subnet). */
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
	if (ifa->ifa_addr->sa_family != AF_INET)
		return false;
	if (sscanf(want, "%15[0-9.]/%u", net, &bits) != 2 || bits > 32 ||
	    inet_pton(AF_INET, net, &a) != 1)
		return false;
	return bits == 0 || ((ntohl(a.s_addr) ^ ntohl(sin->sin_addr.s_addr)) >>
			     (32 - bits)) == 0;
}

int bipfw_dgram_iface(struct bipfw_dgram *d, const char *knob,
		      const char *want, bool loopback_ok,
		      struct sockaddr_in *addr)
{
	struct ifaddrs *all, *ifa, *lo = NULL, *found = NULL;
	char have[256] = "";
	size_t used = 0;
	/* Without an address wanted, any link: a name, or a subnet of an
	 * IPv4 address it has. */
	bool any_link = !addr;

	if (getifaddrs(&all) < 0) {
		bip_err("%s wire: getifaddrs: %s", d->wire, strerror(errno));
		return -BIP_ESYS;
	}
	for (ifa = all; ifa && !found; ifa = ifa->ifa_next) {
		int family = ifa->ifa_addr ? ifa->ifa_addr->sa_family : -1;
		char a[INET_ADDRSTRLEN] = "";
		bool loopback;

		if ((family != AF_INET && !(any_link && family == AF_PACKET)) ||
		    !(ifa->ifa_flags & IFF_UP))
			continue;
		if (family == AF_INET)
			inet_ntop(AF_INET,
				  &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr,
				  a, sizeof(a));
		if (used < sizeof(have) && (family == AF_INET) != any_link)
			used += (size_t)snprintf(have + used,
						 sizeof(have) - used, "%s%s%s%s",
						 used ? ", " : "", ifa->ifa_name,
						 *a ? " " : "", a);
		if (iface_matches(want, ifa, &loopback))
			found = ifa;
		else if (loopback && !lo)
			lo = ifa;
	}
	if (!found && loopback_ok && strcmp(want, "auto") == 0)
		found = lo;
	if (!found) {
		bip_err("%s=%s: no interface that is up %s (up: %s)", knob,
			want,
			any_link ? "has that name or an IPv4 address there"
				 : "has an IPv4 address there",
			used ? have : "none");
		freeifaddrs(all);
		return -BIP_EINVAL;
	}
	if (addr)
		memcpy(addr, found->ifa_addr, sizeof(*addr));
	snprintf(d->ifname, sizeof(d->ifname), "%s", found->ifa_name);
	freeifaddrs(all);
	return 0;
}

int bipfw_dgram_ifreq(struct bipfw_dgram *d, unsigned long request,
		      struct ifreq *ifr)
{
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", d->ifname);
	if (ioctl(d->fd, request, ifr) < 0) {
		bip_err("%s wire: cannot read %s's settings: %s", d->wire,
			d->ifname, strerror(errno));
		return -BIP_ESYS;
	}
	return 0;
}

int bipfw_dgram_mtu(struct bipfw_dgram *d)
{
	struct ifreq ifr;
	int rc = bipfw_dgram_ifreq(d, SIOCGIFMTU, &ifr);

	if (rc)
		return rc;
	if (ifr.ifr_mtu < MTU_MIN) {
		bip_err("%s wire: the MTU of %s (%d) is below %d", d->wire,
			d->ifname, ifr.ifr_mtu, MTU_MIN);
		return -BIP_EINVAL;
	}
	d->mtu = (unsigned)ifr.ifr_mtu;
	return 0;
}

/* --- start and end ------------------------------------------------------ */

void bipfw_dgram_init(struct bipfw_dgram *d, const char *wire,
		      const struct bipfw_wire_params *p)
{
	static const uint8_t what[8] = { 'u', 'd', 'p', '-', 't', 'a', 'g' };

	d->p = *p;
	d->wire = wire;
	d->fd = d->afd = d->stopfd = -1;
	d->batch = BIPFW_DGRAM_BATCH;
	d->tag = bipfw_siphash((const uint64_t[2]){ p->secret, p->job_key },
			       what, sizeof(what));
}

void bipfw_dgram_sockbuf(int fd, size_t bytes)
{
	int v = (int)bytes;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

static int send_mmsg(struct bipfw_dgram *d, int fd, struct mmsghdr *m,
		     unsigned n)
{
	return d->send ? d->send(d, fd, m, n) : sendmmsg(fd, m, n, MSG_DONTWAIT);
}

/* One datagram, which may be lost. */
static void send_one(struct bipfw_dgram *d, int fd, const void *buf,
		     size_t len, const union bipfw_dgram_addr *to,
		     socklen_t tolen)
{
	struct iovec v = { (void *)buf, len };
	struct mmsghdr m = { .msg_hdr = { .msg_name = (void *)to,
					  .msg_namelen = tolen,
					  .msg_iov = &v,
					  .msg_iovlen = 1 } };

	(void)send_mmsg(d, fd, &m, 1);
}

/* The answerer: ALIVE for every PROBE of this job, until its stop event.
 * It touches nothing but its sockets (and a class's state for them that
 * only it uses) and values fixed at start. (Neither
 * shutdown, which does not wake a packet socket, nor cancellation, which
 * ASan cannot follow, stops it.) */
static void *answer(void *arg)
{
	struct bipfw_dgram *d = arg;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = d->afd, .events = POLLIN },
					 { .fd = d->stopfd, .events = POLLIN } };
		struct bip_outer_hdr o;
		union bipfw_dgram_addr from;
		socklen_t flen = sizeof(from);
		ssize_t n;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (pfd[1].revents)
			return NULL;
		if (d->recv_probe) {
			n = d->recv_probe(d, &o, sizeof(o), &from);
			flen = d->alen;
		} else {
			n = recvfrom(d->afd, &o, sizeof(o), MSG_DONTWAIT,
				     &from.sa, &flen);
		}
		/* Its interface went: no probe will come. */
		if (n < 0 && (pfd[0].revents & (POLLHUP | POLLNVAL)))
			return NULL;
		if ((size_t)n != sizeof(o) || o.magic != BIP_OUTER_PROBE ||
		    o.tag != d->tag)
			continue;
		o = (struct bip_outer_hdr){ .magic = BIP_OUTER_ALIVE,
					    .node = (uint32_t)d->p.node,
					    .tag = d->tag };
		if (d->reply_to)
			d->reply_to(&from);
		send_one(d, d->afd, &o, sizeof(o), &from, flen);
	}
}

/* n buffers of bufsize bytes, each the first of iovs pieces of a
 * datagram: a send's second piece is the payload where it lies (commit_ref),
 * or empty. */
static int batch_init(struct bipfw_dgram_batch *b, unsigned n, size_t bufsize,
		      unsigned iovs)
{
	b->bufsize = bufsize;
	b->buf = malloc(n * bufsize);
	b->m = calloc(n, sizeof(*b->m));
	b->v = calloc((size_t)n * iovs, sizeof(*b->v));
	b->cm = calloc(n, sizeof(*b->cm));
	b->g = calloc(n, sizeof(*b->g));
	b->gn = calloc(n, sizeof(*b->gn));
	if (!b->buf || !b->m || !b->v || !b->cm || !b->g || !b->gn)
		return -BIP_ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		b->v[i * iovs] = (struct iovec){ b->buf + i * bufsize, bufsize };
		b->m[i].msg_hdr.msg_iov = &b->v[i * iovs];
		b->m[i].msg_hdr.msg_iovlen = iovs;
	}
	return 0;
}

static void batch_free(struct bipfw_dgram_batch *b)
{
	free(b->buf);
	free(b->m);
	free(b->v);
	free(b->cm);
	free(b->g);
	free(b->gn);
}

int bipfw_dgram_start(struct bipfw_dgram *d, size_t payload)
{
	size_t stride;
	int rc;

	if (payload > d->p.packet_size)
		payload = d->p.packet_size;
	d->bufsize = OUTER + HDR + payload;
	d->peers = calloc((size_t)d->p.nnodes, sizeof(*d->peers));
	if (!d->peers)
		return -BIP_ENOMEM;
	/* Buffers start on cache lines: headers are read and written in
	 * place. */
	stride = (d->bufsize + 63) & ~(size_t)63;
	rc = batch_init(&d->tx, d->batch, stride, 2);
	if (!rc)
		rc = batch_init(&d->rx, d->batch,
				d->gso ? BIPFW_DGRAM_GRO_BUF : stride, 1);
	if (rc)
		return rc;
	d->stopfd = eventfd(0, EFD_CLOEXEC);
	if (d->stopfd < 0) {
		bip_err("%s wire: eventfd: %s", d->wire, strerror(errno));
		return -BIP_ESYS;
	}
	rc = pthread_create(&d->answerer, NULL, answer, d);
	if (rc) {
		bip_err("%s wire: liveness thread: %s", d->wire, strerror(rc));
		return -BIP_ESYS;
	}
	d->answering = true;
	return 0;
}

void bipfw_dgram_stop(struct bipfw_dgram *d)
{
	if (!d->answering)
		return;
	(void)!write(d->stopfd, &(uint64_t){ 1 }, sizeof(uint64_t));
	pthread_join(d->answerer, NULL);
	d->answering = false;
}

void bipfw_dgram_close(void *ctx)
{
	struct bipfw_dgram *d = ctx;

	if (!d)
		return;
	bipfw_dgram_stop(d);
	if (d->stopfd >= 0)
		close(d->stopfd);
	if (d->afd >= 0)
		close(d->afd);
	if (d->fd >= 0)
		close(d->fd);
	batch_free(&d->tx);
	batch_free(&d->rx);
	free(d->peers);
	free(d);
}

int bipfw_dgram_probe_open(int (*open)(const struct bipfw_wire_params *,
				       void **),
			   size_t packet_size, struct bipfw_kdev *kdev,
			   void **ctx_p)
{
	static struct bipfw_counters cnt;
	const struct bipfw_wire_params p = { .nnodes = 1, .secret = 1,
					     .packet_size = packet_size,
					     .cnt = &cnt, .kdev = kdev };

	*ctx_p = NULL;
	return open(&p, ctx_p);
}

void bipfw_dgram_probe_done(void *ctx, const char *addr, const char *knob,
			    char *state, size_t len)
{
	struct bipfw_dgram *d = ctx;

	snprintf(state, len, "on %s %s (%s), MTU %u: %zu bytes of data per "
		 "packet", d->ifname, addr, knob, d->mtu, bipfw_dgram_chunk(d));
}

size_t bipfw_dgram_chunk(void *ctx)
{
	return ((struct bipfw_dgram *)ctx)->bufsize - OUTER - HDR;
}

/* --- errors the kernel reports ----------------------------------------- */

#define ERRORS_EVERY_US 1000 /* the error queue, read when nothing fails */

static bool is_addr(const union bipfw_dgram_addr *a,
		    const struct sockaddr_in *to)
{
	return a->sa.sa_family == AF_INET && a->in.sin_port == to->sin_port &&
	       a->in.sin_addr.s_addr == to->sin_addr.s_addr;
}

/* The peer a datagram we sent went to: its wire address or its
 * answerer's; -1 if none. */
static int peer_of(const struct bipfw_dgram *d, const struct sockaddr_in *to)
{
	for (int i = 0; i < d->p.nnodes; i++)
		if (is_addr(&d->peers[i].addr, to) ||
		    is_addr(&d->peers[i].answerer, to))
			return i;
	return -1;
}

/* Read the socket's error queue (IP_RECVERR). A "port unreachable" from a
 * peer's host means its process closed its sockets: the peer is gone
 * (peer_state). Other errors (a host or network unreachable for now) are
 * left to the timeouts. What the kernel wrote is checked like any input:
 * an address we never sent to is ignored. */
static void read_errors(struct bipfw_dgram *d)
{
	d->errors_at = bipfw_now_us();
	for (int n = 0; n < 64; n++) {
		union {
			char buf[CMSG_SPACE(sizeof(struct sock_extended_err) +
					    sizeof(struct sockaddr_in))];
			struct cmsghdr align;
		} cm;
		struct sockaddr_in to = { 0 };
		struct sock_extended_err ee;
		struct msghdr h = { .msg_name = &to,
				    .msg_namelen = sizeof(to),
				    .msg_control = cm.buf,
				    .msg_controllen = sizeof(cm) };
		struct cmsghdr *c;
		int peer;

		if (recvmsg(d->fd, &h, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		for (c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
			if (c->cmsg_level != IPPROTO_IP ||
			    c->cmsg_type != IP_RECVERR ||
			    c->cmsg_len < CMSG_LEN(sizeof(ee)))
				continue;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			if (ee.ee_origin != SO_EE_ORIGIN_ICMP ||
			    ee.ee_type != ICMP_DEST_UNREACH ||
			    ee.ee_code != ICMP_PORT_UNREACH ||
			    h.msg_namelen < sizeof(to) ||
			    (peer = peer_of(d, &to)) < 0 ||
			    d->peers[peer].unreachable)
				continue;
			d->peers[peer].unreachable = true;
			bip_info("%s wire: node %d's host says its port %u is "
				 "closed: its process is gone", d->wire, peer,
				 ntohs(to.sin_port));
		}
	}
}

/* An error the socket kept for us (ICMP, with IP_RECVERR) fails one call
 * that had nothing to do with it: read the queue; the caller retries. */
static bool socket_error(struct bipfw_dgram *d, int err)
{
	if (!d->recverr ||
	    (err != ECONNREFUSED && err != EHOSTUNREACH &&
	     err != ENETUNREACH && err != EHOSTDOWN))
		return false;
	read_errors(d);
	return true;
}

/* --- send ----------------------------------------------------------------- */

/* The length of queued datagram i: its buffer and its payload piece. */
static size_t tx_len(const struct bipfw_dgram_batch *b, unsigned i)
{
	return b->v[2 * i].iov_len + b->v[2 * i + 1].iov_len;
}

/* How many datagrams from i on go as one segmented run: the same peer,
 * the same size but a smaller last one, under the kernel's limits, and
 * unfragmented (GSO refuses segments beyond the MTU). */
static unsigned run_length(const struct bipfw_dgram *d,
			   const struct bipfw_dgram_batch *b, unsigned i)
{
	size_t seg = tx_len(b, i), total = seg;
	unsigned k = 1;

	if (!d->gso || seg + IPV4_UDP_HDRS > d->mtu)
		return 1;
	while (i + k < b->n && k < GSO_SEGS_MAX &&
	       b->m[i + k].msg_hdr.msg_name == b->m[i].msg_hdr.msg_name &&
	       tx_len(b, i + k) <= seg && total + seg <= DGRAM_MAX) {
		total += tx_len(b, i + k);
		if (tx_len(b, i + k++) < seg)
			break;
	}
	return k;
}

/* Gather [start, n) into messages, runs as one segmented datagram each;
 * returns how many. */
static unsigned group(const struct bipfw_dgram *d, struct bipfw_dgram_batch *b)
{
	unsigned ng = 0;

	for (unsigned i = b->start; i < b->n; i += b->gn[ng++]) {
		struct msghdr *h = &b->g[ng].msg_hdr;
		unsigned k = run_length(d, b, i);

		*h = b->m[i].msg_hdr;
		h->msg_iovlen = 2 * k;
		b->gn[ng] = k;
		if (k > 1) {
			struct cmsghdr *c = &b->cm[ng].align;

			h->msg_control = b->cm[ng].buf;
			h->msg_controllen = CMSG_SPACE(sizeof(uint16_t));
			c->cmsg_level = IPPROTO_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
			*(uint16_t *)CMSG_DATA(c) = (uint16_t)tx_len(b, i);
		}
	}
	return ng;
}

/* Send what is queued. A full socket buffer keeps the rest queued (reserve
 * then says the link is full); any other error loses that message, which
 * the NIC program's retransmission covers. A kernel or interface that
 * refuses segmentation turns it off (the refused run is resent later). */
void bipfw_dgram_flush(void *ctx)
{
	struct bipfw_dgram *d = ctx;
	struct bipfw_dgram_batch *b = &d->tx;
	bool retried = false;

	while (b->start < b->n) {
		unsigned ng = group(d, b);
		int sent = send_mmsg(d, d->fd, b->g, ng);

		if (sent > 0) {
			for (int i = 0; i < sent; i++) {
				b->start += b->gn[i];
				d->p.cnt->runs_sent += b->gn[i] > 1;
			}
			continue;
		}
		if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)
			return;
		/* A kept error fails one call: once more. The same error
		 * again is the route's own (no route to the host, which every
		 * send meets): that message is lost, as below. */
		if (!retried && socket_error(d, errno)) {
			retried = true;
			continue;
		}
		if (b->gn[0] > 1 && (errno == EIO || errno == EINVAL ||
				     errno == EOPNOTSUPP)) {
			bip_info("%s wire: %s refuses segmented sends (%s): "
				 "packets go one by one",
				 d->wire, d->ifname, strerror(errno));
			d->gso = false;
		} else {
			bip_dbg("%s wire: a datagram was not sent: %s",
				d->wire, strerror(errno));
		}
		b->start += b->gn[0];
	}
	b->start = b->n = 0;
}

struct bip_pkt_hdr *bipfw_dgram_reserve(void *ctx, int peer, size_t len)
{
	struct bipfw_dgram *d = ctx;
	struct bipfw_dgram_batch *b = &d->tx;

	if (!d->peers[peer].addr.sa.sa_family || OUTER + HDR + len > d->bufsize)
		return NULL;
	if (b->n == d->batch) {
		bipfw_dgram_flush(d);
		if (b->n)
			return NULL;
	}
	return (struct bip_pkt_hdr *)(b->buf + b->n * b->bufsize + OUTER);
}

void bipfw_dgram_commit_ref(void *ctx, int peer, struct bip_pkt_hdr *pkt,
			    const void *payload, size_t len)
{
	struct bipfw_dgram *d = ctx;
	struct bipfw_dgram_batch *b = &d->tx;
	struct bip_outer_hdr *o = (struct bip_outer_hdr *)pkt - 1;

	/* The class's send takes one piece: gather it here (reserve left
	 * room for the payload). */
	if (d->send && payload) {
		memcpy(pkt + 1, payload, len);
		payload = NULL;
	}
	*o = (struct bip_outer_hdr){ .magic = BIP_OUTER_MAGIC,
				     .node = (uint32_t)peer,
				     .tag = d->tag };
	b->v[2 * b->n].iov_len = OUTER + HDR + (payload ? 0 : len);
	b->v[2 * b->n + 1] = (struct iovec){ (void *)payload,
					     payload ? len : 0 };
	b->m[b->n].msg_hdr.msg_name = &d->peers[peer].addr;
	b->m[b->n].msg_hdr.msg_namelen = d->alen;
	if (++b->n == d->batch)
		bipfw_dgram_flush(d);
}

void bipfw_dgram_commit(void *ctx, int peer, struct bip_pkt_hdr *pkt,
			size_t len)
{
	bipfw_dgram_commit_ref(ctx, peer, pkt, NULL, len);
}

/* --- receive -------------------------------------------------------------- */

size_t bipfw_dgram_seg_size(const struct msghdr *h, size_t len)
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

static size_t seg_size(const struct bipfw_dgram_batch *b, unsigned i)
{
	return bipfw_dgram_seg_size(&b->m[i].msg_hdr, b->m[i].msg_len);
}

/* Frames may come padded (Ethernet's minimum): lengths are at least. */
enum bipfw_dgram_kind bipfw_dgram_classify(const void *buf, size_t len,
					   uint64_t tag, int self, int nnodes,
					   uint32_t *node_p)
{
	struct bip_outer_hdr o;

	if (len < OUTER)
		return BIPFW_DGRAM_BAD;
	memcpy(&o, buf, sizeof(o));
	if (o.tag != tag)
		return BIPFW_DGRAM_FOREIGN;
	if (o.magic == BIP_OUTER_ALIVE && o.node < (uint32_t)nnodes) {
		*node_p = o.node;
		return BIPFW_DGRAM_ALIVE;
	}
	if (o.magic != BIP_OUTER_MAGIC || len < OUTER + HDR)
		return BIPFW_DGRAM_BAD;
	return o.node == (uint32_t)self ? BIPFW_DGRAM_PACKET
					: BIPFW_DGRAM_OTHER;
}

/* Step past the current datagram: to the next segment of its run, else
 * to the next message of the batch. */
static void advance(struct bipfw_dgram_batch *b)
{
	if ((b->off += b->seg) < b->m[b->start].msg_len)
		return;
	b->off = 0;
	if (++b->start < b->n)
		b->seg = seg_size(b, b->start);
}

/* The datagram at the rx position, else a new batch from the socket. */
static int current_dgram(struct bipfw_dgram *d)
{
	struct bipfw_dgram_batch *b = &d->rx;
	int n;

	if (b->start < b->n)
		return 0;
	for (unsigned i = 0; i < d->batch; i++) {
		b->v[i].iov_len = b->bufsize;
		b->m[i].msg_hdr.msg_control = b->cm[i].buf;
		b->m[i].msg_hdr.msg_controllen = sizeof(b->cm[i]);
	}
	n = recvmmsg(d->fd, b->m, d->batch, MSG_DONTWAIT, NULL);
	if (n < 0 && socket_error(d, errno))
		n = recvmmsg(d->fd, b->m, d->batch, MSG_DONTWAIT, NULL);
	b->start = 0;
	b->n = n > 0 ? (unsigned)n : 0;
	if (n <= 0)
		return -BIP_EAGAIN;
	for (int i = 0; i < n; i++)
		d->p.cnt->runs_received += seg_size(b, (unsigned)i) <
					   b->m[i].msg_len;
	b->seg = seg_size(b, 0);
	return 0;
}

bool bipfw_dgram_accept(struct bipfw_dgram *d, const uint8_t *buf,
			size_t len)
{
	uint32_t node;

	switch (bipfw_dgram_classify(buf, len, d->tag, d->p.node, d->p.nnodes,
				     &node)) {
	case BIPFW_DGRAM_PACKET:
		return true;
	case BIPFW_DGRAM_OTHER:
		return false;
	case BIPFW_DGRAM_FOREIGN:
		d->p.cnt->dropped_foreign++;
		bip_dbg("%s wire: dropped a datagram of another job", d->wire);
		return false;
	case BIPFW_DGRAM_ALIVE:
		/* A peer's answerer: its process is there. */
		d->peers[node].answered_at = bipfw_now_us();
		return false;
	case BIPFW_DGRAM_BAD:
	case BIPFW_DGRAM_NKINDS:
		break;
	}
	d->p.cnt->dropped_bad++;
	return false;
}

/* The next datagram for us: others are counted and skipped here. */
int bipfw_dgram_peek(void *ctx, const void **hdr,
		     const void **payload, size_t *avail)
{
	struct bipfw_dgram *d = ctx;
	struct bipfw_dgram_batch *b = &d->rx;
	int rc;

	for (rc = current_dgram(d); rc == 0; advance(b), rc = current_dgram(d)) {
		size_t left = b->m[b->start].msg_len - b->off;
		uint8_t *buf = b->buf + b->start * b->bufsize + b->off;
		size_t len = left < b->seg ? left : b->seg;

		if (b->m[b->start].msg_hdr.msg_flags & MSG_TRUNC) {
			d->p.cnt->dropped_bad++;
			continue;
		}
		if (!bipfw_dgram_accept(d, buf, len))
			continue;
		bipfw_dgram_packet(buf, len, hdr, payload, avail);
		return 0;
	}
	return rc;
}

void bipfw_dgram_release(void *ctx)
{
	advance(&((struct bipfw_dgram *)ctx)->rx);
}

/* --- liveness and sleep --------------------------------------------------- */

int bipfw_dgram_peer_state(void *ctx, int peer)
{
	struct bipfw_dgram *d = ctx;

	/* Errors sit in the queue until a call fails on them: look now and
	 * then. A silent peer is judged by the NIC program's timeouts. */
	if (d->recverr && bipfw_now_us() - d->errors_at >= ERRORS_EVERY_US)
		read_errors(d);
	return d->peers[peer].unreachable ? BIPFW_PEER_GONE : BIPFW_PEER_LIVE;
}

void bipfw_dgram_ping(void *ctx, int peer)
{
	struct bipfw_dgram *d = ctx;
	struct bip_outer_hdr o = { .magic = BIP_OUTER_PROBE,
				   .node = (uint32_t)d->p.node,
				   .tag = d->tag };

	if (d->peers[peer].answerer.sa.sa_family)
		send_one(d, d->fd, &o, sizeof(o), &d->peers[peer].answerer,
			 d->alen);
}

uint64_t bipfw_dgram_answered_at(void *ctx, int peer)
{
	return ((struct bipfw_dgram *)ctx)->peers[peer].answered_at;
}

int bipfw_dgram_wait_fd(void *ctx)
{
	struct bipfw_dgram *d = ctx;

	return d->rx.start < d->rx.n ? -BIP_EAGAIN : d->fd;
}

void bipfw_dgram_wait(void *ctx, unsigned timeout_us)
{
	int fd = bipfw_dgram_wait_fd(ctx);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec ts = { timeout_us / 1000000,
			       (long)(timeout_us % 1000000) * 1000 };

	if (fd >= 0)
		(void)ppoll(&pfd, 1, &ts, NULL);
}
