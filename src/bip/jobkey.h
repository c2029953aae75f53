/*
 * jobkey.h - the job key derived from a PMI kvsname, shared by libbip and
 * bip_run so both name (and clean up) a job's shared-memory segments alike.
 */
#ifndef BIP_JOBKEY_H
#define BIP_JOBKEY_H

#include <stdint.h>

/*
 * Name prefix of every /dev/shm segment of a job. Arguments: the uid as
 * unsigned int, the job key as unsigned long long.
 */
#define BIP_SHM_PREFIX_FMT "bip-%u-%016llx-"

/* 64-bit FNV-1a hash of name: the same kvsname gives the same key. */
uint64_t bip_job_key_from_name(const char *name);

#endif /* BIP_JOBKEY_H */
