/*
 * fuzz_rx.c - libFuzzer harness for the NIC program's receive path: the
 * fuzzer's bytes are packets on a fake wire (packet_valid, handle_packet,
 * every packet type), received by node 0 of 4 whose host interface is in
 * every state at once: a long receive posted, one posted for ready-mode
 * data, a long send waiting for its CTS, a ready-mode send streaming, small
 * sends in flight, node 2 closed. Built with -DFUZZ_SEEDS instead, it
 * writes a seed corpus made from the current packet format.
 *
 * Input: one byte of mode (bit 0: a lossy wire, with checksums; bit 1, on
 * a lossless one: the wire lends packets and shows private copies of their
 * headers, so the host's peeks take small messages straight from it, the
 * path of shm peers, bipfw_rx_direct, and every other turn a drain hands
 * them to a handler, bipfw_drain), then records of a 2-byte payload
 * length, a 64-byte header and the payload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nic.h"

#define NODES 4
#define PKT BIP_SMALL_MAX
#define KEY 0x0b1b0b1bu
#define SLOTS 8

static const struct bipfw_config cfg = {
	.node = 0, .nnodes = NODES, .job_key = KEY, .packet_size = PKT,
	.small_queue = 8, .send_slots = SLOTS, .long_tags = 4, .window = 16,
	.ack_every = 4, .ack_delay_us = 10, .retrans_us = 1000,
	.nack_backoff_us = 1, .liveness_ms = 60000, .peer_timeout_ms = 60000,
};

/* What the host posted, by the order of its posts (slots come from a free
 * list that starts at 0): the ids the seeds answer to. */
enum { SEND_TAG = 2, READY_TAG = 3, RECV_TAG = 0, READY_RECV_TAG = 1 };
#define SEND_MSG_ID (1 * SLOTS + 0)  /* slot 0, generation 1 */
#define READY_MSG_ID (1 * SLOTS + 1) /* slot 1, generation 1 */

/* Like a ring slot, a packet's room is a header and PKT bytes, whatever
 * its header claims. The header sits 4 bytes off alignment, as a segment
 * of a GRO run can: the receive path must copy it, not read it in place.
 * A wire that shows private copies (BIPFW_WIRE_PEEK_COPY) aligns them. */
#define MISALIGN 4
/* Packets lent at once, per peer (the queue holds 8, plus fw->direct and a
 * drain's own). */
#define LENT_MAX 16
struct fake {
	const uint8_t *p;
	size_t left;
	size_t at;   /* where the header sits in hdr */
	bool shown;  /* shown and not yet released: shown again */
	/* Each peer's lent packets by token, oldest first: they must come
	 * back in that order (shm frees its ring up to a record's end). */
	uint64_t tokens;
	uint64_t lent[NODES][LENT_MAX];
	unsigned lent_n[NODES];
	_Alignas(8) uint8_t hdr[MISALIGN + sizeof(struct bip_pkt_hdr)];
	uint8_t slot[PKT];
};

static int fake_peek(void *ctx, const void **hdr,
		     const void **payload, size_t *avail)
{
	struct fake *f = ctx;
	uint16_t len;

	if (f->shown)
		goto show;
	if (f->left < 2 + sizeof(struct bip_pkt_hdr))
		return -BIP_EAGAIN;
	memcpy(&len, f->p, 2);
	memcpy(f->hdr + f->at, f->p + 2, sizeof(struct bip_pkt_hdr));
	f->p += 2 + sizeof(struct bip_pkt_hdr);
	f->left -= 2 + sizeof(struct bip_pkt_hdr);
	if (len > f->left)
		len = (uint16_t)f->left;
	if (len > PKT)
		len = PKT;
	memset(f->slot, 0, sizeof(f->slot));
	memcpy(f->slot, f->p, len);
	f->p += len;
	f->left -= len;
	f->shown = true;
show:
	*hdr = f->hdr + f->at;
	*payload = f->slot;
	*avail = PKT;
	return 0;
}

static void fake_release(void *ctx)
{
	((struct fake *)ctx)->shown = false;
}

/* A held packet is not shown again: the input moves on, as if its sender
 * had vanished behind it. */
static void fake_hold(void *ctx)
{
	((struct fake *)ctx)->shown = false;
}

/* A lent payload stays in the slot, which the next peek overwrites: what
 * a turn lends several times over is not checked here (payloads are the
 * host's, and the harness reads none). What is checked is the order in
 * which each peer's lent packets come back: the order they were lent. */
static uint64_t fake_keep(void *ctx)
{
	struct fake *f = ctx;
	struct bip_pkt_hdr h;

	memcpy(&h, f->hdr + f->at, sizeof(h));
	if (h.src >= NODES || f->lent_n[h.src] == LENT_MAX)
		abort();
	f->lent[h.src][f->lent_n[h.src]++] = ++f->tokens;
	f->shown = false;
	return f->tokens;
}

static void fake_unkeep(void *ctx, int peer, uint64_t token)
{
	struct fake *f = ctx;

	if (peer < 0 || peer >= NODES || !f->lent_n[peer] ||
	    f->lent[peer][0] != token)
		abort();
	memmove(f->lent[peer], f->lent[peer] + 1,
		--f->lent_n[peer] * sizeof(f->lent[peer][0]));
}

/* What the NIC sends goes nowhere. */
static struct bip_pkt_hdr *fake_reserve(void *ctx, int peer, size_t len)
{
	static uint8_t out[sizeof(struct bip_pkt_hdr) + PKT];

	return (struct bip_pkt_hdr *)out;
}

static void fake_commit(void *ctx, int peer, struct bip_pkt_hdr *pkt,
			size_t len)
{
}

static int fake_peer_state(void *ctx, int peer)
{
	return BIPFW_PEER_LIVE;
}

static void fake_wait(void *ctx, unsigned timeout_us)
{
}

static struct bipfw_wire_class wire = {
	.name = "fuzz",
	.scope = BIPFW_SCOPE_NETWORK,
	.reserve = fake_reserve,
	.commit = fake_commit,
	.peek = fake_peek,
	.release = fake_release,
	.hold = fake_hold,
	.peer_state = fake_peer_state,
	.wait = fake_wait,
};

#ifndef FUZZ_SEEDS

/* With FUZZ_REPORT set: how many inputs took each packet type to its
 * handler, judged by what the handler leaves behind; printed at exit. */
#define REACHED(X) X(SMALL) X(LONG_RTS) X(LONG_CTS) X(LONG_DATA) X(ACK)       \
	X(NACK) X(CLOSE) X(malformed)
enum {
#define REACHED_ENUM(n) R_##n,
	REACHED(REACHED_ENUM)
#undef REACHED_ENUM
	R_N
};
static unsigned reached[R_N];
static int reporting;

static void report(void)
{
	static const char *const names[R_N] = {
#define REACHED_NAME(n) #n,
		REACHED(REACHED_NAME)
#undef REACHED_NAME
	};

	for (int i = 0; i < R_N; i++)
		printf("reached %s %u\n", names[i], reached[i]);
}

static void tally(const struct bipfw *fw)
{
	const struct bipfw_lrecv *rr = &fw->tags[RECV_TAG];
	bool rts = rr->state != BIPFW_LRECV_POSTED;

	for (unsigned t = 0; t < fw->cfg.long_tags; t++)
		rts |= fw->tags[t].rts_head != BIPFW_NONE;
	reached[R_SMALL] += fw->cnt.small_received > 0;
	reached[R_LONG_RTS] += rts;
	reached[R_LONG_CTS] += fw->slots[0].state != BIPFW_SEND_WAIT_CTS ||
			       fw->slots[1].fin;
	reached[R_LONG_DATA] += rr->received > 0 ||
				fw->tags[READY_RECV_TAG].received > 0 ||
				fw->peers[3].discarding;
	reached[R_ACK] += fw->peers[1].tx.una > 0 || fw->peers[3].tx.una > 0;
	reached[R_NACK] += fw->cnt.nacks_received > 0;
	reached[R_CLOSE] += fw->peers[1].state == BIPFW_PEER_CLOSED ||
			    fw->peers[3].state == BIPFW_PEER_CLOSED;
	reached[R_malformed] += fw->cnt.dropped_bad + fw->cnt.dropped_foreign > 0;
}

/* bipfw_drain's handler: reads every byte it is given (the sanitizers
 * see any read out of bounds), from a node of the job. */
static int take(void *arg, const void *data, size_t len, int node)
{
	static volatile uint8_t sink;
	const uint8_t *b = data;

	(void)arg;
	if (node < 0 || node >= NODES || len > BIP_SMALL_MAX)
		abort();
	for (size_t i = 0; i < len; i++)
		sink ^= b[i];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t rbuf[2][3 * PKT], sbuf[3 * PKT];
	static struct fake f;
	struct iovec iov = { sbuf, 100 };
	struct bipfw *fw;
	uint32_t gen;
	bool direct;

	if (!size)
		return 0;
	if (!reporting++) {
		bip_log_threshold = -1; /* every input is a malformed packet */
		if (getenv("FUZZ_REPORT"))
			atexit(report);
	}
	f.left = 0;
	f.shown = false;
	memset(f.lent_n, 0, sizeof(f.lent_n));
	direct = (data[0] & 3) == 2;
	wire.flags = data[0] & 1 ? BIPFW_WIRE_LOSSY
		     : direct   ? BIPFW_WIRE_PEEK_COPY
				: 0;
	wire.keep = direct ? fake_keep : NULL;
	wire.unkeep = direct ? fake_unkeep : NULL;
	f.at = direct ? 0 : MISALIGN;
	if (bipfw_create(&cfg, &fw) || bipfw_wire_add(fw, &wire, &f) != 0)
		abort();
	for (int i = 1; i < NODES; i++)
		bipfw_port_set(fw, i, 0);
	bipfw_post_long(fw, 1, SEND_TAG, sbuf, sizeof(sbuf), 0, &gen);
	bipfw_post_long(fw, 1, READY_TAG, sbuf, sizeof(sbuf),
			BIPFW_LONG_READY, &gen);
	bipfw_post_small(fw, 1, &iov, 1);
	bipfw_post_small(fw, 3, &iov, 1);
	bipfw_post_lrecv(fw, RECV_TAG, rbuf[0], sizeof(rbuf[0]), &gen);
	bipfw_post_lrecv(fw, READY_RECV_TAG, rbuf[1], PKT, &gen);
	bipfw_peer_lost(fw, 2, BIPFW_PEER_CLOSED);
	bipfw_step(fw); /* what was posted goes out first */
	f.p = data + 1;
	f.left = size - 1;
	for (unsigned turn = 0; f.left >= 2 + sizeof(struct bip_pkt_hdr);
	     turn++) {
		const void *msg;
		size_t len;
		int node;

		/* The host takes what arrived, so the queue has room; a
		 * direct wire's small messages come by its peeks, or every
		 * other turn by a drain's handler. */
		if (!direct)
			bipfw_step(fw);
		if (direct && turn % 2)
			bipfw_drain(fw, 64, take, NULL);
		while (bipfw_small_peek(fw, &msg, &len, &node) == 0)
			bipfw_small_pop(fw);
		if (direct)
			bipfw_poll(fw);
		bipfw_take_error(fw);
	}
	bipfw_step(fw);
	tally(fw);
	bipfw_destroy(fw);
	return 0;
}

#else /* FUZZ_SEEDS: write the seed corpus into argv[1] */

static uint8_t out[1 << 16];
static size_t outlen;
static uint32_t seq[NODES];

static void record(const struct bip_pkt_hdr *h, const void *payload,
		   uint16_t len, int lossy)
{
	struct bip_pkt_hdr c = *h;

	if (lossy) {
		c.flags |= BIP_PKTF_CSUM;
		c.csum = bipfw_csum(payload, len);
		bipfw_hdr_seal(&c);
	}
	memcpy(out + outlen, &len, 2);
	memcpy(out + outlen + 2, &c, sizeof(c));
	memcpy(out + outlen + 2 + sizeof(c), payload, len);
	outlen += 2 + sizeof(c) + len;
}

/* A sequenced packet from src, in order. */
static struct bip_pkt_hdr pkt(int src, unsigned type, uint16_t flags,
			      uint32_t len)
{
	return (struct bip_pkt_hdr){
		.job_key = KEY, .version = BIP_WIRE_VERSION,
		.type = (uint8_t)type, .flags = flags, .src = (uint16_t)src,
		.dst = 0, .seq = seq[src]++, .len = len,
	};
}

static void save(const char *dir, const char *name, int mode)
{
	static const char *const suffix[] = { "", "-lossy", "-direct" };
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, suffix[mode]);
	fp = fopen(path, "wb");
	if (!fp || fputc(mode, fp) == EOF ||
	    fwrite(out, 1, outlen, fp) != outlen || fclose(fp)) {
		perror(path);
		exit(1);
	}
	outlen = 0;
	memset(seq, 0, sizeof(seq));
}

static void seeds(const char *dir, int mode)
{
	int lossy = mode & 1;
	static uint8_t data[3 * PKT];
	struct bip_pkt_hdr h;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);

	/* Small messages, inline and not, then an ack for what we sent. */
	h = pkt(1, BIP_PKT_SMALL, BIP_PKTF_INLINE, 8);
	memcpy(h.inline_data, data, 8);
	record(&h, NULL, 0, lossy);
	h = pkt(1, BIP_PKT_SMALL, 0, 100);
	record(&h, data, 100, lossy);
	h = pkt(3, BIP_PKT_SMALL, 0, PKT);
	record(&h, data, PKT, lossy);
	h = (struct bip_pkt_hdr){ .job_key = KEY, .version = BIP_WIRE_VERSION,
				  .type = BIP_PKT_ACK, .src = 1, .ack = 3 };
	record(&h, NULL, 0, lossy);
	save(dir, "small", mode);

	/* Small messages outside the sequence (taken on a lossless wire,
	 * dropped on a lossy one) between sequenced ones, one carrying an
	 * ack, one claiming a number. */
	h = (struct bip_pkt_hdr){ .job_key = KEY, .version = BIP_WIRE_VERSION,
				  .type = BIP_PKT_SMALL, .src = 1, .len = 8,
				  .flags = BIP_PKTF_NOSEQ | BIP_PKTF_INLINE };
	memcpy(h.inline_data, data, 8);
	record(&h, NULL, 0, lossy);
	h = pkt(1, BIP_PKT_SMALL, BIP_PKTF_INLINE, 8);
	record(&h, NULL, 0, lossy);
	h = (struct bip_pkt_hdr){ .job_key = KEY, .version = BIP_WIRE_VERSION,
				  .type = BIP_PKT_SMALL, .src = 1, .len = 100,
				  .flags = BIP_PKTF_NOSEQ, .ack = 2 };
	record(&h, data, 100, lossy);
	h.seq = 5;
	record(&h, data, 100, lossy);
	save(dir, "unsequenced", mode);

	/* A stream outside the sequence with a sequenced packet in it: its
	 * turns queue lent packets, and takes straight from the wire lend
	 * others; each must come back in its turn (fake_unkeep). */
	for (int i = 0; i < 40; i++) {
		if (i == 4) {
			h = pkt(1, BIP_PKT_SMALL, 0, 100);
			record(&h, data, 100, lossy);
		}
		h = (struct bip_pkt_hdr){ .job_key = KEY,
					  .version = BIP_WIRE_VERSION,
					  .type = BIP_PKT_SMALL, .src = 1,
					  .len = 100, .flags = BIP_PKTF_NOSEQ };
		record(&h, data + i, 100, lossy);
	}
	save(dir, "lent-stream", mode);

	/* More than the queue holds in one turn: refused and NACKed busy on
	 * a lossy wire, held on a lossless one. */
	for (int i = 0; i < 12; i++) {
		h = pkt(1, BIP_PKT_SMALL, BIP_PKTF_INLINE, 4);
		record(&h, NULL, 0, lossy);
	}
	save(dir, "overflow", mode);

	/* An announced long message into the posted receive, its data. */
	h = pkt(1, BIP_PKT_LONG_RTS, 0, 0);
	h.tag = RECV_TAG;
	h.msg_id = 77;
	h.offset = 2 * PKT + 10;
	record(&h, NULL, 0, lossy);
	for (uint32_t off = 0; off < 2 * PKT + 10; off += PKT) {
		uint32_t n = 2 * PKT + 10 - off < PKT ? 2 * PKT + 10 - off : PKT;

		h = pkt(1, BIP_PKT_LONG_DATA, 0, n);
		h.tag = RECV_TAG;
		h.msg_id = 77;
		h.offset = off;
		record(&h, data + off, (uint16_t)n, lossy);
	}
	save(dir, "long-receive", mode);

	/* The CTS our long send waits for, then the ready send's verdict. */
	h = pkt(1, BIP_PKT_LONG_CTS, 0, 0);
	h.tag = 1;
	h.msg_id = SEND_MSG_ID;
	h.offset = sizeof(data);
	record(&h, NULL, 0, lossy);
	h = pkt(1, BIP_PKT_LONG_CTS, BIP_PKTF_READY, 0);
	h.tag = READY_TAG;
	h.msg_id = READY_MSG_ID;
	record(&h, NULL, 0, lossy);
	h = pkt(1, BIP_PKT_LONG_CTS, BIP_PKTF_READY | BIP_PKTF_REFUSED, 0);
	h.msg_id = READY_MSG_ID;
	record(&h, NULL, 0, lossy);
	h = pkt(1, BIP_PKT_LONG_CTS, BIP_PKTF_TRUNC, 0);
	h.msg_id = SEND_MSG_ID;
	record(&h, NULL, 0, lossy);
	save(dir, "long-send", mode);

	/* Ready-mode data: into the posted receive (too long: truncated),
	 * and onto a tag with none (refused, then skipped). */
	for (int tag = READY_RECV_TAG; tag <= 2; tag++)
		for (uint32_t off = 0; off < 2 * PKT; off += PKT) {
			h = pkt(3, BIP_PKT_LONG_DATA, BIP_PKTF_READY, PKT);
			h.tag = (uint32_t)tag;
			h.msg_id = 40 + (uint32_t)tag;
			h.offset = off;
			h.addr = 2 * PKT;
			record(&h, data + off, PKT, lossy);
		}
	save(dir, "ready", mode);

	/* NACKs (busy and not), a duplicate, a gap, a closed peer, a close. */
	h = pkt(1, BIP_PKT_SMALL, BIP_PKTF_INLINE, 4);
	record(&h, NULL, 0, lossy);
	h = (struct bip_pkt_hdr){ .job_key = KEY, .version = BIP_WIRE_VERSION,
				  .type = BIP_PKT_NACK, .src = 1, .seq = 0,
				  .flags = BIP_PKTF_BUSY };
	record(&h, NULL, 0, lossy);
	h.flags = 0;
	h.seq = 1;
	record(&h, NULL, 0, lossy);
	h = pkt(1, BIP_PKT_SMALL, BIP_PKTF_INLINE, 4);
	h.seq = 0; /* a duplicate */
	record(&h, NULL, 0, lossy);
	h.seq = 9; /* after a gap */
	record(&h, NULL, 0, lossy);
	h = pkt(2, BIP_PKT_SMALL, BIP_PKTF_INLINE, 4);
	record(&h, NULL, 0, lossy);
	h = pkt(3, BIP_PKT_CLOSE, 0, 0);
	record(&h, NULL, 0, lossy);
	save(dir, "control", mode);

	/* Packets to drop: another job's, a bad version, a foreign node. */
	h = pkt(1, BIP_PKT_SMALL, BIP_PKTF_INLINE, 4);
	h.job_key ^= 1;
	record(&h, NULL, 0, lossy);
	h.job_key = KEY;
	h.version = 99;
	record(&h, NULL, 0, lossy);
	h.version = BIP_WIRE_VERSION;
	h.src = NODES;
	record(&h, NULL, 0, lossy);
	save(dir, "malformed", mode);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	seeds(argv[1], 0);
	seeds(argv[1], 1);
	seeds(argv[1], 2);
	return 0;
}

#endif
