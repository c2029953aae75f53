/*
 * jobkey.c - bip_job_key(): FNV-1a over the kvsname, in one place so that
 * libbip, the MPI netmod and bip_run can never disagree on a job's key.
 */
#include "bip.h"

#define FNV1A_64_OFFSET 0xcbf29ce484222325ULL
#define FNV1A_64_PRIME 0x100000001b3ULL

uint64_t bip_job_key(const char *name)
{
	uint64_t h = FNV1A_64_OFFSET;

	for (const unsigned char *p = (const unsigned char *)(name ? name : "");
	     *p; p++) {
		h ^= *p;
		h *= FNV1A_64_PRIME;
	}
	return h;
}
