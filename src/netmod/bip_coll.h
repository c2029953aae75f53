/*
 * bip_coll.h - the layout of the memory a communicator's ranks share for
 * their collectives within one host (bip_coll.c), as far as one rank reads
 * what another writes there: what a rank that lies can forge.
 *
 * The memory starts with every rank's ring of MPIDI_BIP_COLL_SLOTS slots,
 * rank after rank, each slot MPIDI_BIP_COLL_SLOT bytes: collective s uses
 * slot s % MPIDI_BIP_COLL_SLOTS. A slot is a sequence word (the rank's
 * arrival: s, with MPIDI_BIP_COLL_FAILED if its collective failed), then
 * data: up to a slot's worth in place, else the offset of a chunk in the
 * rank's data ring (a 64-bit word), or, for data read where it lies, its
 * address in the rank's memory. The data rings follow the slots; where,
 * and how large, the ranks agree when they set the memory up.
 */
#ifndef BIP_COLL_H
#define BIP_COLL_H

#define MPIDI_BIP_COLL_SLOT 128 /* two cache lines */
#define MPIDI_BIP_COLL_SLOT_HDR 8 /* the sequence word */
#define MPIDI_BIP_COLL_SLOTS 128
#define MPIDI_BIP_COLL_FAILED (1ull << 63)

#endif
