/*
 * no_write.c - preloaded (LD_PRELOAD) into the ranks of a job, every
 * bip_write fails as a write into memory that is not the peer's does
 * (-BIP_ESYS): a receiver that asked its sender to write part of a message
 * (MPIR_CVAR_CH4_BIP_SPLIT_MIN) must read that part itself.
 */
#include "bip.h"

int bip_write(bip_ep_t *ep, int node, uint64_t addr, const void *src,
	      size_t len)
{
	(void)ep, (void)node, (void)addr, (void)src, (void)len;
	return -BIP_ESYS;
}
