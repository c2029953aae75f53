/*
 * bip_limits.h - the limits the layers above BIP build on, apart from the
 * wire format: MPICH's headers include this one, and only this one, so a
 * change to the wire format or to the API rebuilds the netmod's own files,
 * not all of MPICH.
 */
#ifndef BIP_COMMON_LIMITS_H
#define BIP_COMMON_LIMITS_H

/* Largest small message, in bytes: one packet's payload at least, and the
 * size of an entry of the receiver's small-message queue. */
#define BIP_SMALL_MAX 4096

#endif
