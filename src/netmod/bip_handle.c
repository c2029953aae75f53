/*
 * bip_handle.c - the handle table (see bip_handle.h). A handle is the
 * generation (high 32 bits, never 0) and the index (low 32 bits) of a slot;
 * freeing a slot advances its generation, so old handles stop matching.
 */
#include <stdlib.h>

#include "bip_handle.h"

struct MPIDI_BIP_handle_slot {
	void *obj;     /* NULL: free */
	uint32_t gen;  /* of the handle in use, or of the next one */
	uint32_t next; /* free list */
};

static int grow(MPIDI_BIP_handles_t *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 64;
	MPIDI_BIP_handle_slot_t *s;

	if (cap <= t->cap)
		return -1;
	s = realloc(t->slot, cap * sizeof(*s));
	if (!s)
		return -1;
	for (uint32_t i = t->cap; i < cap; i++)
		s[i] = (MPIDI_BIP_handle_slot_t){ NULL, 1, i + 1 };
	s[cap - 1].next = t->free_head == t->cap ? cap : t->free_head;
	t->free_head = t->cap;
	t->slot = s;
	t->cap = cap;
	return 0;
}

uint64_t MPIDI_BIP_handle_new(MPIDI_BIP_handles_t *t, void *obj)
{
	MPIDI_BIP_handle_slot_t *s;
	uint32_t i;

	if (t->free_head == t->cap && grow(t))
		return 0;
	i = t->free_head;
	s = &t->slot[i];
	t->free_head = s->next;
	s->obj = obj;
	t->used++;
	return (uint64_t)s->gen << 32 | i;
}

void *MPIDI_BIP_handle_get(const MPIDI_BIP_handles_t *t, uint64_t h)
{
	uint32_t i = (uint32_t)h, gen = (uint32_t)(h >> 32);

	if (i >= t->cap || t->slot[i].gen != gen)
		return NULL;
	return t->slot[i].obj;
}

void MPIDI_BIP_handle_free(MPIDI_BIP_handles_t *t, uint64_t h)
{
	uint32_t i = (uint32_t)h;
	MPIDI_BIP_handle_slot_t *s;

	if (!MPIDI_BIP_handle_get(t, h))
		return;
	s = &t->slot[i];
	s->obj = NULL;
	s->gen = s->gen == UINT32_MAX ? 1 : s->gen + 1;
	s->next = t->free_head;
	t->free_head = i;
	t->used--;
}

void *MPIDI_BIP_handle_at(const MPIDI_BIP_handles_t *t, uint32_t i)
{
	return i < t->cap ? t->slot[i].obj : NULL;
}

void MPIDI_BIP_handles_destroy(MPIDI_BIP_handles_t *t)
{
	free(t->slot);
	*t = (MPIDI_BIP_handles_t){ 0 };
}
