/*
 * bip_buf.c - the netmod's temporary buffers (an unexpected message's data,
 * a noncontiguous message packed or unpacked), the last few kept for the
 * next ones; and spares, freed blocks of one size kept the same way (the
 * entries of send FIFOs and of unexpected messages).
 *
 * Freeing each at once gave its memory back to the system: above glibc's
 * trim threshold (128 KiB) every such message cost two brk calls and a
 * page fault per 4 KiB it touched. Sendrecv of 112 KiB along hypercube
 * dimensions (NAS CG's pattern) on 16 ranks on 2 cores spent 40 % of its
 * time so, half of its messages arriving before their receive; bursts of
 * 4 KiB messages, copied into the send FIFO behind the credits or queued
 * as unexpected, took a page fault per message again at each burst.
 */
#include "mpidimpl.h"
#include "bip_state.h"

/* A buffer's capacity sits in front of it, a cache line apart. */
#define BUF_HDR 64

static size_t *hdr_of(void *buf)
{
	return (size_t *)((char *)buf - BUF_HDR);
}

/* Capacities of buffers that may be kept are powers of two from 4 KiB: a
 * message of another size takes the buffer of one before it (IS's
 * all-to-allv: blocks of 160 to 560 KiB). Only the pages written take
 * memory. */
static size_t cap_of(size_t len)
{
	size_t cap = 4096;

	if (len > MPIDI_BIP_KEEP_BYTES)
		return len;
	while (cap < len)
		cap <<= 1;
	return cap;
}

/* The kept buffer at i leaves the list (oldest first, kept in order). */
static char *unkeep(unsigned i)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	char *p = g->kept[i];

	g->kept_bytes -= *hdr_of(p);
	memmove(&g->kept[i], &g->kept[i + 1],
		(--g->nkept - i) * sizeof(g->kept[0]));
	return p;
}

void *MPIDI_BIP_buf_get(size_t len)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	unsigned best = g->nkept;
	size_t cap;
	char *p;

	/* The smallest kept buffer that holds len. */
	for (unsigned i = 0; i < g->nkept; i++)
		if (*hdr_of(g->kept[i]) >= len &&
		    (best == g->nkept ||
		     *hdr_of(g->kept[i]) < *hdr_of(g->kept[best])))
			best = i;
	g->cnt.bufs++;
	if (best < g->nkept) {
		g->cnt.bufs_reused++;
		return unkeep(best);
	}
	cap = cap_of(len);
	if (cap > SIZE_MAX - BUF_HDR)
		return NULL;
	p = MPL_malloc(BUF_HDR + cap, MPL_MEM_BUFFER);
	if (!p)
		return NULL;
	*(size_t *)p = cap;
	return p + BUF_HDR;
}

void MPIDI_BIP_buf_put(void *buf)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	size_t cap;

	if (!buf)
		return;
	cap = *hdr_of(buf);
	if (cap > MPIDI_BIP_KEEP_BYTES) {
		MPL_free(hdr_of(buf));
		return;
	}
	/* The oldest kept make room: the newest says best what comes. */
	while (g->nkept == MPIDI_BIP_KEEP ||
	       g->kept_bytes + cap > MPIDI_BIP_KEEP_BYTES)
		MPL_free(hdr_of(unkeep(0)));
	g->kept[g->nkept++] = buf;
	g->kept_bytes += cap;
}

void MPIDI_BIP_buf_finalize(void)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	while (g->nkept)
		MPL_free(hdr_of(unkeep(0)));
}

void *MPIDI_BIP_spare_get(MPIDI_BIP_spares_t *s, size_t size)
{
	void *p = s->head;

	if (!p)
		return MPL_malloc(size, MPL_MEM_BUFFER);
	memcpy(&s->head, p, sizeof(s->head));
	s->n--;
	return p;
}

void MPIDI_BIP_spare_put(MPIDI_BIP_spares_t *s, void *p, size_t size)
{
	if ((s->n + 1) * size > MPIDI_BIP_SPARES_BYTES) {
		MPL_free(p);
		return;
	}
	memcpy(p, &s->head, sizeof(s->head));
	s->head = p;
	s->n++;
}

void MPIDI_BIP_spares_free(MPIDI_BIP_spares_t *s)
{
	while (s->n)
		MPL_free(MPIDI_BIP_spare_get(s, 0));
}
