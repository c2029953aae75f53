/*
 * kdev.h - the NIC program's side of /dev/bip (the kernel module bip.ko,
 * bip(4)): one file per process, joined to the job, and the NIC memory
 * it maps. Without the module every call says so, and the NIC program
 * keeps what it does without it (kdev.c).
 */
#ifndef BIP_FIRMWARE_KDEV_H
#define BIP_FIRMWARE_KDEV_H

#include <stddef.h>
#include <stdint.h>

#include "bip_kabi.h"

struct bipfw_kdev {
	int fd;                     /* -1: no module, or not used */
	uint64_t endpoint;          /* this file's id in the job */
	struct bip_kabi_info info;  /* the module's version and limits */
	void *nicmem;               /* NIC memory mapped, or NULL */
	size_t nicmem_len;
	char why[128];              /* what is in use, or why not */
};

/* Open path and join the job; on failure fd is -1 and why says why. */
int bipfw_kdev_open(struct bipfw_kdev *k, const char *path, uint64_t secret,
		    uint64_t job_key);
/* Map len bytes of NIC memory (once), or NULL with why set. */
void *bipfw_kdev_nicmem(struct bipfw_kdev *k, size_t len);
void bipfw_kdev_close(struct bipfw_kdev *k);
/* Whether path opens and speaks our ABI, for bip_info; 0 or an error. */
int bipfw_kdev_probe(const char *path, char *why, size_t len);

#endif
