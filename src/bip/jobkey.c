/*
 * jobkey.c - a job's identity: its public key, bip_job_key() (FNV-1a over
 * the kvsname, in one place so that libbip, the MPI netmod and bip_run can
 * never disagree on it), its private secret, bip_secret_new(), and the
 * removal of what its crashed processes left, bip_job_cleanup().
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "bip.h"
#include "firmware.h"
#include "log.h"

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

int bip_secret_new(uint64_t *secret_p)
{
	uint64_t s = 0;

	if (!secret_p)
		return -BIP_EINVAL;
	/* 0 means "no secret": draw again in that (unlikely) case. */
	while (!s) {
		ssize_t n = getrandom(&s, sizeof(s), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(s)) {
			bip_err("getrandom: %s", n < 0 ? strerror(errno)
						       : "short read");
			return -BIP_ESYS;
		}
	}
	*secret_p = s;
	return 0;
}

int bip_job_cleanup(uint64_t secret, uint64_t job_key, int nnodes)
{
	if (!secret || nnodes < 1)
		return -BIP_EINVAL;
	return bipfw_job_cleanup(secret, job_key, nnodes);
}
