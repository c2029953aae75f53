/*
 * test_simwire.c - whole NIC programs talking over the simulated wire:
 * thousands of small and long messages of sizes around every threshold,
 * under seeded loss, duplication, reordering, corruption and foreign
 * traffic, checked for content, order and exactly-once delivery; plus the
 * packetizer's packet counts, truncation, queue overflow, the queue's
 * buffers reused, peer death, and the host interface's argument errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nic.h"
#include "simwire.h"
#include "unit.h"

#define NN 3
#define PKT BIP_SMALL_MAX
#define LONG_MAX_LEN (6 * PKT + 100)


/* A small send of one buffer. */
static int post_small(struct bipfw *fw, int peer, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return bipfw_post_small(fw, peer, &iov, 1);
}

static struct bipfw_config config(int node, unsigned small_queue)
{
	return (struct bipfw_config){
		.node = node, .nnodes = NN, .job_key = 0xb1b0cafe,
		.packet_size = PKT, .small_queue = small_queue,
		.send_slots = 16, .long_tags = 8, .window = 16,
		.ack_every = 4, .ack_delay_us = 20, .retrans_us = 300,
		.retrans_min_us = 100,
		.nack_backoff_us = 5, .liveness_ms = 1, .peer_timeout_ms = 60000,
	};
}

/* Sizes straddling every threshold: 0, packet and small-message limits. */
static size_t msg_size(int s, int d, unsigned k, bool is_long)
{
	static const size_t small[] = { 0, 1, BIP_PKT_INLINE_MAX_SEALED,
					BIP_PKT_INLINE_MAX_SEALED + 1,
					BIP_PKT_INLINE_MAX, 64,
					BIP_SMALL_MAX - 1, BIP_SMALL_MAX,
					BIP_PKT_INLINE_MAX + 1, 7 };
	static const size_t lng[] = { 0, 1, PKT - 1, PKT, PKT + 1,
				      2 * PKT - 1, 2 * PKT, 2 * PKT + 1,
				      LONG_MAX_LEN, 3 * PKT + 7 };
	unsigned h = (unsigned)(s * 7 + d * 13) + k * 2654435761u;

	return is_long ? lng[h % 10] : small[h % 10];
}

static uint8_t pattern(int s, int d, unsigned k, size_t i)
{
	return (uint8_t)(s * 31 + d * 17 + k * 13 + i * 7 + (i >> 8));
}

static bool is_long_msg(unsigned k)
{
	return k % 4 == 3;
}

struct pair {
	unsigned posted;  /* messages s->d posted */
	unsigned small_in, long_in; /* s->d messages received, by kind */
	unsigned next_in; /* index of the next message expected */
};

struct lsend {
	int slot;
	uint32_t gen;
	uint8_t *buf; /* ours to free once the send completed */
};

struct node {
	struct bipfw *fw;
	struct pair from[NN];           /* indexed by source */
	unsigned to_posted[NN];         /* messages to each dest */
	struct lsend inflight[64];
	int ninflight;
	uint8_t *lbuf[NN];              /* long receive buffer per source */
	uint32_t lgen[NN];
	bool lposted[NN];
	unsigned long_kidx[NN][512];    /* k of long messages, by arrival */
	unsigned nlong_k[NN], long_k_done[NN];
	uint8_t sbuf[LONG_MAX_LEN];
};

static void check_small(struct node *me, int d, int s, const uint8_t *data,
			size_t len)
{
	struct pair *p = &me->from[s];
	unsigned k = p->next_in;

	while (is_long_msg(k))
		k++;
	CHECK(len == msg_size(s, d, k, false),
	      "small %d->%d #%u: len %zu, expected %zu", s, d, k, len,
	      msg_size(s, d, k, false));
	for (size_t i = 0; i < len && i < msg_size(s, d, k, false); i++)
		if (data[i] != pattern(s, d, k, i)) {
			CHECK(0, "small %d->%d #%u: byte %zu differs", s, d, k,
			      i);
			break;
		}
	p->next_in = k + 1;
	p->small_in++;
}

static void post_sends(struct node *nodes, int s, unsigned m)
{
	struct node *me = &nodes[s];

	for (int d = 0; d < NN; d++) {
		unsigned k = me->to_posted[d];
		size_t len;
		int rc;

		if (d == s || k >= m)
			continue;
		len = msg_size(s, d, k, is_long_msg(k));
		for (size_t i = 0; i < len; i++)
			me->sbuf[i] = pattern(s, d, k, i);
		if (!is_long_msg(k)) {
			rc = post_small(me->fw, d, me->sbuf, len);
		} else {
			/* Long data is read at send time: keep a copy alive. */
			uint8_t *copy;
			uint32_t gen;

			if (me->ninflight == 64)
				continue;
			copy = malloc(len ? len : 1);
			memcpy(copy, me->sbuf, len);
			rc = bipfw_post_long(me->fw, d, (uint32_t)s, copy, len,
					     0, &gen);
			if (rc >= 0) {
				me->inflight[me->ninflight++] =
					(struct lsend){ rc, gen, copy };
				rc = 0;
			}
			if (rc)
				free(copy);
			else
				nodes[d].long_kidx[s][nodes[d].nlong_k[s]++] = k;
		}
		if (rc == -BIP_EAGAIN)
			continue;
		CHECK(rc == 0, "post %d->%d #%u: %s", s, d, k,
		      bip_strerror(rc));
		me->to_posted[d]++;
	}
}

static void reap_sends(struct node *me)
{
	for (int i = 0; i < me->ninflight; i++) {
		int rc = bipfw_reap_send(me->fw, (unsigned)me->inflight[i].slot,
					 me->inflight[i].gen);

		if (!rc)
			continue;
		CHECK(rc == 1, "long send completed with %s",
		      bip_strerror(rc));
		free(me->inflight[i].buf);
		me->inflight[i--] = me->inflight[--me->ninflight];
	}
}

static void receive(struct node *nodes, int d, bool slow, uint64_t rnd)
{
	struct node *me = &nodes[d];
	const void *data;
	size_t len;
	int src;

	while ((!slow || rnd % 8 == 0) &&
	       bipfw_small_peek(me->fw, &data, &len, &src) == 0) {
		check_small(me, d, src, data, len);
		bipfw_small_pop(me->fw);
		rnd /= 8;
	}
	for (int s = 0; s < NN; s++) {
		size_t got;
		int node, rc;
		unsigned k;

		if (s == d)
			continue;
		if (!me->lposted[s]) {
			rc = bipfw_post_lrecv(me->fw, (uint32_t)s, me->lbuf[s],
					      LONG_MAX_LEN, &me->lgen[s]);
			CHECK(rc == 0, "post lrecv: %s", bip_strerror(rc));
			me->lposted[s] = true;
		}
		rc = bipfw_reap_lrecv(me->fw, (uint32_t)s, me->lgen[s], &node,
				      &got);
		if (!rc)
			continue;
		me->lposted[s] = false;
		CHECK(rc == 1, "long receive failed: %s", bip_strerror(rc));
		k = me->long_kidx[s][me->long_k_done[s]++];
		CHECK(node == s, "long from %d, expected %d", node, s);
		CHECK(got == msg_size(s, d, k, true),
		      "long %d->%d #%u: %zu bytes, expected %zu", s, d, k, got,
		      msg_size(s, d, k, true));
		for (size_t i = 0; i < got; i++)
			if (me->lbuf[s][i] != pattern(s, d, k, i)) {
				CHECK(0, "long %d->%d #%u (%zu bytes): byte %zu differs", s,
				      d, k, got, i);
				break;
			}
		me->from[s].long_in++;
	}
}

struct scenario {
	const char *name;
	struct simwire_faults f;
	bool dma, slow;
	unsigned small_queue;
	bool near_wrap; /* sequence numbers start just below 2^32 */
	bool bulk;      /* a second wire, as lossy, carries wide messages */
};

/* Every pair starts its sequence numbers at seq, on both sides. */
static void start_sequences_at(struct node *nodes, uint32_t seq)
{
	for (int i = 0; i < NN; i++)
		for (int j = 0; j < NN; j++) {
			struct bipfw_peer *p = &nodes[i].fw->peers[j];

			p->tx.next = p->tx.una = p->tx.resend = seq;
			p->rx.expected = seq;
		}
}

/* The bulk wire: the same faults, packets half as wide again, so that
 * small messages wider than the first wire's go in pieces there too. */
static struct simwire_net *bulk_open(const struct scenario *sc, uint64_t seed,
				     struct node *nodes)
{
	struct simwire_faults f = sc->f;
	struct simwire_net *net;

	f.chunk = f.chunk * 3 / 2;
	net = simwire_new(NN, seed + 100, &f);
	for (int i = 0; i < NN; i++) {
		int w = simwire_attach(net, i, nodes[i].fw, PKT);

		for (int s = 0; s < NN; s++)
			if (s != i)
				CHECK(w == 1 && bipfw_bulk_set(nodes[i].fw, s,
							       (unsigned)w) == 0,
				      "bulk wire %d", w);
	}
	return net;
}

/* Wide messages took the bulk wire, the others the first one (a narrow
 * packet may ride a bulk run): no long data on the first wire. */
static void bulk_check(const struct scenario *sc, struct simwire_net *net,
		       struct simwire_net *bulk)
{
	CHECK(simwire_sent(net, BIP_PKT_LONG_DATA) == 0,
	      "%s: %llu long data packets on the first wire", sc->name,
	      (unsigned long long)simwire_sent(net, BIP_PKT_LONG_DATA));
	CHECK(simwire_sent(bulk, BIP_PKT_LONG_DATA) > 0 &&
		      simwire_sent(bulk, BIP_PKT_SMALL) > 0,
	      "%s: the bulk wire carried no long data or no wide small message",
	      sc->name);
	CHECK(simwire_sent(net, BIP_PKT_SMALL) > 0 &&
		      simwire_sent(net, BIP_PKT_LONG_RTS) > 0,
	      "%s: narrow messages did not take the first wire", sc->name);
	simwire_free(bulk);
}

static struct bipfw_counters run(const struct scenario *sc, uint64_t seed,
				 unsigned m)
{
	struct simwire_net *net = simwire_new(NN, seed, &sc->f), *bulk = NULL;
	struct node *nodes = calloc(NN, sizeof(*nodes));
	struct bipfw_counters sum = { 0 };
	unsigned long iter;
	bool done = false;

	for (int i = 0; i < NN; i++) {
		struct bipfw_config c = config(i, sc->small_queue);
		int rc = simwire_nic(net, i, &c, sc->dma ? 2 * PKT : SIZE_MAX,
				     &nodes[i].fw);

		CHECK(rc == 0, "create: %s", bip_strerror(rc));
		for (int s = 0; s < NN; s++)
			nodes[i].lbuf[s] = malloc(LONG_MAX_LEN);
	}
	if (sc->near_wrap)
		start_sequences_at(nodes, UINT32_MAX - 300);
	if (sc->bulk)
		bulk = bulk_open(sc, seed, nodes);
	for (iter = 0; iter < 3000000 && !done; iter++) {
		done = true;
		for (int i = 0; i < NN; i++) {
			post_sends(nodes, i, m);
			bipfw_step(nodes[i].fw);
			reap_sends(&nodes[i]);
			receive(nodes, i, sc->slow, simwire_rand(net));
			bipfw_take_error(nodes[i].fw);
		}
		for (int d = 0; d < NN; d++)
			for (int s = 0; s < NN; s++)
				if (s != d && (nodes[d].from[s].small_in +
						       nodes[d].from[s].long_in <
					       m ||
					       nodes[s].ninflight))
					done = false;
	}
	CHECK(done, "%s seed %llu: no completion after %lu steps", sc->name,
	      (unsigned long long)seed, iter);
	if (sc->dma) {
		uint64_t bad, keyed = simwire_keyed_writes(net, &bad);

		CHECK(keyed > 0 && !bad, "%s seed %llu: %llu DMA writes by "
		      "key, %llu with a bad one", sc->name,
		      (unsigned long long)seed, (unsigned long long)keyed,
		      (unsigned long long)bad);
	}
	for (int i = 0; i < NN; i++) {
		const struct bipfw_counters *c = bipfw_counters(nodes[i].fw);

		CHECK(!simwire_exposed(net, i), "%s seed %llu: node %d still "
		      "exposes %u receive buffers", sc->name,
		      (unsigned long long)seed, i, simwire_exposed(net, i));

#define ADD(name) sum.name += c->name;
		BIPFW_COUNTERS(ADD)
#undef ADD
		for (int s = 0; s < NN; s++)
			free(nodes[i].lbuf[s]);
		while (nodes[i].ninflight)
			free(nodes[i].inflight[--nodes[i].ninflight].buf);
		bipfw_destroy(nodes[i].fw);
	}
	free(nodes);
	if (bulk)
		bulk_check(sc, net, bulk);
	simwire_free(net);
	return sum;
}

static void test_traffic(void)
{
	static const struct scenario scs[] = {
		{ "clean", { 0 }, false, false, 64, false },
		{ "clean dma", { 0 }, true, false, 64, false },
		{ "loss", { .loss_pct = 5 }, false, false, 64, false },
		{ "dup+reorder", { .dup_pct = 5, .reorder_pct = 5 }, false,
		  false, 64, false },
		{ "corrupt+foreign", { .corrupt_pct = 3, .foreign_pct = 3 },
		  false, false, 64, false },
		{ "everything", { 8, 8, 8, 3, 2, 0, 0 }, true, false, 64, false },
		{ "slow consumer", { .loss_pct = 2 }, true, true, 4, false },
		{ "sequence wrap", { .loss_pct = 3, .dup_pct = 3 }, false,
		  false, 64, true },
		/* An MTU below the small-message limit: small messages in
		 * pieces, the last one refused by a full queue at times. */
		{ "pieces", { 5, 3, 5, 2, 0, 0, 1000 }, false, false, 64,
		  false },
		{ "pieces slow", { .loss_pct = 2, .chunk = 700 }, true, true,
		  4, false },
		{ "bulk", { .chunk = 1000 }, false, false, 64, false, true },
		{ "bulk faults", { 5, 3, 5, 2, 0, 0, 1000 }, false, false, 64,
		  false, true },
		/* Payloads up to 2.5 KiB by plain stores, wider by memcpy:
		 * both sides of the limit and of a piece arrive whole. */
		{ "plain", { .loss_pct = 2, .plain_max = 2560 }, false, false,
		  64, false },
	};

	for (size_t i = 0; i < sizeof(scs) / sizeof(scs[0]); i++) {
		const struct scenario *sc = &scs[i];

		for (uint64_t seed = 1; seed <= 3; seed++) {
			struct bipfw_counters c = run(sc, seed, 400);

			printf("%-16s seed %llu: %llu packets, %llu "
			       "retransmits, %llu dup, %llu bad, %llu foreign, "
			       "%llu overflows\n",
			       sc->name, (unsigned long long)seed,
			       (unsigned long long)c.packets_sent,
			       (unsigned long long)c.retransmits,
			       (unsigned long long)c.dropped_dup,
			       (unsigned long long)c.dropped_bad,
			       (unsigned long long)c.dropped_foreign,
			       (unsigned long long)c.small_overflows);
			CHECK(c.small_received == c.small_sent,
			      "%s: %llu small sent, %llu received", sc->name,
			      (unsigned long long)c.small_sent,
			      (unsigned long long)c.small_received);
			if (sc->f.loss_pct)
				CHECK(c.retransmits > 0, "%s: no retransmit",
				      sc->name);
			if (sc->f.dup_pct)
				CHECK(c.dropped_dup > 0, "%s: no duplicate",
				      sc->name);
			if (sc->f.corrupt_pct)
				CHECK(c.dropped_bad > 0, "%s: no corruption",
				      sc->name);
			if (sc->f.foreign_pct)
				CHECK(c.dropped_foreign > 0, "%s: no foreign",
				      sc->name);
			if (sc->slow)
				CHECK(c.small_overflows > 0 && c.nacks_sent > 0,
				      "%s: queue never overflowed", sc->name);
			if (sc->dma)
				CHECK(c.cma_transfers > 0, "%s: no DMA",
				      sc->name);
		}
	}
}

/* Two NICs on a clean wire, for the targeted tests below. */
struct duo {
	struct simwire_net *net;
	struct bipfw *fw[NN];
};

static void duo_open_on(struct duo *d, const struct simwire_faults *f)
{
	d->net = simwire_new(NN, 7, f);
	for (int i = 0; i < NN; i++) {
		struct bipfw_config c = config(i, 8);

		simwire_nic(d->net, i, &c, SIZE_MAX, &d->fw[i]);
	}
}

static void duo_open(struct duo *d)
{
	static const struct simwire_faults none = { 0 };

	duo_open_on(d, &none);
}

static void duo_steps(struct duo *d, int n)
{
	while (n--)
		for (int i = 0; i < NN; i++)
			bipfw_step(d->fw[i]);
}

/* Step every NIC until cond holds, for at most a second of real time
 * (retransmission timers run on it). */
#define DUO_UNTIL(d, cond)                                                     \
	for (uint64_t t0_ = bipfw_now_us();                                    \
	     !(cond) && bipfw_now_us() - t0_ < 1000000;)                       \
		duo_steps(d, 1)

/* From now on a NIC drops every packet it sends of the types in mask. */
static void drop_types(struct bipfw *fw, unsigned mask)
{
	fw->cfg.fault_drop_pct = mask ? 100 : 0;
	fw->fault_mask = mask;
}

static void duo_close(struct duo *d)
{
	for (int i = 0; i < NN; i++)
		bipfw_destroy(d->fw[i]);
	simwire_free(d->net);
}

/* The packetizer cuts a long message into ceil(len / packet) packets
 * (one for an empty message) and the receiver gets every byte. */
static void test_packetizer(void)
{
	static const size_t lens[] = { 0, 1, PKT - 1, PKT, PKT + 1,
				       2 * PKT - 1, 2 * PKT, 2 * PKT + 1,
				       5 * PKT + 3 };
	static uint8_t src[6 * PKT], dst[6 * PKT];

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct duo d;
		size_t len = lens[i], got = 0;
		uint64_t want = len ? (len + PKT - 1) / PKT : 1, before;
		uint32_t sg, rg;
		int node = -1, slot, rc;

		duo_open(&d);
		for (size_t k = 0; k < len; k++)
			src[k] = (uint8_t)(k * 3 + i);
		memset(dst, 0, sizeof(dst));
		before = simwire_sent(d.net, BIP_PKT_LONG_DATA);
		slot = bipfw_post_long(d.fw[0], 1, 2, src, len, 0, &sg);
		bipfw_post_lrecv(d.fw[1], 2, dst, sizeof(dst), &rg);
		duo_steps(&d, 50);
		CHECK(bipfw_reap_send(d.fw[0], (unsigned)slot, sg) == 1,
		      "len %zu: send not complete", len);
		rc = bipfw_reap_lrecv(d.fw[1], 2, rg, &node, &got);
		CHECK(rc == 1 && node == 0 && got == len,
		      "len %zu: receive rc %d node %d got %zu", len, rc, node,
		      got);
		CHECK(memcmp(src, dst, len) == 0 && dst[len] == 0,
		      "len %zu: data differs", len);
		CHECK(simwire_sent(d.net, BIP_PKT_LONG_DATA) - before == want,
		      "len %zu: %llu packets, expected %llu", len,
		      (unsigned long long)(simwire_sent(d.net,
							BIP_PKT_LONG_DATA) -
					   before),
		      (unsigned long long)want);
		duo_close(&d);
	}
}

/* On a wire whose packets are narrower than the small-message limit, a
 * small message goes in ceil(len / chunk) pieces (a tiny one inline in
 * one) and arrives whole; the sender completes on the last piece's ack. */
static void test_small_pieces(void)
{
	static const struct simwire_faults f = { .chunk = 1000 };
	static const size_t lens[] = { 0, 24, 999, 1000, 1001, 2500,
				       BIP_SMALL_MAX };
	static uint8_t src[BIP_SMALL_MAX];

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct duo d;
		size_t len = lens[i], got_len = 0;
		uint64_t want = len ? (len + 999) / 1000 : 1, before;
		const void *got = NULL;
		int src_node = -1;

		duo_open_on(&d, &f);
		for (size_t k = 0; k < len; k++)
			src[k] = (uint8_t)(k * 5 + i);
		before = simwire_sent(d.net, BIP_PKT_SMALL);
		CHECK(post_small(d.fw[0], 1, src, len) >= 0, "len %zu: post",
		      len);
		DUO_UNTIL(&d, bipfw_small_peek(d.fw[1], &got, &got_len,
					       &src_node) == 0);
		CHECK(got && got_len == len && src_node == 0 &&
			      memcmp(got, src, len) == 0,
		      "len %zu: got %zu bytes from %d", len, got_len,
		      src_node);
		CHECK(simwire_sent(d.net, BIP_PKT_SMALL) - before == want,
		      "len %zu: %llu pieces, expected %llu", len,
		      (unsigned long long)(simwire_sent(d.net, BIP_PKT_SMALL) -
					   before),
		      (unsigned long long)want);
		bipfw_small_pop(d.fw[1]);
		duo_close(&d);
	}
}

/* Messages copied into the queue take its buffers from a stack: 20 rounds
 * of 3 messages of 100 bytes through a queue of 8 use 3 buffers, not all
 * 8 in turn, so a queue sized for many peers touches only what waits in
 * it at once. */
static void test_queue_buffers(void)
{
	const void *seen[8];
	unsigned nseen = 0;
	uint8_t src[100];
	struct duo d;

	duo_open(&d);
	for (int round = 0; round < 20; round++) {
		for (int m = 0; m < 3; m++) {
			memset(src, round * 3 + m, sizeof(src));
			CHECK(post_small(d.fw[0], 1, src, sizeof(src)) >= 0,
			      "round %d: post %d", round, m);
		}
		DUO_UNTIL(&d, d.fw[1]->sq_count == 3);
		for (int m = 0; m < 3; m++) {
			const uint8_t *got = NULL;
			size_t len = 0;
			unsigned k;
			int node = -1;

			CHECK(bipfw_small_peek(d.fw[1], (const void **)&got,
					       &len, &node) == 0 &&
				      len == sizeof(src) && node == 0 &&
				      got[0] == round * 3 + m &&
				      got[99] == round * 3 + m,
			      "round %d: message %d", round, m);
			for (k = 0; k < nseen && seen[k] != got; k++)
				;
			if (k == nseen && nseen < 8)
				seen[nseen++] = got;
			bipfw_small_pop(d.fw[1]);
		}
	}
	CHECK(nseen == 3, "%u queue buffers used for 3 messages at a time",
	      nseen);
	duo_close(&d);
}

/* With a bulk wire: a narrow message goes by the peer's own wire. A run
 * (posted, then kicked without flush, as bip_sendv_more does) waits for
 * what is in flight on the own wire, then takes the bulk wire, and the
 * narrow message after it rides along; once all is acknowledged, narrow
 * ones are back on the own wire. Order is kept throughout. */
static void post_kick(struct bipfw *fw, uint8_t id, bool flush)
{
	uint8_t msg[100] = { id };

	CHECK(post_small(fw, 1, msg, sizeof(msg)) == 0, "post %u", id);
	bipfw_tx_kick(fw, 1, flush);
}

static void test_bulk_runs(void)
{
	struct simwire_net *bulk;
	struct duo d;
	uint8_t n = 0;

	duo_open(&d);
	bulk = simwire_new(NN, 11, &(struct simwire_faults){ 0 });
	for (int i = 0; i < NN; i++) {
		CHECK(simwire_attach(bulk, i, d.fw[i], PKT) == 1, "attach");
		for (int s = 0; s < NN; s++)
			if (s != i)
				CHECK(bipfw_bulk_set(d.fw[i], s, 1) == 0,
				      "bulk set");
	}
	CHECK(bipfw_bulk_set(d.fw[0], 1, 0) == -BIP_EINVAL,
	      "the own wire taken as bulk wire");
	post_kick(d.fw[0], 0, true);
	post_kick(d.fw[0], 1, false);
	post_kick(d.fw[0], 2, true);
	CHECK(simwire_sent(d.net, BIP_PKT_SMALL) == 1 &&
		      simwire_sent(bulk, BIP_PKT_SMALL) == 0,
	      "a run did not wait for the own wire's packet in flight");
	DUO_UNTIL(&d, bipfw_sends_drained(d.fw[0]));
	CHECK(simwire_sent(d.net, BIP_PKT_SMALL) == 1 &&
		      simwire_sent(bulk, BIP_PKT_SMALL) == 2,
	      "own wire %llu (want 1), bulk wire %llu (want 2)",
	      (unsigned long long)simwire_sent(d.net, BIP_PKT_SMALL),
	      (unsigned long long)simwire_sent(bulk, BIP_PKT_SMALL));
	post_kick(d.fw[0], 3, true);
	CHECK(simwire_sent(d.net, BIP_PKT_SMALL) == 2,
	      "a narrow message after the run did not take the own wire");
	for (uint64_t t0 = bipfw_now_us();
	     n < 4 && bipfw_now_us() - t0 < 1000000;) {
		const void *data;
		size_t len;
		int src;

		duo_steps(&d, 1);
		if (bipfw_small_peek(d.fw[1], &data, &len, &src) != 0)
			continue;
		CHECK(len == 100 && ((const uint8_t *)data)[0] == n,
		      "message %u came as %u", n, ((const uint8_t *)data)[0]);
		bipfw_small_pop(d.fw[1]);
		n++;
	}
	CHECK(n == 4, "%u of 4 messages arrived", n);
	duo_close(&d);
	simwire_free(bulk);
}

static void test_truncation(void)
{
	static uint8_t src[3000], dst[100];
	struct duo d;
	uint32_t sg, rg;
	size_t got;
	int node, slot;

	duo_open(&d);
	slot = bipfw_post_long(d.fw[0], 1, 1, src, sizeof(src), 0, &sg);
	bipfw_post_lrecv(d.fw[1], 1, dst, sizeof(dst), &rg);
	duo_steps(&d, 20);
	CHECK(bipfw_reap_send(d.fw[0], (unsigned)slot, sg) == -BIP_ETRUNC,
	      "sender not told of truncation");
	CHECK(bipfw_reap_lrecv(d.fw[1], 1, rg, &node, &got) == -BIP_ETRUNC,
	      "receiver not told of truncation");
	/* The tag is free again and the next message gets through. */
	slot = bipfw_post_long(d.fw[0], 1, 1, src, 50, 0, &sg);
	CHECK(bipfw_post_lrecv(d.fw[1], 1, dst, sizeof(dst), &rg) == 0,
	      "tag still busy");
	duo_steps(&d, 20);
	CHECK(bipfw_reap_send(d.fw[0], (unsigned)slot, sg) == 1, "resend");
	CHECK(bipfw_reap_lrecv(d.fw[1], 1, rg, &node, &got) == 1 && got == 50,
	      "second message");
	duo_close(&d);
}

/* One ready-mode message 0 -> 1 on tag 2 into a receive of cap bytes
 * (none if cap is SIZE_MAX), stepped until both sides are done. Returns
 * the send's result; the receive's goes to *rrc. */
static int ready_once(struct duo *d, const uint8_t *src, size_t len,
		      uint8_t *dst, size_t cap, int *rrc, size_t *got)
{
	uint32_t sg, rg;
	int slot, rc = 0, node;

	*rrc = 0;
	if (cap != SIZE_MAX)
		CHECK(bipfw_post_lrecv(d->fw[1], 2, dst, cap, &rg) == 0,
		      "post");
	slot = bipfw_post_long(d->fw[0], 1, 2, src, len, BIPFW_LONG_READY,
			       &sg);
	CHECK(slot >= 0, "ready send: %s", bip_strerror(slot));
	for (int i = 0; i < 100000 && (!rc || (cap != SIZE_MAX && !*rrc));
	     i++) {
		duo_steps(d, 1);
		if (!rc)
			rc = bipfw_reap_send(d->fw[0], (unsigned)slot, sg);
		if (cap != SIZE_MAX && !*rrc)
			*rrc = bipfw_reap_lrecv(d->fw[1], 2, rg, &node, got);
	}
	return rc;
}

/* Ready mode: no RTS, no CTS before the data, one verdict after it; every
 * byte arrives; a message too long fails both sides, one sent before any
 * receive is posted is refused (the sender is told, the receive posted
 * later is not captured, and the link goes on working). */
static void test_ready(void)
{
	static const size_t lens[] = { 0, 1, PKT - 1, PKT, PKT + 1,
				       5 * PKT + 3 };
	static uint8_t src[6 * PKT], area[6 * PKT + 64], big[24 * PKT];
	uint8_t *dst = area + 32;
	struct duo d;
	size_t got = 0;
	int rrc, rc;
	uint32_t rg;

	for (size_t k = 0; k < sizeof(src); k++)
		src[k] = (uint8_t)(k * 7 + 1);
	duo_open(&d);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint64_t rts = simwire_sent(d.net, BIP_PKT_LONG_RTS);
		uint64_t cts = simwire_sent(d.net, BIP_PKT_LONG_CTS);

		memset(dst, 0, 6 * PKT);
		rc = ready_once(&d, src, lens[i], dst, 6 * PKT, &rrc, &got);
		CHECK(rc == 1 && rrc == 1 && got == lens[i],
		      "len %zu: send %d, receive %d, got %zu", lens[i], rc,
		      rrc, got);
		CHECK(memcmp(src, dst, lens[i]) == 0, "len %zu: data differs",
		      lens[i]);
		CHECK(simwire_sent(d.net, BIP_PKT_LONG_RTS) == rts &&
			      simwire_sent(d.net, BIP_PKT_LONG_CTS) == cts + 1,
		      "len %zu: not one verdict and no RTS", lens[i]);
	}

	memset(area, 0xee, sizeof(area));
	rc = ready_once(&d, src, 3 * PKT, dst, 100, &rrc, &got);
	CHECK(rc == -BIP_ETRUNC && rrc == -BIP_ETRUNC,
	      "truncation: send %s, receive %s", bip_strerror(rc),
	      bip_strerror(rrc));
	CHECK(memcmp(src, dst, 100) == 0 && area[32 + 100] == 0xee &&
		      area[31] == 0xee,
	      "truncated receive: first bytes or guards wrong");

	/* Longer than the window: the verdict overtakes the last acks. */
	rc = ready_once(&d, big, sizeof(big), dst, SIZE_MAX, &rrc, &got);
	CHECK(rc == -BIP_ENOTREADY, "no receive posted: send %s",
	      bip_strerror(rc));
	CHECK(bipfw_post_lrecv(d.fw[1], 2, dst, 6 * PKT, &rg) == 0, "post");
	duo_steps(&d, 10);
	CHECK(d.fw[1]->tags[2].state == BIPFW_LRECV_POSTED,
	      "a refused message captured a later receive");
	CHECK(bipfw_cancel_lrecv(d.fw[1], 2, rg) == 0, "cancel");
	/* The refused send's slot is reused: its next send waits for its own
	 * verdict, which is not taken for a stale one. */
	rc = ready_once(&d, src, 2 * PKT, dst, 6 * PKT, &rrc, &got);
	CHECK(rc == 1 && rrc == 1 && got == 2 * PKT, "after a refusal: %s",
	      bip_strerror(rc));
	duo_steps(&d, 20);
	CHECK(d.fw[0]->cnt.dropped_bad == 0, "%llu packets dropped as bad",
	      (unsigned long long)d.fw[0]->cnt.dropped_bad);
	duo_close(&d);
}

/* A refused ready-mode message is skipped to its last packet, and no
 * further: the next message on its slot may carry the same id (the slot's
 * generation is kept modulo 65536 in it) and must be delivered. */
static void test_ready_same_id(void)
{
	static uint8_t src[3 * PKT], dst[3 * PKT];
	struct duo d;
	size_t got = 0;
	unsigned slot;
	int rrc, rc;

	for (size_t k = 0; k < sizeof(src); k++)
		src[k] = (uint8_t)(k * 11 + 5);
	duo_open(&d);
	rc = ready_once(&d, src, 2 * PKT + 9, dst, SIZE_MAX, &rrc, &got);
	CHECK(rc == -BIP_ENOTREADY, "no receive posted: send %s",
	      bip_strerror(rc));
	/* The freed slot is taken next; 65535 more makes it 65536 on. */
	slot = d.fw[0]->free_slot;
	d.fw[0]->slots[slot].gen += 0xffff;
	rc = ready_once(&d, src, 2 * PKT + 9, dst, sizeof(dst), &rrc, &got);
	CHECK(rc == 1 && rrc == 1 && got == 2 * PKT + 9 &&
		      memcmp(src, dst, got) == 0,
	      "a ready message with a refused one's id: send %s, receive %s",
	      bip_strerror(rc), bip_strerror(rrc));
	duo_close(&d);
}

/* A long send moved to a copy before its data left (its caller reuses the
 * original): the data, and every resend over a lossy wire, comes from the
 * copy; a send that is over cannot be moved. */
static void test_rebase(void)
{
	static const struct simwire_faults f = { .loss_pct = 10 };
	static uint8_t src[6 * PKT], copy[6 * PKT], dst[6 * PKT];
	struct duo d;
	uint32_t sg, rg;
	size_t got = 0;
	int slot, node, rc = 0, rrc = 0;

	for (size_t k = 0; k < sizeof(src); k++)
		src[k] = (uint8_t)(k * 13 + 1);
	memcpy(copy, src, sizeof(src));
	d.net = simwire_new(NN, 5, &f);
	for (int i = 0; i < NN; i++) {
		struct bipfw_config c = config(i, 8);

		simwire_nic(d.net, i, &c, SIZE_MAX, &d.fw[i]);
	}
	slot = bipfw_post_long(d.fw[0], 1, 2, src, sizeof(src), 0, &sg);
	duo_steps(&d, 2); /* announced, not answered: nothing to answer */
	CHECK(bipfw_rebase_send(d.fw[0], (unsigned)slot, sg, copy) == 0,
	      "rebase");
	memset(src, 0, sizeof(src));
	bipfw_post_lrecv(d.fw[1], 2, dst, sizeof(dst), &rg);
	for (int i = 0; i < 100000 && (!rc || !rrc); i++) {
		duo_steps(&d, 1);
		if (!rc)
			rc = bipfw_reap_send(d.fw[0], (unsigned)slot, sg);
		if (!rrc)
			rrc = bipfw_reap_lrecv(d.fw[1], 2, rg, &node, &got);
	}
	CHECK(rc == 1 && rrc == 1 && got == sizeof(dst) &&
		      memcmp(dst, copy, sizeof(dst)) == 0,
	      "moved send: send %d, receive %d, %zu bytes", rc, rrc, got);
	CHECK(bipfw_rebase_send(d.fw[0], (unsigned)slot, sg, copy) ==
		      -BIP_ENOREQ,
	      "a completed send was moved");
	duo_close(&d);
}

/* Ready-mode messages two at a time go by single copy, read by the
 * receiver: one packet each, the data intact; the sender may not move a
 * message being read (its caller waits); a read the kernel refuses fails
 * both ends with -BIP_ESYS. With BIPFW_LONG_PACKETS (the receiver chose
 * packets) they go in packets all the same, and may move. */
static void pull_two(const struct simwire_faults *f, unsigned flags,
		     int want)
{
	bool pulled = !(flags & BIPFW_LONG_PACKETS);
	static uint8_t src[2][3 * PKT], copy[3 * PKT], dst[2][3 * PKT];
	struct duo d;
	uint32_t sg[2], rg[2];
	int slot[2], rc[2] = { 0, 0 }, rrc[2] = { 0, 0 }, node;
	size_t got;
	uint64_t reads;

	d.net = simwire_new(NN, 3, f);
	for (int i = 0; i < NN; i++) {
		struct bipfw_config c = config(i, 8);

		simwire_nic(d.net, i, &c, 1, &d.fw[i]);
	}
	reads = d.fw[1]->cnt.cma_transfers;
	for (int m = 0; m < 2; m++) {
		for (size_t k = 0; k < sizeof(src[m]); k++)
			src[m][k] = (uint8_t)(k * 5 + m + 1);
		memset(dst[m], 0, sizeof(dst[m]));
		CHECK(bipfw_post_lrecv(d.fw[1], 2 + m, dst[m], sizeof(dst[m]),
				       &rg[m]) == 0, "post");
		slot[m] = bipfw_post_long(d.fw[0], 1, 2 + m, src[m],
					  sizeof(src[m]),
					  BIPFW_LONG_READY | flags, &sg[m]);
		CHECK(slot[m] >= 0, "ready send %d", m);
	}
	if (!pulled) {
		/* One in packets moves (an MPI_Cancel's copy): all of it then
		 * comes from the copy, not from what was its buffer. */
		CHECK(simwire_sent(d.net, BIP_PKT_LONG_DATA) == 0,
		      "a message left before it could move");
		memcpy(copy, src[0], sizeof(copy));
		CHECK(bipfw_rebase_send(d.fw[0], (unsigned)slot[0], sg[0],
					copy) == 0,
		      "a message sent in packets could not move");
		memset(src[0], 0xee, sizeof(src[0]));
	}
	bipfw_step(d.fw[0]);
	CHECK(!pulled ||
		      bipfw_rebase_send(d.fw[0], (unsigned)slot[0], sg[0],
					copy) == -BIP_EBUSY,
	      "a message being read was moved");
	for (int i = 0; i < 100000 && (!rc[1] || !rrc[1]); i++) {
		duo_steps(&d, 1);
		for (int m = 0; m < 2; m++) {
			if (!rc[m])
				rc[m] = bipfw_reap_send(d.fw[0],
							(unsigned)slot[m],
							sg[m]);
			if (!rrc[m])
				rrc[m] = bipfw_reap_lrecv(d.fw[1], 2 + m,
							  rg[m], &node, &got);
		}
	}
	for (int m = 0; m < 2; m++) {
		CHECK(rc[m] == want && rrc[m] == want,
		      "message %d: send %d, receive %d, want %d", m, rc[m],
		      rrc[m], want);
		CHECK(want != 1 || memcmp(pulled || m ? src[m] : copy, dst[m],
					  sizeof(dst[m])) == 0,
		      "message %d: data differs", m);
	}
	CHECK(d.fw[1]->cnt.cma_transfers ==
		      reads + (want == 1 && pulled ? 2 : 0),
	      "%llu single copies, want %d",
	      (unsigned long long)(d.fw[1]->cnt.cma_transfers - reads),
	      want == 1 && pulled ? 2 : 0);
	CHECK(simwire_sent(d.net, BIP_PKT_LONG_DATA) == (pulled ? 2 : 6),
	      "%llu data packets for two messages, want %d",
	      (unsigned long long)simwire_sent(d.net, BIP_PKT_LONG_DATA),
	      pulled ? 2 : 6);
	duo_close(&d);
}

static void test_pull(void)
{
	static const struct simwire_faults clean = { 0 },
					   unreadable = { .unreadable = true };

	pull_two(&clean, 0, 1);
	pull_two(&unreadable, 0, -BIP_ESYS);
	pull_two(&clean, BIPFW_LONG_PACKETS, 1);
	pull_two(&unreadable, BIPFW_LONG_PACKETS, 1);
}

/* Ready-mode messages over a wire that loses, duplicates, reorders and
 * corrupts: every one arrives whole, exactly once, and both sides finish
 * (the verdict is resent like any packet). */
static void test_ready_lossy(void)
{
	static const struct simwire_faults f = { 8, 8, 8, 3, 2, 0, 0 };
	static uint8_t src[6 * PKT], dst[6 * PKT];
	struct duo d;

	for (size_t k = 0; k < sizeof(src); k++)
		src[k] = (uint8_t)(k * 5 + 3);
	d.net = simwire_new(NN, 11, &f);
	for (int i = 0; i < NN; i++) {
		struct bipfw_config c = config(i, 8);

		simwire_nic(d.net, i, &c, SIZE_MAX, &d.fw[i]);
	}
	for (int k = 0; k < 200; k++) {
		size_t len = simwire_rand(d.net) % sizeof(src), got = 0;
		int rrc, rc;

		memset(dst, 0, sizeof(dst));
		rc = ready_once(&d, src + k % 7, len, dst, sizeof(dst), &rrc,
				&got);
		CHECK(rc == 1 && rrc == 1 && got == len &&
			      memcmp(src + k % 7, dst, len) == 0,
		      "lossy ready #%d (%zu bytes): send %d receive %d got %zu",
		      k, len, rc, rrc, got);
	}
	duo_close(&d);
}

/* A peer cut off while nothing is in flight to it is found dead by its
 * silence (no packet, no ping answer) within the peer timeout; an idle
 * peer that answers pings is not. */
static void test_idle_death(void)
{
	static const struct simwire_faults none = { 0 };
	uint64_t t0;
	struct duo d;

	d.net = simwire_new(NN, 5, &none);
	for (int i = 0; i < NN; i++) {
		struct bipfw_config c = config(i, 8);

		c.peer_timeout_ms = 200;
		simwire_nic(d.net, i, &c, SIZE_MAX, &d.fw[i]);
	}
	t0 = bipfw_now_us();
	while (bipfw_now_us() - t0 < 500000)
		duo_steps(&d, 1);
	CHECK(!bipfw_peer_gone(d.fw[0], 1) && !bipfw_peer_gone(d.fw[0], 2),
	      "idle live peers taken for dead");
	simwire_cut(d.net, 2);
	t0 = bipfw_now_us();
	DUO_UNTIL(&d, bipfw_peer_gone(d.fw[0], 2) &&
			      bipfw_peer_gone(d.fw[1], 2));
	CHECK(bipfw_peer_gone(d.fw[0], 2) == 1 &&
		      bipfw_peer_gone(d.fw[1], 2) == 1,
	      "a cut-off idle peer was not found dead");
	CHECK(bipfw_now_us() - t0 >= 150000,
	      "found dead after %llu us, before the 200 ms timeout",
	      (unsigned long long)(bipfw_now_us() - t0));
	CHECK(!bipfw_peer_gone(d.fw[0], 1), "the live peer was lost too");
	duo_close(&d);
}

/* A host blocked in a receive steps once per liveness period (bipfw_block
 * waits no longer). With a peer timeout under five such periods each of
 * those gaps is longer than a ping period, yet the host was not away: a
 * silent peer must still be found dead. */
static void test_blocked_death(void)
{
	static const struct simwire_faults none = { 0 };
	uint64_t t0, t;
	struct duo d;

	d.net = simwire_new(NN, 5, &none);
	for (int i = 0; i < NN; i++) {
		struct bipfw_config c = config(i, 8);

		c.peer_timeout_ms = 400;
		if (i == 0)
			c.liveness_ms = 100;
		simwire_nic(d.net, i, &c, SIZE_MAX, &d.fw[i]);
	}
	duo_steps(&d, 10);
	simwire_cut(d.net, 2);
	t0 = bipfw_now_us();
	while (!bipfw_peer_gone(d.fw[0], 2) && bipfw_now_us() - t0 < 3000000) {
		/* bipfw_block's wait, as long as nothing wakes it. */
		bipfw_block(d.fw[0], 1000000);
		for (t = bipfw_now_us(); bipfw_now_us() - t < 100000;)
			for (int i = 1; i < NN; i++)
				bipfw_step(d.fw[i]);
		bipfw_step(d.fw[0]);
	}
	CHECK(bipfw_peer_gone(d.fw[0], 2) == 1,
	      "a host blocked in receives never found its silent peer dead "
	      "(%llu ms)", (unsigned long long)(bipfw_now_us() - t0) / 1000);
	CHECK(!bipfw_peer_gone(d.fw[0], 1), "the live peer was lost too");
	duo_close(&d);
}

static void test_peer_death(void)
{
	static uint8_t src[5000];
	struct duo d;
	uint32_t sg, rg;
	size_t got;
	int node, slot;

	duo_open(&d);
	/* A send to a receiver that never posts, then the receiver dies. */
	slot = bipfw_post_long(d.fw[0], 1, 0, src, sizeof(src), 0, &sg);
	CHECK(bipfw_post_lrecv(d.fw[0], 3, src, sizeof(src), &rg) == 0,
	      "post");
	duo_steps(&d, 10);
	CHECK(bipfw_reap_send(d.fw[0], (unsigned)slot, sg) == 0, "too early");
	simwire_kill(d.net, 1);
	/* Liveness is checked every millisecond: allow a second. */
	DUO_UNTIL(&d, bipfw_peer_gone(d.fw[0], 1));
	CHECK(bipfw_peer_gone(d.fw[0], 1), "death not noticed");
	CHECK(bipfw_reap_send(d.fw[0], (unsigned)slot, sg) == -BIP_EPEERGONE,
	      "pending send not failed");
	CHECK(post_small(d.fw[0], 1, src, 4) == -BIP_EPEERGONE,
	      "send to a dead peer accepted");
	CHECK(bipfw_live_peers(d.fw[0]) == 1, "live peers");
	/* A receive nobody matched can be withdrawn; the tag frees. */
	CHECK(bipfw_cancel_lrecv(d.fw[0], 3, rg) == 0, "cancel");
	CHECK(bipfw_reap_lrecv(d.fw[0], 3, rg, &node, &got) == -BIP_ENOREQ,
	      "cancelled receive still there");
	duo_close(&d);
}

/* Long data whose offset or length lies about the message must be dropped
 * without writing a byte outside the receive buffer. */
static void test_malformed_data(void)
{
	static uint8_t src[3000], payload[200];
	static uint8_t area[4096 + 64];
	uint8_t *dst = area + 32;
	static const uint64_t offsets[] = { UINT64_MAX - 10, 2950, 3000, 4000 };
	struct duo d;
	uint32_t sg, rg;
	struct bipfw_lrecv *r;

	duo_open(&d);
	memset(area, 0xee, sizeof(area));
	bipfw_post_long(d.fw[0], 1, 0, src, sizeof(src), 0, &sg);
	bipfw_post_lrecv(d.fw[1], 0, dst, 4096, &rg);
	bipfw_step(d.fw[0]); /* RTS out */
	bipfw_step(d.fw[1]); /* matched: ACTIVE, CTS out */
	r = &d.fw[1]->tags[0];
	CHECK(r->state == BIPFW_LRECV_ACTIVE, "receive not active");
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		uint64_t bad = d.fw[1]->cnt.dropped_bad;
		struct bip_pkt_hdr h = {
			.job_key = 0xb1b0cafe, .version = BIP_WIRE_VERSION,
			.type = BIP_PKT_LONG_DATA, .src = 0, .dst = 1,
			.seq = d.fw[1]->peers[0].rx.expected, .len = 100,
			.tag = 0, .msg_id = r->msg_id, .offset = offsets[i],
		};

		simwire_inject(d.net, 1, &h, payload, 100);
		bipfw_step(d.fw[1]);
		CHECK(d.fw[1]->cnt.dropped_bad == bad + 1,
		      "data at offset %llu accepted",
		      (unsigned long long)offsets[i]);
	}
	for (size_t i = 0; i < 32; i++)
		CHECK(area[i] == 0xee && area[32 + 4096 + i] == 0xee,
		      "guard byte %zu overwritten", i);
	CHECK(r->received == 0, "forged data counted");
	/* Data must come in order: the same half twice does not make the
	 * whole message. */
	for (int k = 0; k < 2; k++) {
		struct bip_pkt_hdr h = {
			.job_key = 0xb1b0cafe, .version = BIP_WIRE_VERSION,
			.type = BIP_PKT_LONG_DATA, .src = 0, .dst = 1,
			.seq = d.fw[1]->peers[0].rx.expected, .len = 1500,
			.tag = 0, .msg_id = r->msg_id, .offset = 0,
		};

		simwire_inject(d.net, 1, &h, src, 1500);
		bipfw_step(d.fw[1]);
	}
	CHECK(r->state == BIPFW_LRECV_ACTIVE && r->received == 1500,
	      "a repeated offset was taken: state %u, %zu bytes received",
	      r->state, r->received);
	duo_close(&d);
}

/* Our own node's packets come by the self wire only: one on another wire
 * claiming to be ours is forged (or looped back) and dropped. */
static void test_own_source(void)
{
	static uint8_t payload[16];
	struct duo d;
	struct bip_pkt_hdr h = {
		.job_key = 0xb1b0cafe, .version = BIP_WIRE_VERSION,
		.type = BIP_PKT_SMALL, .src = 1, .dst = 1, .len = 16,
	};
	const void *data;
	size_t len;
	int src;

	duo_open(&d);
	simwire_inject(d.net, 1, &h, payload, sizeof(payload));
	bipfw_step(d.fw[1]);
	CHECK(d.fw[1]->cnt.dropped_bad == 1, "own source taken: %llu dropped",
	      (unsigned long long)d.fw[1]->cnt.dropped_bad);
	CHECK(bipfw_small_peek(d.fw[1], &data, &len, &src) == -BIP_EAGAIN,
	      "a forged message delivered");
	duo_close(&d);
}

/* A packet outside the sequence is for lossless wires only: on a lossy one
 * it could be lost or repeated unseen, so it is dropped, and so is one
 * that claims a sequence number or is not a whole small message. */
static void test_unsequenced_lossy(void)
{
	static uint8_t payload[16];
	static const struct {
		uint8_t type;
		uint16_t flags;
		uint32_t seq;
	} bad[] = {
		{ BIP_PKT_SMALL, BIP_PKTF_NOSEQ, 0 },
		{ BIP_PKT_SMALL, BIP_PKTF_NOSEQ | BIP_PKTF_MORE, 0 },
		{ BIP_PKT_LONG_RTS, BIP_PKTF_NOSEQ, 0 },
	};
	struct duo d;
	const void *data;
	size_t len;
	int src;

	duo_open(&d);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bip_pkt_hdr h = {
			.job_key = 0xb1b0cafe, .version = BIP_WIRE_VERSION,
			.type = bad[i].type, .flags = bad[i].flags, .src = 0,
			.dst = 1, .seq = bad[i].seq, .len = sizeof(payload),
		};

		simwire_inject(d.net, 1, &h, payload, sizeof(payload));
		bipfw_step(d.fw[1]);
		CHECK(d.fw[1]->cnt.dropped_bad == i + 1,
		      "unsequenced packet %zu on a lossy wire taken", i);
	}
	CHECK(bipfw_small_peek(d.fw[1], &data, &len, &src) == -BIP_EAGAIN,
	      "an unsequenced message delivered from a lossy wire");
	duo_close(&d);
}

/* An RTS still in flight from a peer that closed must not capture a
 * receive posted later (that receive would wait for ever). */
static void test_closed_peer(void)
{
	static uint8_t src[5000], dst[5000];
	struct duo d;
	uint32_t sg, rg;

	duo_open(&d);
	bipfw_post_long(d.fw[0], 1, 2, src, sizeof(src), 0, &sg);
	bipfw_step(d.fw[0]); /* the RTS is on the wire */
	bipfw_peer_lost(d.fw[1], 0, BIPFW_PEER_CLOSED);
	bipfw_step(d.fw[1]);
	CHECK(bipfw_post_lrecv(d.fw[1], 2, dst, sizeof(dst), &rg) == 0, "post");
	bipfw_step(d.fw[1]);
	CHECK(d.fw[1]->tags[2].state == BIPFW_LRECV_POSTED,
	      "a closed peer's RTS matched a receive");
	CHECK(bipfw_cancel_lrecv(d.fw[1], 2, rg) == 0, "cancel");
	duo_close(&d);
}

/* A receiver closes right after the last message: its ack of it and its
 * first CLOSE (which carries the ack too) are lost. The CLOSE is resent
 * until acknowledged, so by the time the receiver may leave, the sender's
 * send has completed - successfully, not as "peer gone". */
static void test_close_lost_ack(void)
{
	static uint8_t src[3 * PKT], dst[3 * PKT];
	const unsigned ack = 1u << BIP_PKT_ACK, close = 1u << BIP_PKT_CLOSE;
	struct duo d;
	uint32_t sg, rg;
	size_t got;
	int node, slot;

	duo_open(&d);
	drop_types(d.fw[0], ack | close);
	slot = bipfw_post_long(d.fw[1], 0, 1, src, sizeof(src), 0, &sg);
	bipfw_post_lrecv(d.fw[0], 1, dst, sizeof(dst), &rg);
	DUO_UNTIL(&d, bipfw_reap_lrecv(d.fw[0], 1, rg, &node, &got) == 1);
	CHECK(got == sizeof(src), "received %zu", got);
	bipfw_announce_close(d.fw[0]);
	CHECK(!d.fw[0]->peers[1].close_due, "the first CLOSE did not leave");
	drop_types(d.fw[0], ack);
	CHECK(bipfw_close_pending(d.fw[0]), "close not pending");
	DUO_UNTIL(&d, !bipfw_close_pending(d.fw[0]));
	CHECK(!bipfw_close_pending(d.fw[0]), "CLOSE never acknowledged");
	bipfw_destroy(d.fw[0]); /* the receiver leaves */
	d.fw[0] = NULL;
	CHECK(bipfw_reap_send(d.fw[1], (unsigned)slot, sg) == 1,
	      "the last send did not complete");
	CHECK(d.fw[1]->peers[0].state == BIPFW_PEER_CLOSED,
	      "the receiver is not seen closed");
	duo_close(&d);
}

/* The acks of a node's CLOSE are lost: its peers, which saw it close, still
 * acknowledge the resent CLOSE, so it need not wait for the dead-peer
 * timeout (a minute here). */
static void test_close_resent_acked(void)
{
	struct duo d;

	duo_open(&d);
	drop_types(d.fw[0], 1u << BIP_PKT_ACK);
	bipfw_announce_close(d.fw[1]);
	DUO_UNTIL(&d, d.fw[1]->cnt.retransmits > 0);
	CHECK(bipfw_peer_gone(d.fw[0], 1), "the CLOSE did not arrive");
	CHECK(bipfw_close_pending(d.fw[1]), "acknowledged through a drop");
	drop_types(d.fw[0], 0);
	DUO_UNTIL(&d, !bipfw_close_pending(d.fw[1]));
	CHECK(!bipfw_close_pending(d.fw[1]), "a resent CLOSE not acknowledged");
	duo_close(&d);
}

static void test_host_errors(void)
{
	static uint8_t buf[BIP_SMALL_MAX + 1];
	struct duo d;
	uint32_t g;
	int n = 0, rc;

	duo_open(&d);
	CHECK(post_small(d.fw[0], NN, buf, 1) == -BIP_ENODE, "range");
	CHECK(post_small(d.fw[0], -1, buf, 1) == -BIP_ENODE, "neg");
	{
		/* Gathered: the pieces are checked against the limit as a
		 * whole, and arrive as one message. */
		struct iovec iov[3] = { { buf, 10 }, { buf, 0 },
					{ buf, BIP_SMALL_MAX - 10 } };
		const void *data;
		size_t len;
		int src;

		CHECK(bipfw_post_small(d.fw[0], 1, iov, 3) == 0, "gather");
		iov[1].iov_len = 1;
		CHECK(bipfw_post_small(d.fw[0], 1, iov, 3) == -BIP_ETOOLONG,
		      "gather too long");
		duo_steps(&d, 5);
		CHECK(bipfw_small_peek(d.fw[1], &data, &len, &src) == 0 &&
			      len == BIP_SMALL_MAX && src == 0,
		      "gathered message");
		bipfw_small_pop(d.fw[1]);
		/* Its slot comes back with the (delayed) ack. */
		DUO_UNTIL(&d, bipfw_sends_drained(d.fw[0]));
	}
	CHECK(post_small(d.fw[0], 1, buf, BIP_SMALL_MAX + 1) ==
		      -BIP_ETOOLONG,
	      "too long");
	CHECK(bipfw_post_long(d.fw[0], 1, 8, buf, 10, 0, &g) == -BIP_ETAG,
	      "tag");
	CHECK(bipfw_post_long(d.fw[0], 1, 8, buf, 10, BIPFW_LONG_READY, &g) ==
		      -BIP_ETAG,
	      "ready tag");
	CHECK(bipfw_post_lrecv(d.fw[1], 8, buf, 10, &g) == -BIP_ETAG, "tag");
	CHECK(bipfw_post_lrecv(d.fw[1], 0, buf, 10, &g) == 0, "post");
	CHECK(bipfw_post_lrecv(d.fw[1], 0, buf, 10, &g) == -BIP_EBUSY, "busy");
	CHECK(bipfw_reap_send(d.fw[0], 99, 0) == -BIP_ENOREQ, "bad request");
	/* Slots run out with nobody acknowledging: try again. */
	while ((rc = post_small(d.fw[0], 2, buf, 8)) == 0)
		n++;
	CHECK(rc == -BIP_EAGAIN && n == 16, "slots: %d then %s", n,
	      bip_strerror(rc));
	duo_steps(&d, 10);
	CHECK(post_small(d.fw[0], 2, buf, 8) == 0, "acks free slots");
	duo_close(&d);
}

/* A wire that only counts how often it is looked at. */
static int idle_peek(void *ctx, const void **hdr, const void **payload,
		     size_t *avail)
{
	++*(unsigned *)ctx;
	return -BIP_EAGAIN;
}

static struct bip_pkt_hdr *idle_reserve(void *ctx, int peer, size_t len)
{
	return NULL; /* the link is full */
}

static int idle_peer_state(void *ctx, int peer)
{
	return BIPFW_PEER_LIVE;
}

static const struct bipfw_wire_class idle_class = {
	.name = "idle",
	.reserve = idle_reserve,
	.peek = idle_peek,
	.peer_state = idle_peer_state,
};

/* A wire no peer goes by costs the receive loop nothing (a look at a
 * network socket is a system call); it is read once a peer uses it. */
static void test_unused_wire(void)
{
	struct duo d;
	unsigned looks = 0;
	int w;

	duo_open(&d);
	w = bipfw_wire_add(d.fw[0], &idle_class, &looks);
	CHECK(w == 1, "a second wire is added: %d", w);
	duo_steps(&d, 10);
	CHECK(looks == 0, "a wire without peers was read %u times", looks);
	CHECK(bipfw_port_set(d.fw[0], 1, 1) == 0, "peer 1 moves to wire 1");
	duo_steps(&d, 10);
	CHECK(looks >= 10, "the wire of peer 1 was read %u times in 10 steps",
	      looks);
	duo_close(&d);
}

int main(void)
{
	bip_log_init();

	test_packetizer();
	test_truncation();
	test_ready();
	test_ready_lossy();
	test_ready_same_id();
	test_rebase();
	test_pull();
	test_peer_death();
	test_close_lost_ack();
	test_close_resent_acked();
	test_host_errors();
	test_malformed_data();
	test_own_source();
	test_unsequenced_lossy();
	test_closed_peer();
	test_traffic();
	test_small_pieces();
	test_queue_buffers();
	test_bulk_runs();
	test_idle_death();
	test_blocked_death();
	test_unused_wire();
	return unit_result("firmware over the simulated wire");
}
