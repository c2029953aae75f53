/*
 * knobs.c - every tunable of libbip, declared once in a table (name, type,
 * default, range, one sentence) that both the parser and bip_info use.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "knobs.h"
#include "log.h"

enum knob_kind { KNOB_COUNT, KNOB_POW2, KNOB_SIZE, KNOB_CHOICE };

struct knob {
	struct bip_knob_desc d;
	enum knob_kind kind;
	unsigned long long min, max;
	const char *const *choices; /* KNOB_CHOICE: NULL-terminated */
	size_t off;                 /* field in struct bip_knobs */
	size_t width;               /* its size */
};

static const char *const log_choices[] = { "error", "warn", "info", "debug",
					    "trace", NULL };
static const char *const idle_choices[] = { "block", "yield", "spin", NULL };

#define F(field) offsetof(struct bip_knobs, field), \
		 sizeof(((struct bip_knobs *)0)->field)

static const struct knob knobs[] = {
	{ { "BIP_LOG", "error|warn|info|debug|trace", "warn",
	    "Lowest level of the messages printed on stderr." },
	  KNOB_CHOICE, 0, 0, log_choices, F(log) },
	{ { "BIP_SMALL_QUEUE", "count", "256",
	    "Capacity of the small-message receive queue, in messages." },
	  KNOB_COUNT, 4, 65535, NULL, F(small_queue) },
	{ { "BIP_SEND_SLOTS", "count", "64",
	    "Outstanding sends (small ones until acknowledged, long ones "
	    "until complete)." },
	  KNOB_COUNT, 2, 4096, NULL, F(send_slots) },
	{ { "BIP_LONG_TAGS", "count", "64",
	    "Number of tags for long receives (tags 0..N-1)." },
	  KNOB_COUNT, 1, 4096, NULL, F(long_tags) },
	{ { "BIP_PACKET_SIZE", "size", "32k",
	    "Payload bytes per packet: long messages are cut into packets of "
	    "this size and pipelined; must be equal on every node." },
	  KNOB_SIZE, 4096, 4u << 20, NULL, F(packet_size) },
	{ { "BIP_WINDOW", "power of two", "128",
	    "Packets in flight per peer before acknowledgements are "
	    "needed." },
	  KNOB_POW2, 2, 32768, NULL, F(window) },
	{ { "BIP_ACK_EVERY", "count", "16",
	    "A receiver acknowledges at once after this many packets." },
	  KNOB_COUNT, 1, 32768, NULL, F(ack_every) },
	{ { "BIP_ACK_DELAY_US", "microseconds", "50",
	    "Otherwise it acknowledges after this delay (acks also ride on "
	    "every packet going back)." },
	  KNOB_COUNT, 0, 1000000, NULL, F(ack_delay_us) },
	{ { "BIP_RETRANS_US", "microseconds", "200000",
	    "Retransmission timeout on lossy wires." },
	  KNOB_COUNT, 100, 60000000, NULL, F(retrans_us) },
	{ { "BIP_NACK_BACKOFF_US", "microseconds", "20",
	    "First wait before resending to a receiver that had no buffer "
	    "(doubles up to 2 ms)." },
	  KNOB_COUNT, 1, 1000000, NULL, F(nack_backoff_us) },
	{ { "BIP_LIVENESS_MS", "milliseconds", "100",
	    "How often peers are checked for having died." },
	  KNOB_COUNT, 1, 60000, NULL, F(liveness_ms) },
	{ { "BIP_SHM_RING_SLOTS", "count", "32",
	    "Packets each shared-memory ring holds (one ring per peer)." },
	  KNOB_COUNT, 2, 65536, NULL, F(ring_slots) },
	{ { "BIP_SHM_CMA_MIN", "size|never", "never",
	    "Long messages of at least this size go by single-copy "
	    "cross-memory attach instead of the two-copy rings (the rings "
	    "measured faster at every size here)." },
	  KNOB_SIZE, 0, SIZE_MAX, NULL, F(cma_min) },
	{ { "BIP_IDLE", "block|yield|spin", "block",
	    "What a waiting process does once spinning is over: block until "
	    "traffic arrives, yield the core, or keep spinning." },
	  KNOB_CHOICE, 0, 0, idle_choices, F(idle) },
	{ { "BIP_SPIN_US", "microseconds", "50",
	    "How long a waiting process spins before yielding." },
	  KNOB_COUNT, 0, 10000000, NULL, F(spin_us) },
	{ { "BIP_YIELD_US", "microseconds", "1000",
	    "With BIP_IDLE=block: how long it yields before blocking." },
	  KNOB_COUNT, 0, 10000000, NULL, F(yield_us) },
	{ { "BIP_CLOSE_TIMEOUT_MS", "milliseconds", "10000",
	    "How long bip_close waits for unacknowledged sends." },
	  KNOB_COUNT, 0, 3600000, NULL, F(close_timeout_ms) },
};

#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

const struct bip_knob_desc *bip_knob(unsigned i)
{
	return i < NKNOBS ? &knobs[i].d : NULL;
}

static int parse_size(const char *s, unsigned long long *v)
{
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	if (strcmp(s, "never") == 0) {
		*v = SIZE_MAX;
		return 0;
	}
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || (n << shift) >> shift != n)
		return -1;
	*v = n << shift;
	return 0;
}

/* Parse one knob's text into v; 0 or -BIP_EINVAL with a reason. */
static int parse_knob(const struct knob *k, const char *text,
		      unsigned long long *v, char *why, size_t len)
{
	char *end;

	switch (k->kind) {
	case KNOB_CHOICE:
		for (unsigned i = 0; k->choices[i]; i++)
			if (strcmp(text, k->choices[i]) == 0) {
				*v = i;
				return 0;
			}
		snprintf(why, len, "%s=%s: expected one of %s", k->d.name, text,
			 k->d.type);
		return -BIP_EINVAL;
	case KNOB_SIZE:
		if (parse_size(text, v)) {
			snprintf(why, len,
				 "%s=%s: expected a size (bytes, or with "
				 "k/m/g)%s",
				 k->d.name, text,
				 k->max == SIZE_MAX ? " or never" : "");
			return -BIP_EINVAL;
		}
		break;
	case KNOB_COUNT:
	case KNOB_POW2:
		errno = 0;
		*v = strtoull(text, &end, 10);
		if (errno || end == text || *end || *text == '-') {
			snprintf(why, len, "%s=%s: expected a whole number",
				 k->d.name, text);
			return -BIP_EINVAL;
		}
		if (k->kind == KNOB_POW2 && (*v & (*v - 1))) {
			snprintf(why, len, "%s=%s: expected a power of two",
				 k->d.name, text);
			return -BIP_EINVAL;
		}
		break;
	}
	if (*v < k->min || *v > k->max) {
		snprintf(why, len, "%s=%s: out of range [%llu, %llu]",
			 k->d.name, text, k->min, k->max);
		return -BIP_EINVAL;
	}
	return 0;
}

static const char *knob_text(const struct knob *k)
{
	const char *v = getenv(k->d.name);

	return v && *v ? v : k->d.def;
}

int bip_knob_check(unsigned i, char *why, size_t len)
{
	unsigned long long v;
	char buf[256];

	if (i >= NKNOBS)
		return -BIP_EINVAL;
	return parse_knob(&knobs[i], knob_text(&knobs[i]), &v,
			  why ? why : buf, why ? len : sizeof(buf));
}

int bip_knobs_load(struct bip_knobs *out)
{
	for (unsigned i = 0; i < NKNOBS; i++) {
		const struct knob *k = &knobs[i];
		unsigned long long v;
		char why[256];
		uint8_t *field = (uint8_t *)out + k->off;

		if (parse_knob(k, knob_text(k), &v, why, sizeof(why))) {
			bip_err("invalid knob %s", why);
			return -BIP_EINVAL;
		}
		if (k->width == sizeof(size_t) && k->kind == KNOB_SIZE) {
			size_t s = (size_t)v;

			memcpy(field, &s, sizeof(s));
		} else {
			unsigned u = (unsigned)v;

			memcpy(field, &u, sizeof(u));
		}
	}
	bip_log_threshold = (int)out->log;
	return 0;
}
