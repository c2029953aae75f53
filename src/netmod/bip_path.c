/*
 * bip_path.c - read or be sent: the receiver's choice for a long message
 * it may read, by measured cost (bip_path.h says why it is measured).
 */
#include <stdio.h>

#include "bip_path.h"

/* Below 16 KiB, then one class per power of two, 1 MiB and over. */
static unsigned class_of(uint64_t len)
{
	unsigned c = 0;

	for (uint64_t l = len >> 14; l && c < MPIDI_BIP_PATH_CLASSES - 1;
	     l >>= 1)
		c++;
	return c;
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Of the samples kept (filled in order: 0 marks the end). */
static uint32_t median(const uint32_t *v)
{
	_Static_assert(MPIDI_BIP_PATH_SAMPLES == 3, "a median of three");
	if (!v[1])
		return v[0];
	if (!v[2])
		return (uint32_t)(((uint64_t)v[0] + v[1]) / 2);
	return MAX(MIN(v[0], v[1]), MIN(MAX(v[0], v[1]), v[2]));
}

enum MPIDI_BIP_path MPIDI_BIP_path_choose(MPIDI_BIP_paths_t *p, uint64_t len)
{
	MPIDI_BIP_path_class_t *c = &p->cls[class_of(len)];
	uint32_t read = median(c->cost[MPIDI_BIP_PATH_READ]);
	uint32_t send = median(c->cost[MPIDI_BIP_PATH_SEND]);
	enum MPIDI_BIP_path best;

	if (!read)
		return MPIDI_BIP_PATH_READ;
	if (!send)
		return MPIDI_BIP_PATH_SEND;
	best = read <= send ? MPIDI_BIP_PATH_READ : MPIDI_BIP_PATH_SEND;
	if (++c->since < MPIDI_BIP_PATH_EXPLORE)
		return best;
	c->since = 0;
	return best == MPIDI_BIP_PATH_READ ? MPIDI_BIP_PATH_SEND
					   : MPIDI_BIP_PATH_READ;
}

void MPIDI_BIP_path_sample(MPIDI_BIP_paths_t *p, enum MPIDI_BIP_path way,
			   uint64_t len, uint64_t ns)
{
	MPIDI_BIP_path_class_t *c = &p->cls[class_of(len)];
	uint64_t per_kib = len ? (ns << 10) / len : 0;

	/* Never 0 (that is "none"); a stall of seconds saturates. */
	if (per_kib < 1)
		per_kib = 1;
	if (per_kib > UINT32_MAX)
		per_kib = UINT32_MAX;
	c->cost[way][c->next[way]] = (uint32_t)per_kib;
	c->next[way] = (uint8_t)((c->next[way] + 1) % MPIDI_BIP_PATH_SAMPLES);
}

uint32_t MPIDI_BIP_path_cost(const MPIDI_BIP_paths_t *p,
			     enum MPIDI_BIP_path way, uint64_t len)
{
	return median(p->cls[class_of(len)].cost[way]);
}

void MPIDI_BIP_path_format(const MPIDI_BIP_paths_t *p, char *buf,
			   size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned c = 0; c < MPIDI_BIP_PATH_CLASSES && n < len; c++) {
		uint32_t read = median(p->cls[c].cost[MPIDI_BIP_PATH_READ]);
		uint32_t send = median(p->cls[c].cost[MPIDI_BIP_PATH_SEND]);
		int w;

		if (!read && !send)
			continue;
		w = snprintf(buf + n, len - n, " %uK read %u ask %u",
			     c ? 8u << c : 8u, read, send);
		if (w < 0)
			return;
		n += (size_t)w;
	}
}
