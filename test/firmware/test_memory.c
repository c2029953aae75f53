/*
 * test_memory.c - the memory of one NIC that talks to 1,000 peers, by its
 * resident set: the peers are two-node NICs on a simulated fan wire
 * (simwire_new_fan), made first so that their memory is in the baseline;
 * then the hub, with the default settings of a lossy wire, is measured
 * connected to all of them but idle (per-peer state comes with the first
 * packet), then after a small message each way and a 64 KiB long message
 * with every peer. What the process grew by is what the hub costs (an
 * upper bound: the peers and the wire grow too). Target: <= 64 MiB for
 * 1,000 peers. Idle, before and after, its transmit side looks at no
 * peer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nic.h"
#include "simwire.h"
#include "unit.h"

#define PEERS 1000
#define LONG_LEN (64u << 10)
#define TARGET_MIB 64

/* ASan's redzones and quarantine swell the resident set (about 1.5x
 * here): the target is checked in the plain build only. */
#define RSS_TARGET 1
#if defined(__SANITIZE_ADDRESS__) /* gcc */
#undef RSS_TARGET
#define RSS_TARGET 0
#elif defined(__has_feature) /* clang */
#if __has_feature(address_sanitizer)
#undef RSS_TARGET
#define RSS_TARGET 0
#endif
#endif

static size_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, rss = 0;

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (size_t)sysconf(_SC_PAGESIZE);
}

/* The hub: BIP's defaults for a lossy wire. */
static struct bipfw_config hub_config(void)
{
	return (struct bipfw_config){
		.node = 0, .nnodes = PEERS + 1, .job_key = 0xb1b0cafe,
		.packet_size = 32u << 10, .small_queue = 256,
		.send_slots = 64, .long_tags = 64, .window = 128,
		.ack_every = 16, .ack_delay_us = 50, .retrans_us = 200000,
		.retrans_min_us = 1000, .nack_backoff_us = 20,
		.liveness_ms = 100, .peer_timeout_ms = 60000,
	};
}

/* A peer: as small as a NIC goes. */
static struct bipfw_config leaf_config(void)
{
	struct bipfw_config c = hub_config();

	c.node = 1;
	c.nnodes = 2;
	c.small_queue = 4;
	c.send_slots = 4;
	c.long_tags = 1;
	c.window = 16;
	return c;
}

struct leaf {
	struct bipfw *fw;
	uint32_t rgen;
	bool got_small, got_long;
};

static struct leaf leaves[PEERS + 1];
static uint8_t lbuf[LONG_LEN], src[LONG_LEN];

static void step_all(struct bipfw *hub)
{
	bipfw_step(hub);
	for (int k = 1; k <= PEERS; k++)
		bipfw_step(leaves[k].fw);
}

/* A leaf takes its small message and its long one. */
static void leaf_poll(int k)
{
	struct leaf *l = &leaves[k];
	const void *data;
	size_t len;
	int node, rc;

	while (bipfw_small_peek(l->fw, &data, &len, &node) == 0) {
		CHECK(len == sizeof(k) && memcmp(data, &k, sizeof(k)) == 0,
		      "peer %d: small message of %zu bytes", k, len);
		l->got_small = true;
		bipfw_small_pop(l->fw);
	}
	if (!l->got_long) {
		rc = bipfw_reap_lrecv(l->fw, 0, l->rgen, &node, &len);
		CHECK(rc >= 0, "peer %d: long receive failed (%d)", k, rc);
		if (rc == 1) {
			CHECK(len == LONG_LEN, "peer %d: %zu bytes", k, len);
			l->got_long = true;
		}
	}
}

int main(void)
{
	static const struct simwire_faults f = { .capacity = 4096 };
	struct simwire_net *net = simwire_new_fan(PEERS + 1, 3, &f);
	struct bipfw_config hc = hub_config(), lc = leaf_config();
	int slot[PEERS + 1], next = 1, done = 0, got = 0, sent_small = 0;
	uint32_t sgen[PEERS + 1];
	struct bipfw *hub;
	size_t before, idle, after, per_peer, estimate;

	for (int k = 1; k <= PEERS; k++) {
		CHECK(simwire_nic(net, k, &lc, SIZE_MAX, &leaves[k].fw) == 0,
		      "peer %d", k);
		CHECK(bipfw_post_lrecv(leaves[k].fw, 0, lbuf, LONG_LEN,
				       &leaves[k].rgen) == 0,
		      "peer %d: long receive", k);
	}
	for (size_t i = 0; i < LONG_LEN; i++)
		src[i] = (uint8_t)(i * 7);
	before = rss_bytes();
	CHECK(simwire_nic(net, 0, &hc, SIZE_MAX, &hub) == 0, "hub");
	for (int s = 0; s < 10; s++)
		step_all(hub);
	idle = rss_bytes();
	/* Connected and idle, it owes nobody: a step looks at no peer. */
	CHECK(hub->tx_n == 0, "%u idle peers on the transmit list", hub->tx_n);

	/* Every peer sends the hub a small message; the hub sends each a
	 * small and a long one, as many at once as its send slots take. */
	for (int k = 1; k <= PEERS; k++) {
		struct iovec iov = { &k, sizeof(k) };

		CHECK(bipfw_post_small(leaves[k].fw, 0, &iov, 1) >= 0,
		      "peer %d: small send", k);
		slot[k] = -1;
	}
	for (uint64_t t0 = bipfw_now_us(); done < PEERS || got < PEERS ||
	     sent_small < PEERS;) {
		const void *data;
		size_t len;
		int node;

		CHECK(bipfw_now_us() - t0 < 60000000, "stuck: %d long sent, "
		      "%d small received", done, got);
		if (bipfw_now_us() - t0 >= 60000000)
			break;
		while (sent_small < PEERS) {
			int k = sent_small + 1;
			struct iovec iov = { &k, sizeof(k) };

			if (bipfw_post_small(hub, k, &iov, 1) < 0)
				break;
			sent_small++;
		}
		while (next <= PEERS) {
			int s = bipfw_post_long(hub, next, 0, src, LONG_LEN, 0,
						&sgen[next]);

			if (s < 0)
				break;
			slot[next++] = s;
		}
		step_all(hub);
		while (bipfw_small_peek(hub, &data, &len, &node) == 0) {
			CHECK(len == sizeof(int) &&
				      memcmp(data, &node, sizeof(node)) == 0,
			      "small message from peer %d", node);
			got++;
			bipfw_small_pop(hub);
		}
		for (int k = 1; k < next; k++) {
			if (slot[k] < 0)
				continue;
			if (bipfw_reap_send(hub, (unsigned)slot[k], sgen[k])) {
				slot[k] = -1;
				done++;
			}
		}
		for (int k = 1; k <= PEERS; k++)
			leaf_poll(k);
	}
	for (int k = 1; k <= PEERS; k++) {
		for (int s = 0; s < 1000 && (!leaves[k].got_small ||
					     !leaves[k].got_long); s++) {
			step_all(hub);
			leaf_poll(k);
		}
		CHECK(leaves[k].got_small && leaves[k].got_long,
		      "peer %d: small %d long %d", k, leaves[k].got_small,
		      leaves[k].got_long);
	}
	/* Once every ack is out, nobody is owed anything: the transmit list
	 * is empty again, and an idle step costs what it costs with one
	 * peer. */
	for (uint64_t t0 = bipfw_now_us();
	     hub->tx_n && bipfw_now_us() - t0 < 5000000;)
		step_all(hub);
	CHECK(hub->tx_n == 0, "%u of %d peers still on the transmit list "
	      "after the traffic", hub->tx_n, PEERS);
	after = rss_bytes();
	printf("one NIC connected to %d idle peers: resident set grew by "
	       "%.1f MiB\n", PEERS, (idle - before) / 1048576.0);
	printf("one NIC talking to %d peers: resident set grew by %.1f MiB "
	       "(%.1f KiB per peer; target %d MiB)\n",
	       PEERS, (after - before) / 1048576.0,
	       (after - before) / 1024.0 / PEERS, TARGET_MIB);
	/* What bip_info prints: an upper bound of the hub alone. */
	estimate = bipfw_memory(&hc, &per_peer) + PEERS * per_peer;
	printf("bipfw_memory's figure for it: %.1f MiB\n",
	       estimate / 1048576.0);
	CHECK(estimate <= (size_t)TARGET_MIB << 20, "estimate %.1f MiB",
	      estimate / 1048576.0);
	if (RSS_TARGET) {
		CHECK(after - before <= (size_t)TARGET_MIB << 20,
		      "%.1f MiB for %d peers", (after - before) / 1048576.0,
		      PEERS);
		/* The growth counts the peers and the wire too. */
		CHECK(after - before <= 2 * estimate,
		      "bipfw_memory says %.1f MiB, the hub grew by %.1f MiB",
		      estimate / 1048576.0, (after - before) / 1048576.0);
	} else
		printf("target not checked: the resident set of an "
		       "AddressSanitizer build is not the program's\n");
	bipfw_destroy(hub);
	for (int k = 1; k <= PEERS; k++)
		bipfw_destroy(leaves[k].fw);
	simwire_free(net);
	return unit_result("memory of a NIC with 1000 peers");
}
