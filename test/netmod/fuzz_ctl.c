/*
 * fuzz_ctl.c - libFuzzer harness for the netmod's decoding of what other
 * ranks send: control messages (MPIDI_BIP_ctl_decode, every type, against
 * a peer whose credits and limits the input chooses too) and the netmod's
 * business card. Built with -DFUZZ_SEEDS instead, it writes one well-formed
 * message of every type, and a card.
 *
 * Input: one byte of choice (bit 0: a card; else a message), for a message
 * 4 bytes of peer state (credits held, N, the three-way limit's log2,
 * handlers that exist), then the bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip_ctl.h"

static unsigned handlers; /* bit i: handler i exists */

static int handler_ok(unsigned id)
{
	return id < 8 && (handlers >> id & 1);
}

#ifndef FUZZ_SEEDS

/* With FUZZ_REPORT set: messages of each type that decoded (and so would
 * reach their handler), and drops by reason; printed at exit. */
static unsigned reached[MPIDI_BIP_CTL_NTYPES], dropped[MPIDI_BIP_CTL_NDROPS];
static int reporting;

static void report(void)
{
	for (int i = 1; i < MPIDI_BIP_CTL_NTYPES; i++)
		printf("reached %s %u\n", MPIDI_BIP_ctl_type_name(i),
		       reached[i]);
	for (int i = 1; i < MPIDI_BIP_CTL_NDROPS; i++)
		printf("reached drop-%s %u\n", MPIDI_BIP_ctl_drop_name(i),
		       dropped[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	MPIDI_BIP_ctl_peer_t peer = { .handler_ok = handler_ok };
	MPIDI_BIP_ctl_msg_t m;
	MPIDI_BIP_card_t c;
	const char *rest;
	size_t fixed;
	uint8_t *bytes;
	char *text;
	int why;

	if (!reporting++ && getenv("FUZZ_REPORT"))
		atexit(report);
	if (size < 5)
		return 0;
	if (data[0] & 1) {
		text = malloc(size);
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		if (MPIDI_BIP_card_parse(text, &c, &rest) == 0 &&
		    (c.credits > 255 || c.rts3_max > MPIDI_BIP_DATA_MAX ||
		     c.barrier > 1 || c.pid > INT32_MAX ||
		     strlen(c.host) != strspn(c.host, MPIDI_BIP_HOST_CHARS) ||
		     !c.host[0] || rest < text || rest > text + size - 1))
			abort();
		free(text);
		return 0;
	}
	peer.credits = data[1];
	peer.ncredits = data[2];
	peer.rts3_max = 1ull << (data[3] % 64);
	handlers = data[4];
	/* The message in a buffer of its own size: reads beyond it show. */
	bytes = malloc(size - 5 ? size - 5 : 1);
	memcpy(bytes, data + 5, size - 5);
	why = MPIDI_BIP_ctl_decode(bytes, size - 5, &peer, &m, &fixed);
	dropped[why]++;
	if (!why) {
		reached[m.h.type]++;
		/* What dispatch relies on, checked. */
		if (fixed > size - 5 || m.h.type == MPIDI_BIP_CTL_NONE ||
		    m.h.type >= MPIDI_BIP_CTL_NTYPES ||
		    m.h.credits > peer.ncredits - peer.credits)
			abort();
		if (m.h.type == MPIDI_BIP_CTL_SHORT &&
		    fixed + m.h.len != size - 5)
			abort();
		if ((m.h.type == MPIDI_BIP_CTL_ACK ||
		     m.h.type == MPIDI_BIP_CTL_AM_CTS) &&
		    (m.ack.offset > MPIDI_BIP_DATA_MAX ||
		     m.ack.len > MPIDI_BIP_DATA_MAX))
			abort();
		if (m.h.type == MPIDI_BIP_CTL_AM &&
		    fixed + m.am.am_hdr_sz + m.am.data_sz != size - 5)
			abort();
	}
	free(bytes);
	return 0;
}

#else /* FUZZ_SEEDS */

static void save(const char *dir, const char *name, const void *head,
		 size_t hlen, const void *msg, size_t len)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp || fwrite(head, 1, hlen, fp) != hlen ||
	    fwrite(msg, 1, len, fp) != len || fclose(fp)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	/* A message; 10 credits held of 16; three-way up to 64 KiB;
	 * handlers 0..7 exist. */
	static const uint8_t peer[5] = { 0, 10, 16, 16, 0xff };
	uint8_t buf[256] = { 0 };
	MPIDI_BIP_ctl_t h = { .type = MPIDI_BIP_CTL_SHORT, .credits = 2,
			      .len = 8 };
	MPIDI_BIP_ctl_rts_t rts = { .h.type = MPIDI_BIP_CTL_RTS3,
				    .data_sz = 5000, .sreq = 1ull << 32 };
	MPIDI_BIP_ctl_ack_t ack = { .h.type = MPIDI_BIP_CTL_ACK,
				    .sreq = 1ull << 32, .len = 5000,
				    .flags = MPIDI_BIP_ACK_LAST };
	MPIDI_BIP_ctl_am_t am = { .h.type = MPIDI_BIP_CTL_AM,
				  .handler_id = 3, .am_hdr_sz = 8,
				  .data_sz = 16 };
	MPIDI_BIP_ctl_push_t push = { .h.type = MPIDI_BIP_CTL_PUSH,
				      .sreq = 1ull << 32, .offset = 1 << 16,
				      .len = 1 << 16, .addr = 0x7f0000001000,
				      .split = 2ull << 32 };
	MPIDI_BIP_card_t card = { .credits = 32, .rts3_max = 262143,
				  .pid = 4242, .host = "node1" };
	char text[256];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	memcpy(buf, &h, sizeof(h));
	save(argv[1], "short", peer, 5, buf, sizeof(h) + 8);
	/* Behind a header line (MPIDI_BIP_short_hdr_len). */
	save(argv[1], "short-line", peer, 5, buf, MPIDI_BIP_SHORT_LINE + 8);
	h.type = MPIDI_BIP_CTL_CREDITS;
	h.len = 0;
	save(argv[1], "credits", peer, 5, &h, sizeof(h));
	save(argv[1], "rts3", peer, 5, &rts, sizeof(rts));
	rts.h.type = MPIDI_BIP_CTL_RNDV;
	rts.data_sz = 1ull << 40;
	save(argv[1], "rndv", peer, 5, &rts, sizeof(rts));
	save(argv[1], "ack", peer, 5, &ack, sizeof(ack));
	ack.flags = MPIDI_BIP_ACK_CHOSEN;
	save(argv[1], "ack-chosen", peer, 5, &ack, sizeof(ack));
	ack.flags = MPIDI_BIP_ACK_FAILED;
	save(argv[1], "ack-failed", peer, 5, &ack, sizeof(ack));
	ack.h.type = MPIDI_BIP_CTL_AM_CTS;
	ack.flags = 0;
	save(argv[1], "am-cts", peer, 5, &ack, sizeof(ack));
	save(argv[1], "push", peer, 5, &push, sizeof(push));
	ack.h.type = MPIDI_BIP_CTL_PUSHED;
	ack.flags = MPIDI_BIP_ACK_FAILED;
	save(argv[1], "pushed", peer, 5, &ack, sizeof(ack));
	memcpy(buf, &am, sizeof(am));
	save(argv[1], "am", peer, 5, buf, sizeof(am) + 24);
	am.h.type = MPIDI_BIP_CTL_AM_RTS;
	am.data_sz = 1 << 20;
	memcpy(buf, &am, sizeof(am));
	save(argv[1], "am-rts", peer, 5, buf, sizeof(am) + 8);
	MPIDI_BIP_card_format(text, sizeof(text), &card, "bip2;32768;64;64;x");
	save(argv[1], "card", "\1", 1, text, strlen(text));
	return 0;
}

#endif
