/*
 * kframe.c - bip.ko's frame path as a link (bip(4): BIP_IOC_BIND and
 * BIP_IOC_SEND): what the eth wire uses when the process may not open a
 * packet socket. A file of its own, joined to the job and bound to one
 * interface and EtherType, receives the job's frames into a ring of slots
 * in registered memory, and sends frames whose Ethernet and outer headers
 * the kernel writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip_errno.h"
#include "kdev.h"
#include "log.h"

#define SLOTS_MIN 16 /* a smaller ring is not worth having */

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* The ring: as many slots of slot_size as ring_bytes holds, halved while
 * the kernel will not pin that much (RLIMIT_MEMLOCK, max_pinned). */
static int ring_reg(struct bipfw_kframe *f, size_t ring_bytes,
		    uint64_t *handle)
{
	size_t page = f->k.info.page_size ? f->k.info.page_size : 4096;
	size_t slots = ring_bytes / f->slot_size;

	for (slots = slots < SLOTS_MIN ? SLOTS_MIN : slots;; slots /= 2) {
		size_t len = round_up(slots * f->slot_size, page);
		int rc;

		if (posix_memalign((void **)&f->ring, page, len))
			return -BIP_ENOMEM;
		memset(f->ring, 0, len);
		rc = bipfw_kdev_reg(&f->k, f->ring, len, handle);
		if (!rc) {
			f->slots = (uint32_t)slots;
			return 0;
		}
		free(f->ring);
		f->ring = NULL;
		if (rc != -BIP_ENOMEM || slots / 2 < SLOTS_MIN) {
			bip_err("/dev/bip: cannot pin a frame ring of %zu KiB "
				"(%s; RLIMIT_MEMLOCK, BIP_ETH_RING)", len >> 10,
				strerror(errno));
			return rc;
		}
	}
}

int bipfw_kframe_open(struct bipfw_kframe *f, uint64_t secret,
		      uint64_t job_key, const char *ifname, uint16_t ethertype,
		      uint32_t node, size_t frame_max, size_t ring_bytes)
{
	struct bip_kabi_bind b = { .ethertype = ethertype, .node = node };
	int rc;

	memset(f, 0, sizeof(*f));
	if (bipfw_kdev_open(&f->k, BIP_KABI_DEVICE, secret, job_key)) {
		bip_info("eth wire: no frame path through /dev/bip: %s",
			 f->k.why);
		return -BIP_EWIRE;
	}
	f->slot_size = (uint32_t)round_up(sizeof(struct bip_kabi_slot) +
					  frame_max, BIP_KABI_ALIGN);
	rc = ring_reg(f, ring_bytes, &b.ring);
	if (rc) {
		bipfw_kframe_close(f);
		return rc;
	}
	snprintf(b.ifname, sizeof(b.ifname), "%s", ifname);
	b.slot_size = f->slot_size;
	b.slots = f->slots;
	if (ioctl(f->k.fd, BIP_IOC_BIND, &b) < 0) {
		if (errno == EPERM)
			bip_info("eth wire: /dev/bip does not allow %s (bip.ko's "
				 "parameter ifaces=)", ifname);
		else
			bip_err("eth wire: /dev/bip cannot bind to %s: %s",
				ifname, strerror(errno));
		rc = errno == EPERM ? -BIP_EWIRE : -BIP_ESYS;
		bipfw_kframe_close(f);
		return rc;
	}
	memcpy(f->mac, b.mac, sizeof(f->mac));
	f->mtu = b.mtu;
	return 0;
}

const uint8_t *bipfw_kframe_peek(struct bipfw_kframe *f,
				 struct bip_kabi_slot *slot)
{
	const uint8_t *s = f->ring + (size_t)f->at * f->slot_size;

	while (__atomic_load_n((const uint32_t *)s, __ATOMIC_ACQUIRE) ==
	       BIP_SLOT_FULL) {
		memcpy(slot, s, sizeof(*slot));
		/* The kernel writes whole frames that fit: anything else is
		 * not one. */
		if (slot->len <= f->slot_size - sizeof(*slot))
			return s + sizeof(*slot);
		bip_warn("/dev/bip: a frame of %u bytes in a slot of %u",
			 slot->len, f->slot_size);
		bipfw_kframe_release(f);
		s = f->ring + (size_t)f->at * f->slot_size;
	}
	return NULL;
}

void bipfw_kframe_release(struct bipfw_kframe *f)
{
	__atomic_store_n((uint32_t *)(f->ring + (size_t)f->at * f->slot_size),
			 BIP_SLOT_FREE, __ATOMIC_RELEASE);
	f->at = f->at + 1 == f->slots ? 0 : f->at + 1;
}

int bipfw_kframe_send(struct bipfw_kframe *f, const struct bip_kabi_frame *fr,
		      unsigned n)
{
	unsigned done = 0;

	while (done < n) {
		unsigned left = n - done;
		struct bip_kabi_send s = {
			.frames = (uint64_t)(uintptr_t)(fr + done),
			.count = left < f->k.info.send_max ? left
							   : f->k.info.send_max,
		};
		int sent = ioctl(f->k.fd, BIP_IOC_SEND, &s);

		if (sent <= 0)
			return done ? (int)done : -1;
		done += (unsigned)sent;
		if ((unsigned)sent < s.count)
			break;
	}
	return (int)done;
}

void bipfw_kframe_close(struct bipfw_kframe *f)
{
	/* Closing the file unbinds it and unpins the ring. */
	bipfw_kdev_close(&f->k);
	free(f->ring);
	f->ring = NULL;
}
