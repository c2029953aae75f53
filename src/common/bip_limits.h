/*
 * bip_limits.h - the limits the layers above BIP build on, apart from the
 * wire format: MPICH's headers include this one, and only this one, so a
 * change to the wire format or to the API rebuilds the netmod's own files,
 * not all of MPICH.
 */
#ifndef BIP_COMMON_LIMITS_H
#define BIP_COMMON_LIMITS_H

/* Largest small message, in bytes: one packet's payload at least, and the
 * size of an entry of the receiver's small-message queue. A page of data
 * and the 64 bytes MPI puts before it: a 4 KiB MPI message then goes as
 * one small message, not as two eager pieces (the second of a few bytes)
 * that need twice the credits. */
#define BIP_SMALL_MAX (4096 + 64)

#endif
