/*
 * bip_handle.h - handles for requests that other processes name in control
 * messages: an index and a generation, looked up in a table, so that a
 * message can only ever reach a live request of the right kind and a stale
 * or forged one reaches nothing. Free of MPICH, like bip_ctl.h.
 */
#ifndef BIP_HANDLE_H_INCLUDED
#define BIP_HANDLE_H_INCLUDED

#include <stdint.h>

typedef struct MPIDI_BIP_handle_slot MPIDI_BIP_handle_slot_t;

typedef struct {
	MPIDI_BIP_handle_slot_t *slot;
	uint32_t cap;       /* slots allocated */
	uint32_t free_head; /* first free slot, cap when none */
	uint32_t used;      /* handles in use */
} MPIDI_BIP_handles_t;

/* A new handle naming obj (not NULL); 0 (never a handle) if out of
 * memory. */
uint64_t MPIDI_BIP_handle_new(MPIDI_BIP_handles_t *t, void *obj);
/* The object a handle names, or NULL when it names none (any more). */
void *MPIDI_BIP_handle_get(const MPIDI_BIP_handles_t *t, uint64_t h);
/* Retire a handle: it never names anything again. */
void MPIDI_BIP_handle_free(MPIDI_BIP_handles_t *t, uint64_t h);
/* The object of the i-th slot in use, for walks (i < cap); NULL if free. */
void *MPIDI_BIP_handle_at(const MPIDI_BIP_handles_t *t, uint32_t i);
void MPIDI_BIP_handles_destroy(MPIDI_BIP_handles_t *t);

#endif
