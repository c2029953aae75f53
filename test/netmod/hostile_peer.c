/*
 * hostile_peer.c - preloaded (LD_PRELOAD) into one rank of an MPI job, it
 * makes that rank a hostile peer: the first time the netmod hands BIP a
 * control message for another node, it first sends that node a batch of
 * well-formed BIP small messages whose control headers lie - sizes beyond
 * any buffer, offsets that wrap, request handles that name nothing (or a
 * pointer of this process), credits the receiver never gave, handlers that
 * do not exist, unknown types, lengths that disagree with the type, eager
 * pieces that belong to no message, pushes and their answers that name no
 * transfer. The
 * receiver must drop and count each one, and go on working.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bip.h"
#include "bip_ctl.h"

typedef int (*sendv_fn)(bip_ep_t *, int, const struct iovec *, int);

static int injected;

static void send_raw(sendv_fn real, bip_ep_t *ep, int node, const void *msg,
		     size_t len)
{
	struct iovec iov = { (void *)msg, len };

	while (real(ep, node, &iov, 1) == -BIP_EAGAIN)
		bip_poll(ep);
}

static void inject(sendv_fn real, bip_ep_t *ep, int node)
{
	const uint64_t bogus[] = { 0x4141414141414141ull,
				   (uint64_t)(uintptr_t)&injected, 0, ~0ull };
	char bytes[64] = { 0 };
	int n = 0;

	for (unsigned k = 0; k < sizeof(bogus) / sizeof(bogus[0]); k++) {
		MPIDI_BIP_ctl_ack_t ack = {
			.h.type = MPIDI_BIP_CTL_ACK,
			.sreq = bogus[k],
			.offset = ~0ull - 8,
			.len = 64,
		};
		MPIDI_BIP_ctl_rts_t rts = {
			.h.type = k % 2 ? MPIDI_BIP_CTL_RNDV
					: MPIDI_BIP_CTL_RTS3,
			.h.tag = 12345,
			.data_sz = ~0ull - k,
			.sreq = bogus[k],
		};

		send_raw(real, ep, node, &ack, sizeof(ack));
		ack.h.type = MPIDI_BIP_CTL_AM_CTS;
		ack.offset = 0;
		send_raw(real, ep, node, &ack, sizeof(ack));
		send_raw(real, ep, node, &rts, sizeof(rts));
		n += 3;
	}
	{
		MPIDI_BIP_ctl_am_t am = {
			.h.type = MPIDI_BIP_CTL_AM,
			.handler_id = 250,
		};
		MPIDI_BIP_ctl_t h = { .type = MPIDI_BIP_CTL_CREDITS,
				      .credits = 200 };

		send_raw(real, ep, node, &am, sizeof(am));
		am.handler_id = 0;
		am.am_hdr_sz = 1000; /* more than follows */
		send_raw(real, ep, node, &am, sizeof(am));
		am.h.type = MPIDI_BIP_CTL_AM_RTS;
		am.am_hdr_sz = 0;
		am.data_sz = ~0ull;
		send_raw(real, ep, node, &am, sizeof(am));
		send_raw(real, ep, node, &h, sizeof(h));
		h = (MPIDI_BIP_ctl_t){ .type = MPIDI_BIP_CTL_SHORT, .len = 40 };
		send_raw(real, ep, node, &h, sizeof(h)); /* no data follows */
		/* SHORTs the receiver's fast path checks: credits never
		 * given, a negative rank. */
		h = (MPIDI_BIP_ctl_t){ .type = MPIDI_BIP_CTL_SHORT,
				       .credits = 200 };
		send_raw(real, ep, node, &h, sizeof(h));
		h = (MPIDI_BIP_ctl_t){ .type = MPIDI_BIP_CTL_SHORT, .rank = -5 };
		send_raw(real, ep, node, &h, sizeof(h));
		bytes[0] = (char)MPIDI_BIP_CTL_NTYPES;
		send_raw(real, ep, node, bytes, sizeof(bytes));
		bytes[0] = (char)MPIDI_BIP_CTL_RTS3;
		send_raw(real, ep, node, bytes, 3); /* shorter than a header */
		n += 9;
	}
	{
		/* Eager pieces: a size beyond the three-way limit, a first
		 * piece larger than its message, a piece of no message. */
		MPIDI_BIP_ctl_rts_t eager = { .h.type = MPIDI_BIP_CTL_EAGER,
					      .data_sz = ~0ull };
		MPIDI_BIP_ctl_t more = { .type = MPIDI_BIP_CTL_MORE, .len = 8 };

		memcpy(bytes, &eager, sizeof(eager));
		send_raw(real, ep, node, bytes, sizeof(eager));
		eager.h.len = 8;
		eager.data_sz = 4;
		memcpy(bytes, &eager, sizeof(eager));
		send_raw(real, ep, node, bytes, sizeof(eager) + 8);
		memcpy(bytes, &more, sizeof(more));
		send_raw(real, ep, node, bytes, sizeof(more) + 8);
		n += 3;
	}
	{
		/* A push for a send that is not there, for bytes beyond any
		 * message, to nowhere; the answer to a split never asked. */
		MPIDI_BIP_ctl_push_t push = { .h.type = MPIDI_BIP_CTL_PUSH,
					      .sreq = bogus[0], .len = 64,
					      .addr = bogus[1] };
		MPIDI_BIP_ctl_ack_t pushed = { .h.type = MPIDI_BIP_CTL_PUSHED,
					       .sreq = bogus[1], .len = 64 };

		send_raw(real, ep, node, &push, sizeof(push));
		push.offset = ~0ull - 8;
		send_raw(real, ep, node, &push, sizeof(push));
		push.offset = 0;
		push.addr = 0;
		send_raw(real, ep, node, &push, sizeof(push));
		send_raw(real, ep, node, &pushed, sizeof(pushed));
		n += 4;
	}
	fprintf(stderr, "hostile peer: sent %d forged control messages to "
			"node %d\n",
		n, node);
}

int bip_sendv_try(bip_ep_t *ep, int node, const struct iovec *iov,
		  int iovcnt)
{
	static sendv_fn real;

	if (!real)
		real = (sendv_fn)dlsym(RTLD_NEXT, "bip_sendv_try");
	/* Forged messages to ourselves would only test our own receiver. */
	if (!injected && node != bip_node(ep)) {
		injected = 1;
		inject(real, ep, node);
	}
	return real(ep, node, iov, iovcnt);
}
