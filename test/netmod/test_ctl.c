/*
 * test_ctl.c - the netmod's MPICH-free units on their own: decoding control
 * messages (every type, every reason to drop one), the business card, and
 * request handles (live, stale, forged, reused, many).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip_ctl.h"
#include "bip_handle.h"
#include "unit.h"


static int handler_ok(unsigned id)
{
	return id == 3;
}

static const MPIDI_BIP_ctl_peer_t peer = {
	.credits = 10, .ncredits = 16, .rts3_max = 1000,
	.handler_ok = handler_ok,
};

/* Decode len bytes of msg; expect the reason want. */
static void expect(const void *msg, size_t len, int want, const char *what)
{
	MPIDI_BIP_ctl_msg_t m;
	size_t fixed = 0;
	int got = MPIDI_BIP_ctl_decode(msg, len, &peer, &m, &fixed);

	CHECK(got == want, "%s: %s, want %s", what,
	      MPIDI_BIP_ctl_drop_name(got), MPIDI_BIP_ctl_drop_name(want));
	if (!got)
		CHECK(fixed <= len, "%s: fixed part %zu of %zu bytes", what,
		      fixed, len);
}

/* An ACK's flags: the combinations a receiver sends, and what it never
 * does. */
static const struct {
	uint32_t flags;
	int want;
	const char *what;
} acks[] = {
	{ 0, 0, "ack" },
	{ MPIDI_BIP_ACK_LAST, 0, "last ack of a truncated message" },
	{ MPIDI_BIP_ACK_READ | MPIDI_BIP_ACK_LAST, 0,
	  "bytes the receiver read itself" },
	{ MPIDI_BIP_ACK_READ | MPIDI_BIP_ACK_FAILED, 0, "a read that failed" },
	{ MPIDI_BIP_ACK_FAILED, 0, "a receive BIP refused" },
	{ MPIDI_BIP_ACK_WITHDRAWN, 0, "a withdrawn announcement dropped" },
	{ MPIDI_BIP_ACK_WITHDRAWN | MPIDI_BIP_ACK_READ, MPIDI_BIP_CTL_DROP_SIZE,
	  "dropped and read at once" },
	{ MPIDI_BIP_ACK_CHOSEN | MPIDI_BIP_ACK_LAST, 0,
	  "bytes the receiver chose to be sent" },
	{ MPIDI_BIP_ACK_CHOSEN | MPIDI_BIP_ACK_READ, MPIDI_BIP_CTL_DROP_SIZE,
	  "chosen to be sent and read at once" },
	{ MPIDI_BIP_ACK_CHOSEN | MPIDI_BIP_ACK_FAILED, MPIDI_BIP_CTL_DROP_SIZE,
	  "chosen to be sent and failed to read" },
	{ MPIDI_BIP_ACK_CHOSEN | MPIDI_BIP_ACK_WITHDRAWN,
	  MPIDI_BIP_CTL_DROP_SIZE, "chosen to be sent and dropped" },
	{ 32, MPIDI_BIP_CTL_DROP_SIZE, "unknown ack flag" },
};

/* A SHORT message's header takes a whole line exactly where that costs
 * no line more (the data then starts on a line); the receiver takes the
 * data as the message's last h.len bytes behind either header, and no
 * other gap. */
static void test_short_line(unsigned char *buf)
{
	static const struct {
		size_t data_sz, hdr_len;
	} rule[] = {
		{ 0, 16 }, { 16, 16 }, { 48, 16 }, { 49, 64 }, { 64, 64 },
		{ 65, 16 }, { 112, 16 }, { 113, 64 }, { 1024, 64 },
		{ 1040, 16 }, { 4095, 64 }, { 4096, 64 },
		{ BIP_SMALL_MAX - 64, 64 }, { BIP_SMALL_MAX - 16, 16 },
	};
	MPIDI_BIP_ctl_t h = { .type = MPIDI_BIP_CTL_SHORT, .len = 100 };
	MPIDI_BIP_ctl_msg_t m;
	size_t fixed = 0;

	for (size_t i = 0; i < sizeof(rule) / sizeof(rule[0]); i++)
		CHECK(MPIDI_BIP_short_hdr_len(rule[i].data_sz) ==
			      rule[i].hdr_len,
		      "%zu bytes of data: a header of %zu, want %zu",
		      rule[i].data_sz,
		      MPIDI_BIP_short_hdr_len(rule[i].data_sz),
		      rule[i].hdr_len);
	memset(buf, 0, 256);
	memcpy(buf, &h, sizeof(h));
	CHECK(MPIDI_BIP_ctl_decode(buf, 164, &peer, &m, &fixed) == 0 &&
		      fixed == 64,
	      "short behind a header line: data at %zu, want 64", fixed);
	CHECK(MPIDI_BIP_ctl_decode(buf, 116, &peer, &m, &fixed) == 0 &&
		      fixed == 16,
	      "short behind a 16-byte header: data at %zu, want 16", fixed);
	expect(buf, 148, MPIDI_BIP_CTL_DROP_LENGTH, "short, 32-byte gap");
	expect(buf, 165, MPIDI_BIP_CTL_DROP_LENGTH, "short, 65-byte gap");
	h.len = 0;
	memcpy(buf, &h, sizeof(h));
	expect(buf, 64, 0, "empty short behind a header line");
	expect(buf, 63, MPIDI_BIP_CTL_DROP_LENGTH, "empty short, 47-byte gap");
}

static void test_decode(void)
{
	unsigned char buf[256] = { 0 };
	MPIDI_BIP_ctl_t h = { .type = MPIDI_BIP_CTL_SHORT, .len = 8 };
	MPIDI_BIP_ctl_rts_t rts = { .h.type = MPIDI_BIP_CTL_RTS3,
				    .data_sz = 1000 };
	MPIDI_BIP_ctl_ack_t ack = { .h.type = MPIDI_BIP_CTL_ACK, .len = 5 };
	MPIDI_BIP_ctl_am_t am = { .h.type = MPIDI_BIP_CTL_AM,
				  .handler_id = 3, .am_hdr_sz = 4,
				  .data_sz = 6 };

	expect(buf, 3, MPIDI_BIP_CTL_DROP_TOO_SHORT, "3 bytes");
	expect(buf, 16, MPIDI_BIP_CTL_DROP_TYPE, "type 0");
	buf[0] = MPIDI_BIP_CTL_NTYPES;
	expect(buf, 16, MPIDI_BIP_CTL_DROP_TYPE, "type past the last");

	memcpy(buf, &h, sizeof(h));
	expect(buf, 24, 0, "short");
	expect(buf, 23, MPIDI_BIP_CTL_DROP_LENGTH, "short, data missing");
	test_short_line(buf);
	h.rank = -2;
	memcpy(buf, &h, sizeof(h));
	expect(buf, 24, MPIDI_BIP_CTL_DROP_SIZE, "short from rank -2");
	h = (MPIDI_BIP_ctl_t){ .type = MPIDI_BIP_CTL_CREDITS, .credits = 6 };
	memcpy(buf, &h, sizeof(h));
	expect(buf, 16, 0, "credits back up to N");
	h.credits = 7;
	memcpy(buf, &h, sizeof(h));
	expect(buf, 16, MPIDI_BIP_CTL_DROP_CREDITS, "credits beyond N");
	h.credits = 0;
	memcpy(buf, &h, sizeof(h));
	expect(buf, 17, MPIDI_BIP_CTL_DROP_LENGTH, "credits with a tail");

	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts), 0, "three-way at its limit");
	expect(buf, sizeof(rts) - 1, MPIDI_BIP_CTL_DROP_TOO_SHORT,
	       "three-way cut");
	rts.addr = 0x4141414141414141ull;
	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts), 0, "three-way to be read where it lies");
	rts.data_sz = 1001;
	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts), MPIDI_BIP_CTL_DROP_SIZE,
	       "three-way beyond the sender's threshold");
	rts.h.type = MPIDI_BIP_CTL_RNDV;
	rts.data_sz = MPIDI_BIP_DATA_MAX;
	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts), 0, "rendezvous of the largest size");
	rts.addr = 0;
	rts.data_sz = MPIDI_BIP_DATA_MAX + 1;
	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts), MPIDI_BIP_CTL_DROP_SIZE,
	       "rendezvous beyond an MPI_Aint");

	for (size_t i = 0; i < sizeof(acks) / sizeof(acks[0]); i++) {
		ack.flags = acks[i].flags;
		memcpy(buf, &ack, sizeof(ack));
		expect(buf, sizeof(ack), acks[i].want, acks[i].what);
	}
	ack.h.type = MPIDI_BIP_CTL_WITHDRAW;
	ack.flags = 0;
	ack.len = 0;
	memcpy(buf, &ack, sizeof(ack));
	expect(buf, sizeof(ack), 0, "withdraw");
	expect(buf, sizeof(ack) + 1, MPIDI_BIP_CTL_DROP_LENGTH,
	       "withdraw with a tail");
	ack.len = 5;
	memcpy(buf, &ack, sizeof(ack));
	expect(buf, sizeof(ack), MPIDI_BIP_CTL_DROP_SIZE,
	       "withdraw of a byte range");
	ack.h.type = MPIDI_BIP_CTL_ACK;
	ack.h.type = MPIDI_BIP_CTL_AM_CTS;
	ack.flags = MPIDI_BIP_ACK_LAST;
	memcpy(buf, &ack, sizeof(ack));
	expect(buf, sizeof(ack), MPIDI_BIP_CTL_DROP_SIZE, "AM_CTS with a flag");
	ack.flags = MPIDI_BIP_ACK_FAILED;
	memcpy(buf, &ack, sizeof(ack));
	expect(buf, sizeof(ack), 0, "AM_CTS of a receive BIP refused");
	ack.flags = MPIDI_BIP_ACK_FAILED | MPIDI_BIP_ACK_READ;
	memcpy(buf, &ack, sizeof(ack));
	expect(buf, sizeof(ack), MPIDI_BIP_CTL_DROP_SIZE,
	       "AM_CTS of a failed read");
	ack.h.type = MPIDI_BIP_CTL_ACK;
	ack.flags = 0;
	ack.offset = ~0ull - 2;
	memcpy(buf, &ack, sizeof(ack));
	expect(buf, sizeof(ack), MPIDI_BIP_CTL_DROP_SIZE, "ack that wraps");
	ack.h.type = MPIDI_BIP_CTL_AM_CTS;
	ack.offset = 0;
	ack.len = ~0ull;
	memcpy(buf, &ack, sizeof(ack));
	expect(buf, sizeof(ack), MPIDI_BIP_CTL_DROP_SIZE, "huge AM_CTS");

	{
		/* A whole struct needs no buffer: decode reads it in place. */
		MPIDI_BIP_ctl_push_t push = {
			.h.type = MPIDI_BIP_CTL_PUSH, .sreq = 7,
			.offset = 1 << 20, .len = 1 << 20,
			.addr = 0x7f0000000000ull, .split = 9,
		};

		expect(&push, sizeof(push), 0, "push");
		memcpy(buf, &push, sizeof(push));
		expect(buf, sizeof(push) + 1, MPIDI_BIP_CTL_DROP_LENGTH,
		       "push with a tail");
		push.len = 0;
		expect(&push, sizeof(push), MPIDI_BIP_CTL_DROP_SIZE,
		       "push of nothing");
		push.len = MPIDI_BIP_DATA_MAX + 1;
		expect(&push, sizeof(push), MPIDI_BIP_CTL_DROP_SIZE,
		       "push beyond an MPI_Aint");
		push.len = 8;
		push.addr = 0;
		expect(&push, sizeof(push), MPIDI_BIP_CTL_DROP_SIZE,
		       "push to nowhere");
	}
	ack = (MPIDI_BIP_ctl_ack_t){ .h.type = MPIDI_BIP_CTL_PUSHED,
				     .sreq = 9, .offset = 8, .len = 8 };
	expect(&ack, sizeof(ack), 0, "pushed");
	ack.flags = MPIDI_BIP_ACK_FAILED;
	expect(&ack, sizeof(ack), 0, "push failed");
	ack.flags = MPIDI_BIP_ACK_READ;
	expect(&ack, sizeof(ack), MPIDI_BIP_CTL_DROP_SIZE, "pushed and read");
	ack.flags = 0;
	ack.bip_tag = 3;
	expect(&ack, sizeof(ack), MPIDI_BIP_CTL_DROP_SIZE, "pushed with a tag");

	memcpy(buf, &am, sizeof(am));
	expect(buf, sizeof(am) + 10, 0, "active message");
	expect(buf, sizeof(am) + 9, MPIDI_BIP_CTL_DROP_LENGTH,
	       "active message short of data");
	am.am_hdr_sz = 1000;
	memcpy(buf, &am, sizeof(am));
	expect(buf, sizeof(am) + 10, MPIDI_BIP_CTL_DROP_LENGTH,
	       "header beyond the message");
	am.handler_id = 4;
	memcpy(buf, &am, sizeof(am));
	expect(buf, sizeof(am) + 10, MPIDI_BIP_CTL_DROP_HANDLER,
	       "no such handler");
	am = (MPIDI_BIP_ctl_am_t){ .h.type = MPIDI_BIP_CTL_AM_RTS,
				   .handler_id = 3, .am_hdr_sz = 7,
				   .data_sz = 1 << 30 };
	memcpy(buf, &am, sizeof(am));
	expect(buf, sizeof(am) + 7, 0, "announced active message");
	expect(buf, sizeof(am) + 8, MPIDI_BIP_CTL_DROP_LENGTH,
	       "announcement with a tail");
	/* Eager pieces: the first within the sender's three-way limit and
	 * its own size, carrying h.len bytes; the next ones bytes only. */
	rts = (MPIDI_BIP_ctl_rts_t){ .h.type = MPIDI_BIP_CTL_EAGER,
				     .h.len = 100, .data_sz = 1000 };
	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts) + 100, 0, "eager, first piece");
	expect(buf, sizeof(rts) + 99, MPIDI_BIP_CTL_DROP_LENGTH,
	       "eager piece short of data");
	rts.data_sz = 1001;
	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts) + 100, MPIDI_BIP_CTL_DROP_SIZE,
	       "eager beyond the sender's three-way limit");
	rts.data_sz = 99;
	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts) + 100, MPIDI_BIP_CTL_DROP_SIZE,
	       "first piece larger than its message");
	rts.data_sz = 1000;
	rts.addr = 64;
	memcpy(buf, &rts, sizeof(rts));
	expect(buf, sizeof(rts) + 100, MPIDI_BIP_CTL_DROP_SIZE,
	       "eager piece with an address");
	h = (MPIDI_BIP_ctl_t){ .type = MPIDI_BIP_CTL_MORE, .len = 50 };
	memcpy(buf, &h, sizeof(h));
	expect(buf, sizeof(h) + 50, 0, "next piece");
	expect(buf, sizeof(h) + 51, MPIDI_BIP_CTL_DROP_LENGTH,
	       "next piece with a tail");
	h.len = 0;
	memcpy(buf, &h, sizeof(h));
	expect(buf, sizeof(h), MPIDI_BIP_CTL_DROP_LENGTH, "empty piece");

	CHECK(strcmp(MPIDI_BIP_ctl_drop_name(99), "INVALID") == 0 &&
		      strcmp(MPIDI_BIP_ctl_type_name(MPIDI_BIP_CTL_ACK),
			     "ACK") == 0,
	      "names");
}

static void test_card(void)
{
	static const char *const bad[] = {
		"", "bipnm7", "bipnm7;", "bipnm7;4;", "bipnm7;256;10;1;1;h;x",
		"bipnm7;-4;10;1;1;h;x", "bipnm7;4;9223372036854775808;1;1;h;x",
		"bipnm6;4;10;1;1;h;x", "bipnm7;4 ;10;1;1;h;x", "bipnm7;4;10;1;x",
		"bipnm7;4;10;1;1;;x", "bipnm7;4;10;1;2147483648;h;x",
		"bipnm7;4;10;1;1;h o;x", "bipnm7;4;10;1;1;h%s;x",
		"bipnm7;4;10;2;1;h;x", "bipnm7;4;10;;1;h;x",
	};
	MPIDI_BIP_card_t c = { 17, 123456, 1, 4242, "node-1.example_a" }, d;
	const char *rest;
	char buf[256], host[MPIDI_BIP_HOST_MAX], longname[200];

	CHECK(MPIDI_BIP_card_format(buf, sizeof(buf), &c, "bip2;x") == 0,
	      "format");
	CHECK(MPIDI_BIP_card_parse(buf, &d, &rest) == 0 && d.credits == 17 &&
		      d.rts3_max == 123456 && d.barrier == 1 &&
		      d.pid == 4242 &&
		      strcmp(d.host, c.host) == 0 &&
		      strcmp(rest, "bip2;x") == 0,
	      "round trip of %s", buf);
	/* Our host name as a card carries it: short, of the safe set. */
	MPIDI_BIP_card_host(host, "h;1 %s");
	CHECK(strcmp(host, "h_1__s") == 0, "host name sanitized: %s", host);
	MPIDI_BIP_card_host(host, "");
	CHECK(strcmp(host, "_") == 0, "empty host name: '%s'", host);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	MPIDI_BIP_card_host(c.host, longname);
	CHECK(strlen(c.host) == MPIDI_BIP_HOST_MAX - 1 &&
		      MPIDI_BIP_card_format(buf, sizeof(buf), &c, "x") == 0 &&
		      MPIDI_BIP_card_parse(buf, &d, &rest) == 0,
	      "a long host name: %s", buf);
	CHECK(MPIDI_BIP_card_format(buf, 10, &c, "bip2;x") == -1,
	      "a card that does not fit");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(MPIDI_BIP_card_parse(bad[i], &d, &rest) == -1,
		      "card '%s' accepted", bad[i]);
}

static void test_handles(void)
{
	MPIDI_BIP_handles_t t = { 0 };
	static int objs[1000];
	uint64_t h[1000], old;

	CHECK(MPIDI_BIP_handle_get(&t, 0) == NULL, "empty table");
	for (int i = 0; i < 1000; i++) {
		h[i] = MPIDI_BIP_handle_new(&t, &objs[i]);
		CHECK(h[i] != 0, "handle %d", i);
	}
	for (int i = 0; i < 1000; i++)
		CHECK(MPIDI_BIP_handle_get(&t, h[i]) == &objs[i], "lookup %d",
		      i);
	CHECK(t.used == 1000, "%u in use", t.used);
	old = h[500];
	MPIDI_BIP_handle_free(&t, old);
	MPIDI_BIP_handle_free(&t, old); /* twice: no effect */
	CHECK(MPIDI_BIP_handle_get(&t, old) == NULL, "a freed handle names");
	h[500] = MPIDI_BIP_handle_new(&t, &objs[500]);
	CHECK(h[500] != old && MPIDI_BIP_handle_get(&t, old) == NULL &&
		      MPIDI_BIP_handle_get(&t, h[500]) == &objs[500],
	      "a reused slot answers to its new handle only");
	CHECK(MPIDI_BIP_handle_get(&t, old + (1ull << 32)) == &objs[500],
	      "the generation is part of the handle");
	CHECK(MPIDI_BIP_handle_get(&t, 0x4141414141414141ull) == NULL &&
		      MPIDI_BIP_handle_get(&t, ~0ull) == NULL &&
		      MPIDI_BIP_handle_get(&t, (uint64_t)(uintptr_t)&t) ==
			      NULL,
	      "forged handles");
	for (int i = 0; i < 1000; i++)
		MPIDI_BIP_handle_free(&t, h[i]);
	CHECK(t.used == 0, "%u still in use", t.used);
	for (uint32_t i = 0; i < t.cap; i++)
		CHECK(MPIDI_BIP_handle_at(&t, i) == NULL, "slot %u", i);
	MPIDI_BIP_handles_destroy(&t);
}

int main(void)
{
	test_decode();
	test_card();
	test_handles();
	return unit_result("control messages, cards and handles");
}
