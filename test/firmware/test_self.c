/*
 * test_self.c - the self wire (src/firmware/wire/self.c) under the NIC
 * program: a node of a two-node job reaches itself by its own card and no
 * other; small messages to itself arrive whole and in order, many more
 * than its ring holds; long ones by RTS/CTS land in the posted buffer by
 * DMA, by ready mode in packets, truncated when the buffer is short; and
 * while nothing of its own is due it counts itself as no peer that could
 * still send. Small messages written straight into its link take no
 * sequence number and owe no ack.
 */
#include <stdlib.h>
#include <string.h>

#include "nic.h"
#include "unit.h"
#include "wire/self.h"

#define SMALLS 200 /* many times the ring's slots */
#define LONG_LEN (1u << 20)

static struct bipfw_config config(void)
{
	return (struct bipfw_config){
		.node = 1, .nnodes = 2, .job_key = 0xb1b0cafe,
		.packet_size = 32u << 10, .small_queue = 256,
		.send_slots = 64, .long_tags = 4, .window = 64,
		.ack_every = 16, .ack_delay_us = 50, .retrans_us = 200000,
		.retrans_min_us = 1000, .nack_backoff_us = 20,
		.liveness_ms = 100, .peer_timeout_ms = 60000,
	};
}

static struct bipfw *self_nic(void)
{
	struct bipfw_config c = config();
	struct bipfw_wire_params p = { .node = c.node, .nnodes = c.nnodes,
				       .packet_size = c.packet_size };
	struct bipfw *fw;
	void *ctx;

	if (bipfw_create(&c, &fw) || bipfw_self_class.open(&p, &ctx))
		abort();
	if (bipfw_wire_add(fw, &bipfw_self_class, ctx) < 0)
		abort();
	return fw;
}

static void test_connect(void)
{
	struct bipfw *fw = self_nic();
	const char *name, *why = NULL;
	char card[64];

	CHECK(bipfw_cards(fw, card, sizeof(card)) == 0 &&
		      !strcmp(card, "self,1"),
	      "card \"%s\"", card);
	CHECK(bipfw_connect(fw, 0, "self,0", true) == -BIP_EWIRE,
	      "another node's self card reaches it");
	CHECK(bipfw_connect(fw, 1, "self,0", true) == -BIP_EWIRE,
	      "our node by another node's card");
	CHECK(bipfw_connect(fw, 1, "self,x", true) == -BIP_ECARD,
	      "malformed card taken");
	CHECK(bipfw_connect(fw, 1, "self,1,2", true) == -BIP_ECARD,
	      "card with a field too many taken");
	CHECK(bipfw_connect(fw, 1, "self,1", true) == 0, "own card refused");
	name = bipfw_port_name(fw, 1, &why);
	CHECK(name && !strcmp(name, "self") && why &&
		      !strcmp(why, "this process"),
	      "own wire %s (%s)", name ? name : "none", why ? why : "-");
	CHECK(bipfw_port_chunk(fw, 1) == BIP_SMALL_MAX, "chunk %zu",
	      bipfw_port_chunk(fw, 1));
	bipfw_destroy(fw);
}

static int post_small(struct bipfw *fw, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return bipfw_post_small(fw, 1, &iov, 1);
}

/* Step until cond, at most a million steps. */
#define STEP_UNTIL(fw, cond)                                                   \
	for (long n_ = 0; !(cond) && n_ < 1000000; n_++)                       \
		bipfw_step(fw)

static void test_small(void)
{
	struct bipfw *fw = self_nic();
	static uint8_t buf[BIP_SMALL_MAX];
	unsigned posted = 0, got = 0;
	int others;

	CHECK(bipfw_connect(fw, 1, "self,1", true) == 0, "connect");
	others = bipfw_live_peers(fw); /* node 0, never connected */
	/* More than the ring holds, posted as slots allow: the ring's
	 * back-pressure holds the rest until the receive side frees it. */
	for (long steps = 0; got < SMALLS && steps < 1000000; steps++) {
		const void *data;
		size_t len;
		int src;

		while (posted < SMALLS) {
			size_t n = posted * 37 % (BIP_SMALL_MAX + 1);

			memset(buf, (int)posted, n);
			if (post_small(fw, buf, n) < 0)
				break;
			if (posted++ == 0)
				CHECK(bipfw_live_peers(fw) == others + 1,
				      "a message to ourselves on its way, "
				      "but no sender counted");
		}
		bipfw_tx_kick(fw, 1, true);
		while (bipfw_small_peek(fw, &data, &len, &src) == 0) {
			size_t want = got * 37 % (BIP_SMALL_MAX + 1);
			const uint8_t *d = data;
			bool same = len == want && src == 1;

			for (size_t i = 0; same && i < len; i++)
				same = d[i] == (uint8_t)got;
			CHECK(same, "message %u: %zu bytes from %d, want %zu",
			      got, len, src, want);
			bipfw_small_pop(fw);
			got++;
		}
		bipfw_step(fw);
	}
	CHECK(got == SMALLS, "%u of %u messages arrived", got, SMALLS);
	STEP_UNTIL(fw, bipfw_sends_drained(fw));
	CHECK(bipfw_sends_drained(fw), "sends not completed");
	CHECK(bipfw_live_peers(fw) == others, "idle self counted as a sender");
	CHECK(fw->cnt.small_received == SMALLS && fw->cnt.dropped_bad == 0,
	      "%llu received, %llu dropped",
	      (unsigned long long)fw->cnt.small_received,
	      (unsigned long long)fw->cnt.dropped_bad);
	bipfw_destroy(fw);
}

/* Rule (lossless wires): small messages written straight into the link
 * are outside the sequence. They take no sequence number and owe no ack,
 * so the receiver has nothing to send back and no peer on its transmit
 * list. */
static void test_unsequenced(void)
{
	struct bipfw *fw = self_nic();
	const struct bipfw_peer *p = &fw->peers[1];
	uint8_t buf[100] = { 0 };
	unsigned got = 0;

	CHECK(bipfw_connect(fw, 1, "self,1", true) == 0, "connect");
	for (unsigned i = 0; i < 20; i++) {
		const void *data;
		size_t len;
		int src;

		buf[0] = (uint8_t)i;
		CHECK(post_small(fw, buf, i % 2 ? 8 : sizeof(buf)) == 1,
		      "message %u not written straight into the link", i);
		bipfw_step(fw);
		while (bipfw_small_peek(fw, &data, &len, &src) == 0) {
			CHECK(*(const uint8_t *)data == got &&
				      len == (got % 2 ? 8 : sizeof(buf)),
			      "message %u: %zu bytes, first %u", got, len,
			      *(const uint8_t *)data);
			bipfw_small_pop(fw);
			got++;
		}
	}
	bipfw_step(fw);
	CHECK(got == 20, "%u of 20 messages arrived", got);
	CHECK(p->tx.next == 0 && p->rx.expected == 0,
	      "sequence numbers taken: sent up to %u, expected %u", p->tx.next,
	      p->rx.expected);
	CHECK(fw->cnt.acks_sent == 0 && fw->tx_n == 0,
	      "%llu acks sent, %u peers on the transmit list",
	      (unsigned long long)fw->cnt.acks_sent, fw->tx_n);
	bipfw_destroy(fw);
}

/* A long message to ourselves; returns the receive's status. */
static int long_once(struct bipfw *fw, const uint8_t *src, uint8_t *dst,
		     size_t len, size_t cap, unsigned flags, size_t *got)
{
	uint32_t sg, rg;
	int slot, rs = 0, rr = 0, node = -1;

	CHECK(bipfw_post_lrecv(fw, 2, dst, cap, &rg) == 0, "post receive");
	slot = bipfw_post_long(fw, 1, 2, src, len, flags, &sg);
	CHECK(slot >= 0, "post send: %s", bip_strerror(slot));
	if (slot < 0)
		return slot;
	bipfw_tx_kick(fw, 1, true);
	for (long n = 0; (!rs || !rr) && n < 1000000; n++) {
		bipfw_step(fw);
		if (!rs)
			rs = bipfw_reap_send(fw, (unsigned)slot, sg);
		if (!rr)
			rr = bipfw_reap_lrecv(fw, 2, rg, &node, got);
	}
	CHECK(rs && rr, "send %d, receive %d never completed", rs, rr);
	CHECK(rr < 0 || node == 1, "from node %d", node);
	return rr;
}

static void test_long(void)
{
	struct bipfw *fw = self_nic();
	uint8_t *src = malloc(LONG_LEN), *dst = malloc(LONG_LEN + 64);
	size_t got = 0;
	uint64_t dma;

	CHECK(bipfw_connect(fw, 1, "self,1", true) == 0, "connect");
	for (size_t i = 0; i < LONG_LEN; i++)
		src[i] = (uint8_t)(i * 7 + (i >> 12));
	memset(dst, 0xee, LONG_LEN + 64);
	dma = fw->cnt.cma_transfers;
	CHECK(long_once(fw, src, dst, LONG_LEN, LONG_LEN, 0, &got) == 1 &&
		      got == LONG_LEN && !memcmp(src, dst, LONG_LEN),
	      "RTS/CTS: %zu bytes", got);
	CHECK(fw->cnt.cma_transfers == dma + 1, "not by DMA");
	/* Ready mode: no CTS names the buffer; the receiver reads the
	 * sender's (its own process's memory) in one copy. */
	memset(dst, 0xee, LONG_LEN + 64);
	CHECK(long_once(fw, src, dst, 100000, LONG_LEN, BIPFW_LONG_READY,
			&got) == 1 &&
		      got == 100000 && !memcmp(src, dst, 100000) &&
		      dst[100000] == 0xee,
	      "ready mode: %zu bytes", got);
	CHECK(fw->cnt.cma_transfers == dma + 2, "ready mode not read at once");
	/* Truncated: nothing written by RTS/CTS; in ready mode the buffer's
	 * cap, not a byte past it. */
	memset(dst, 0xee, LONG_LEN + 64);
	CHECK(long_once(fw, src, dst, 5000, 4000, 0, &got) == -BIP_ETRUNC,
	      "truncation not reported");
	CHECK(dst[0] == 0xee && dst[3999] == 0xee && dst[4000] == 0xee,
	      "a truncated message wrote the buffer");
	CHECK(long_once(fw, src, dst, 50000, 40000, BIPFW_LONG_READY, &got) ==
		      -BIP_ETRUNC,
	      "ready-mode truncation not reported");
	CHECK(!memcmp(src, dst, 40000) && dst[40000] == 0xee,
	      "ready-mode truncated data wrong or past the buffer");
	free(src);
	free(dst);
	bipfw_destroy(fw);
}

int main(void)
{
	test_connect();
	test_small();
	test_unsequenced();
	test_long();
	return unit_result("self wire");
}
