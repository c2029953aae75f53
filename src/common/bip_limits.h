/*
 * bip_limits.h - the limits the layers above BIP build on, apart from the
 * wire format: MPICH's headers include this one, and only this one, so a
 * change to the wire format or to the API rebuilds the netmod's own files,
 * not all of MPICH.
 */
#ifndef BIP_COMMON_LIMITS_H
#define BIP_COMMON_LIMITS_H

/* Largest small message, in bytes: one packet's payload at least, and the
 * size of an entry of the receiver's small-message queue. Two pages of
 * data and the 64 bytes MPI puts before them: an MPI message of up to 8
 * KiB goes as one small message, one ring record between two processes of
 * a host. Each record costs its consumer a look and its producer a stamp
 * on a line that crosses cores, so larger records stream faster: MPI
 * windows of 8 KiB 33 -> 47 GB/s on an AMD Zen 5 against one page of data
 * (two records each), a bare two-copy ring 22-42 GB/s with 4 KiB slots,
 * 40-55 with 8 KiB. */
#define BIP_SMALL_MAX (8192 + 64)

#endif
