/*
 * kcopy.c - bip.ko's copy as the DMA engine of the shm wire: the sender
 * writes a long message in one copy into the receive buffer its receiver
 * registered (the CTS carries the handle), and the size from which that
 * beats the rings is measured on the machine when the endpoint opens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip_errno.h"
#include "firmware.h"
#include "kdev.h"
#include "log.h"

int bipfw_kcopy_write(struct bipfw_kdev *k, uint64_t peer, uint64_t key,
		      const void *src, size_t len)
{
	struct bip_kabi_copy c = { .peer = peer, .peer_handle = key,
				   .len = len, .flags = BIP_COPY_WRITE };
	int rc = bipfw_kdev_reg(k, src, len, &c.handle);

	/* A buffer the kernel will not pin (read-only, or past the pinning
	 * limits) goes by the rings instead. */
	if (rc)
		return -BIP_EAGAIN;
	rc = bipfw_kdev_copy(k, &c);
	bipfw_kdev_dereg(k, c.handle);
	return rc ? -BIP_EAGAIN : 0;
}

/* --- calibration ------------------------------------------------------- */

#define CAL_MIN (16u << 10)
#define CAL_MAX (1u << 20)
#define CAL_RUNS 3
#define CAL_BOUNCE (64u << 10) /* what a ring moves between two looks */

/* One message of len bytes as bip.ko moves it: the receiver registers its
 * buffer, the sender its own, the kernel copies, both deregister. Our own
 * file is both ends. ns, or 0 if the module refused. */
static uint64_t kernel_ns(struct bipfw_kdev *k, uint8_t *dst,
			  const uint8_t *src, size_t len)
{
	struct bip_kabi_copy c = { .peer = k->endpoint, .len = len,
				   .flags = BIP_COPY_WRITE };
	uint64_t t = bipfw_now_ns();
	int rc;

	if (bipfw_kdev_reg(k, dst, len, &c.peer_handle))
		return 0;
	rc = bipfw_kdev_reg(k, src, len, &c.handle);
	if (!rc) {
		rc = bipfw_kdev_copy(k, &c);
		bipfw_kdev_dereg(k, c.handle);
	}
	bipfw_kdev_dereg(k, c.peer_handle);
	t = bipfw_now_ns() - t;
	return rc ? 0 : t ? t : 1;
}

/* The same by the rings: two copies, through a window of ring. */
static uint64_t rings_ns(uint8_t *dst, const uint8_t *src, size_t len,
			 uint8_t *bounce)
{
	uint64_t t = bipfw_now_ns();

	for (size_t at = 0; at < len; at += CAL_BOUNCE) {
		size_t n = len - at < CAL_BOUNCE ? len - at : CAL_BOUNCE;

		memcpy(bounce, src + at, n);
		/* Keep the compiler from fusing the two copies. */
		__asm__ volatile("" : : "r"(bounce) : "memory");
		memcpy(dst + at, bounce, n);
	}
	return bipfw_now_ns() - t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *t)
{
	qsort(t, CAL_RUNS, sizeof(*t), cmp_u64);
	return t[CAL_RUNS / 2];
}

/*
 * Rule: the kernel copies a long message once where the rings copy it
 * twice (sender in, receiver out), but it pins both buffers for it, a cost
 * per page and per call that only large messages repay. Its threshold is
 * the smallest size, of 16 KiB to 1 MiB by fours, at which one message by
 * the kernel costs no more CPU time than the rings' two copies, both
 * measured here in this process (medians of 3); SIZE_MAX if none. CPU time,
 * not the latency of one message alone: on a node with a rank per core,
 * every cycle a transfer spends is taken from a rank.
 */
size_t bipfw_kcopy_calibrate(struct bipfw_kdev *k, char *why, size_t len)
{
	uint8_t *src = malloc(CAL_MAX), *dst = malloc(CAL_MAX),
		*bounce = malloc(CAL_BOUNCE);
	size_t min = SIZE_MAX, at = 0;
	uint64_t kt[CAL_RUNS], rt[CAL_RUNS];

	if (!src || !dst || !bounce) {
		snprintf(why, len, "not calibrated (no memory)");
		goto out;
	}
	memset(src, 0x5a, CAL_MAX);
	memset(dst, 0, CAL_MAX);
	memset(bounce, 0, CAL_BOUNCE);
	why[0] = '\0';
	for (size_t s = CAL_MIN; s <= CAL_MAX && min == SIZE_MAX; s *= 4) {
		for (unsigned i = 0; i < CAL_RUNS; i++) {
			kt[i] = kernel_ns(k, dst, src, s);
			rt[i] = rings_ns(dst, src, s, bounce);
			if (!kt[i]) {
				snprintf(why, len, "not calibrated (the "
					 "module refused a copy)");
				goto out;
			}
		}
		if (median(kt) <= median(rt))
			min = s;
		if (at < len)
			at += (size_t)snprintf(why + at, len - at,
					       "%s%zu KiB %.1f/%.1f us",
					       at ? ", " : "", s >> 10,
					       median(kt) / 1e3,
					       median(rt) / 1e3);
	}
out:
	free(src);
	free(dst);
	free(bounce);
	return min;
}
