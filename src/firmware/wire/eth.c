/*
 * wire/eth.c - the eth wire: raw Ethernet frames of BIP's EtherType on the
 * interface BIP_ETH_IFACE names, to hosts on the same Ethernet segment, as
 * GAMMA went: no IP or UDP below the NIC program, which checksums,
 * acknowledges and resends itself (batches and liveness answers are the
 * network wires' own, dgram.c). Frames carry at most the MTU; there is no
 * segmentation offload for packet sockets, so each packet is a frame.
 *
 * A packet socket needs CAP_NET_RAW. Without it, or with BIP_ETH_IFACE=off
 * (the default), the wire does not open and udp carries the other hosts;
 * BIP_WIRE=eth makes that an error. Every process of a host sees every
 * frame of the EtherType there: the outer header names the destination
 * node, and frames for another process are skipped uncounted.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/ethernet.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bip_errno.h"
#include "bip_field.h"
#include "knob.h"
#include "log.h"
#include "wire/dgram.h"
#include "wire/eth.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

struct eth_knobs {
	char iface[64];
};

static const struct bip_knob_def knobs[] = {
	{ { "BIP_ETH_IFACE", "off, interface, subnet or auto", "off",
	    "The network interface of the eth wire (raw Ethernet frames to "
	    "hosts on the same segment; needs CAP_NET_RAW): a name (eth0), "
	    "a subnet its IPv4 address is in, or auto (the first that is "
	    "up, not loopback). off: the eth wire is not used and udp "
	    "carries the other hosts." },
	  BIP_KNOB_TEXT, 0, 64, NULL, BIP_KNOB_CHARS(struct eth_knobs, iface) },
};

static const struct bip_knob_table eth_knobs = BIP_KNOB_TABLE(knobs);

struct eth {
	struct bipfw_dgram d; /* first: the class's ctx is both */
	struct eth_knobs k;
	int ifindex;
	uint8_t mac[ETH_ALEN];
};

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
		if (errno == EPERM || errno == EACCES) {
			bip_info("eth wire: packet sockets need CAP_NET_RAW "
				 "(udp carries the other hosts)");
			return -BIP_EWIRE;
		}
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

static int eth_open(const struct bipfw_wire_params *p, void **ctx_p)
{
	struct eth *e = calloc(1, sizeof(*e));
	struct sockaddr_in addr;
	int rc;

	if (!e)
		return -BIP_ENOMEM;
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
				       false, &addr);
	if (!rc)
		rc = iface_ids(e);
	if (!rc)
		rc = e->d.fd = packet_socket(e, BIP_ETHERTYPE, SOCK_NONBLOCK);
	if (rc >= 0)
		rc = e->d.afd = packet_socket(e, BIP_ETHERTYPE_LIVE, 0);
	if (rc >= 0) {
		bipfw_dgram_sockbuf(e->d.fd, 4u << 20);
		rc = bipfw_dgram_start(&e->d, e->d.mtu - BIPFW_DGRAM_OUTER -
						      BIPFW_DGRAM_HDR);
	}
	if (rc < 0) {
		bipfw_dgram_close(e);
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
	void *ctx;
	int rc = bipfw_dgram_probe_open(eth_open, packet_size, &ctx);
	struct eth *e = ctx;
	char card[64];

	if (rc == -BIP_EWIRE) {
		snprintf(state, len, "not used: BIP_ETH_IFACE is off, or no "
			 "CAP_NET_RAW (BIP_LOG=info says which)");
		return rc;
	}
	if (rc) {
		snprintf(state, len, "cannot open (%s)", bip_strerror(rc));
		return rc;
	}
	(void)eth_card(e, card, sizeof(card));
	bipfw_dgram_probe_done(e, card + 4, "BIP_ETH_IFACE", state, len);
	return 0;
}

const struct bipfw_wire_class bipfw_eth_class = {
	.name = "eth",
	.knobs = &eth_knobs,
	.open = eth_open,
	.card = eth_card,
	.connect = eth_connect,
	.probe = eth_probe,
	BIPFW_DGRAM_OPS,
};
