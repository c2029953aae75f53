/*
 * wire/udp.c - the udp wire: one datagram socket per process, on the
 * interface BIP_UDP_IFACE names, reaching any host; batches, runs and
 * liveness answers as every network wire has them (dgram.c). The wire is
 * lossy: the NIC program checksums, acknowledges and resends.
 *
 * Every packet fits the interface's MTU: the NIC program cuts long data and
 * small messages wider than that into pieces, which a run carries through
 * the kernel at the cost of one datagram, where IP fragments would each
 * pay the whole path.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip_errno.h"
#include "bip_field.h"
#include "knob.h"
#include "log.h"
#include "wire/dgram.h"
#include "wire/udp.h"

#define IPV4_UDP_HDRS 28 /* IPv4 and UDP headers */
#define DGRAM_MAX 65507  /* largest UDP payload over IPv4 */

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

struct udp {
	struct bipfw_dgram d; /* first: the class's ctx is both */
	struct udp_knobs k;
	struct sockaddr_in self;
	uint16_t aport; /* the answerer's port */
};

static int open_socket(struct udp *u)
{
	/* A path narrower than our interface still delivers, fragmented. */
	int pmtu = IP_PMTUDISC_DONT;
	socklen_t len = sizeof(u->self);

	u->d.fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->d.fd < 0) {
		bip_err("udp wire: socket: %s", strerror(errno));
		return -BIP_ESYS;
	}
	bipfw_dgram_sockbuf(u->d.fd, u->k.sockbuf);
	(void)setsockopt(u->d.fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
			 sizeof(pmtu));
	/* A closed port on a live host answers ICMP "port unreachable": the
	 * peer's process is gone, known well before its silence says so. */
	u->d.recverr = setsockopt(u->d.fd, IPPROTO_IP, IP_RECVERR, &(int){ 1 },
				  sizeof(int)) == 0;
	/* Without GRO a segmented run is cut up again before our socket. */
	u->d.gso = u->k.gso &&
		   setsockopt(u->d.fd, IPPROTO_UDP, UDP_GRO, &(int){ 1 },
			      sizeof(int)) == 0;
	u->self.sin_port = htons((uint16_t)u->k.port);
	if (bind(u->d.fd, (struct sockaddr *)&u->self, sizeof(u->self)) < 0 ||
	    getsockname(u->d.fd, (struct sockaddr *)&u->self, &len) < 0) {
		bip_err("udp wire: cannot bind to %s port %u: %s", u->d.ifname,
			u->k.port, strerror(errno));
		return -BIP_ESYS;
	}
	return 0;
}

/* The answerer's socket: on our address, any port (it goes in the card). */
static int open_answerer(struct udp *u)
{
	struct sockaddr_in a = u->self;
	socklen_t len = sizeof(a);

	u->d.afd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	a.sin_port = 0;
	if (u->d.afd < 0 || bind(u->d.afd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(u->d.afd, (struct sockaddr *)&a, &len) < 0) {
		bip_err("udp wire: liveness socket: %s", strerror(errno));
		return -BIP_ESYS;
	}
	u->aport = ntohs(a.sin_port);
	return 0;
}

static int udp_open(const struct bipfw_wire_params *p, void **ctx_p)
{
	struct udp *u = calloc(1, sizeof(*u));
	size_t payload;
	int rc;

	if (!u)
		return -BIP_ENOMEM;
	bipfw_dgram_init(&u->d, "udp", p);
	u->d.alen = sizeof(struct sockaddr_in);
	rc = bip_knob_table_load(&udp_knobs, &u->k);
	if (!rc)
		rc = bipfw_dgram_iface(&u->d, "BIP_UDP_IFACE", u->k.iface, true,
				       &u->self);
	if (!rc)
		rc = open_socket(u);
	if (!rc)
		rc = bipfw_dgram_mtu(&u->d);
	if (!rc)
		rc = open_answerer(u);
	if (rc)
		goto fail;
	u->d.batch = u->k.batch;
	/* A packet fills one unfragmented datagram at most. */
	payload = u->d.mtu - IPV4_UDP_HDRS - BIPFW_DGRAM_OUTER - BIPFW_DGRAM_HDR;
	if (payload > DGRAM_MAX - BIPFW_DGRAM_OUTER - BIPFW_DGRAM_HDR)
		payload = DGRAM_MAX - BIPFW_DGRAM_OUTER - BIPFW_DGRAM_HDR;
	rc = bipfw_dgram_start(&u->d, payload);
	if (rc)
		goto fail;
	bip_dbg("udp wire on %s %s:%u, MTU %u", u->d.ifname,
		inet_ntoa(u->self.sin_addr), ntohs(u->self.sin_port), u->d.mtu);
	*ctx_p = u;
	return 0;
fail:
	bipfw_dgram_close(u);
	return rc;
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
	struct bipfw_dgram_peer *pp = &u->d.peers[peer];
	char addr[INET_ADDRSTRLEN];
	const char *p = card;
	uint64_t port, aport;
	struct in_addr in;

	if (!bip_field_lit(&p, ',', "udp") ||
	    !bip_field_str(&p, ',', "0123456789.", addr, sizeof(addr)) ||
	    !bip_field_uint(&p, ',', 10, 65535, &port) || !port ||
	    !bip_field_uint(&p, '\0', 10, 65535, &aport) || !aport || *p ||
	    inet_pton(AF_INET, addr, &in) != 1)
		return -BIP_ECARD;
	pp->addr.in = (struct sockaddr_in){ .sin_family = AF_INET,
					    .sin_port = htons((uint16_t)port),
					    .sin_addr = in };
	pp->answerer.in = pp->addr.in;
	pp->answerer.in.sin_port = htons((uint16_t)aport);
	return 0;
}

static int udp_probe(size_t packet_size, char *state, size_t len)
{
	void *ctx;
	int rc = bipfw_dgram_probe_open(udp_open, packet_size, NULL, &ctx);
	struct udp *u = ctx;

	if (rc) {
		snprintf(state, len, "cannot open a socket (%s)",
			 bip_strerror(rc));
		return rc;
	}
	bipfw_dgram_probe_done(u, inet_ntoa(u->self.sin_addr), "BIP_UDP_IFACE",
			       state, len);
	bipfw_dgram_close(u);
	return 0;
}

const struct bipfw_wire_class bipfw_udp_class = {
	.name = "udp",
	.knobs = &udp_knobs,
	.open = udp_open,
	.card = udp_card,
	.connect = udp_connect,
	.probe = udp_probe,
	BIPFW_DGRAM_OPS(BIPFW_WIRE_BULK),
	BIPFW_DGRAM_RX_OPS,
};
