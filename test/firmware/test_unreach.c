/*
 * test_unreach.c - the udp wire toward a peer there is no route to: every
 * send fails at once (ENETUNREACH, the same error each time), the wire
 * drops those packets - the NIC program's timers deal with the peer - and
 * a flush returns instead of retrying for ever. Runs in a network
 * namespace of its own with loopback alone (root), else skips.
 */
#define _GNU_SOURCE
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bip_errno.h"
#include "unit.h"
#include "wire/udp.h"

#define PACKETS 100
#define LEN 100

/* A namespace whose only route is loopback's. */
static int private_net(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd, rc = -1;

	if (unshare(CLONE_NEWNET) < 0)
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

int main(void)
{
	struct bipfw_counters cnt = { 0 };
	struct bipfw_wire_params p = {
		.node = 0, .nnodes = 2, .host = 0, .nhosts = 2,
		.local_nodes = 1, .job_key = 1, .secret = 2,
		.packet_size = BIP_SMALL_MAX, .cnt = &cnt,
	};
	const struct bipfw_wire_class *udp = &bipfw_udp_class;
	void *ctx;
	int sent = 0;

	if (private_net() < 0) {
		printf("SKIP: no network namespace of our own (needs root)\n");
		return 77;
	}
	/* A hang is the failure this test looks for. */
	alarm(20);
	CHECK(udp->open(&p, &ctx) == 0, "udp wire on loopback");
	CHECK(udp->connect(ctx, 1, "udp,192.0.2.1,7777,7778") == 0,
	      "a peer on TEST-NET-1");
	for (int i = 0; i < PACKETS; i++) {
		struct bip_pkt_hdr *h = udp->reserve(ctx, 1, LEN);

		if (!h)
			break;
		memset(h, 0, sizeof(*h) + LEN);
		udp->commit(ctx, 1, h, LEN);
		sent++;
	}
	CHECK(sent == PACKETS, "%d of %d packets queued", sent, PACKETS);
	udp->flush(ctx);
	CHECK(udp->reserve(ctx, 1, LEN) != NULL,
	      "the batch was not emptied by the flush");
	udp->close(ctx);
	return unit_result("udp toward a peer without a route");
}
