/*
 * bip_pre.h - the netmod's state inside MPICH's objects (requests, AV
 * entries, ...). Pulled into mpidpre.h early: no MPICH includes here.
 */
#ifndef BIP_PRE_H_INCLUDED
#define BIP_PRE_H_INCLUDED

#include <stdint.h>

/* Per MPIDIG request: a large active message in flight. */
typedef struct {
	void *pack_buf;      /* packed copy of non-contiguous data, or NULL */
	const void *data;    /* what goes on the wire */
	uint64_t data_sz;
	int handler_id;
	int node;            /* destination BIP node */
} MPIDI_BIP_am_request_t;

/* Native point-to-point state: not used while every message is an AM. */
typedef struct {
	int unused;
} MPIDI_BIP_request_t;

/* A peer: its BIP node (the world rank). */
typedef struct {
	int node;
} MPIDI_BIP_addr_t;

typedef struct {
	int unused;
} MPIDI_BIP_comm_t;

typedef struct {
	int unused;
} MPIDI_BIP_dt_t;

typedef struct {
	int unused;
} MPIDI_BIP_op_t;

typedef struct {
	int unused;
} MPIDI_BIP_win_t;

typedef struct {
	int unused;
} MPIDI_BIP_part_t;

#endif
