/*
 * jobkey.h - the job key derived from a PMI kvsname, shared by libbip and
 * bip_run so both name (and clean up) a job's shared-memory segments alike.
 */
#ifndef BIP_JOBKEY_H
#define BIP_JOBKEY_H

#include <stdint.h>

/* 64-bit FNV-1a hash of name: the same kvsname gives the same key. */
uint64_t bip_job_key_from_name(const char *name);

#endif /* BIP_JOBKEY_H */
