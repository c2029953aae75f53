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
	char why[320];              /* what is in use, or why not */
};

/* Open path and join the job; on failure fd is -1 and why says why. */
int bipfw_kdev_open(struct bipfw_kdev *k, const char *path, uint64_t secret,
		    uint64_t job_key);
/* Map len bytes of NIC memory (once), or NULL with why set. */
void *bipfw_kdev_nicmem(struct bipfw_kdev *k, size_t len);
void bipfw_kdev_close(struct bipfw_kdev *k);
/* Add to what why says (what uses the module, and how). */
__attribute__((format(printf, 2, 3)))
void bipfw_kdev_why_add(struct bipfw_kdev *k, const char *fmt, ...);

/* Pin [addr, addr + len) and name it by *handle (BIP_IOC_REG), until
 * bipfw_kdev_dereg or close: 0, -BIP_ENOMEM past RLIMIT_MEMLOCK or
 * max_pinned, -BIP_ESYS. */
int bipfw_kdev_reg(struct bipfw_kdev *k, const void *addr, size_t len,
		   uint64_t *handle);
void bipfw_kdev_dereg(struct bipfw_kdev *k, uint64_t handle);
/* The kernel's copy between two registered regions (BIP_IOC_COPY), which
 * checks both ranges and the peer's job: 0 or -BIP_ESYS (logged). */
int bipfw_kdev_copy(struct bipfw_kdev *k, const struct bip_kabi_copy *c);

/* kcopy.c: the kernel's copy as a wire's DMA engine. */
/* Write len bytes of src into region key of endpoint peer, from its
 * start: 0, or -BIP_EAGAIN if the kernel would not (send it otherwise). */
int bipfw_kcopy_write(struct bipfw_kdev *k, uint64_t peer, uint64_t key,
		      const void *src, size_t len);
/* The size from which the kernel's copy costs less than the rings, as
 * measured now (SIZE_MAX: at no size); why gets the measurements. */
size_t bipfw_kcopy_calibrate(struct bipfw_kdev *k, char *why, size_t len);
/* kframe.c: the module's frame path (BIP_IOC_BIND, BIP_IOC_SEND) as a
 * link, on a file of its own. */
struct bipfw_kframe {
	struct bipfw_kdev k; /* the file, joined to the job and bound */
	uint8_t *ring;       /* slots the kernel fills, registered */
	uint32_t slot_size, slots;
	uint32_t at;         /* the next slot to look at */
	uint8_t mac[6];      /* the interface's address */
	uint32_t mtu;        /* its frames' bytes after the Ethernet header */
};

/* Open a file of the job (secret, job_key) bound to ifname for frames of
 * ethertype (and, for packets, of node), with a ring of about ring_bytes
 * (less if the kernel will not pin that much) of slots for frames of
 * frame_max bytes: 0, -BIP_EWIRE if the module is absent or does not
 * allow ifname, or an error; logged. */
int bipfw_kframe_open(struct bipfw_kframe *f, uint64_t secret,
		      uint64_t job_key, const char *ifname, uint16_t ethertype,
		      uint32_t node, size_t frame_max, size_t ring_bytes);
/* The next frame in the ring, from its outer header on (slot->len bytes,
 * the slot's header copied to *slot), until bipfw_kframe_release; or
 * NULL. */
const uint8_t *bipfw_kframe_peek(struct bipfw_kframe *f,
				 struct bip_kabi_slot *slot);
void bipfw_kframe_release(struct bipfw_kframe *f);
/* Send n frames: how many went (from the first on), or -1 and errno if
 * none did. */
int bipfw_kframe_send(struct bipfw_kframe *f, const struct bip_kabi_frame *fr,
		      unsigned n);
/* Unbind, unpin and free (k.fd -1: nothing to do). */
void bipfw_kframe_close(struct bipfw_kframe *f);

/* Whether path opens and speaks our ABI, for bip_info; 0 or an error. */
int bipfw_kdev_probe(const char *path, char *why, size_t len);

#endif
