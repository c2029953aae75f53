/*
 * no_lrecv.c - preloaded (LD_PRELOAD) into a rank, bip_ilrecv posts the
 * first NO_LRECV_AFTER receives (default 0), then refuses every one as BIP
 * refuses a tag it still holds (-BIP_EBUSY): each refused receive must
 * fail, and its sender with it, rather than either wait for ever.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "bip.h"

int bip_ilrecv(bip_ep_t *ep, int tag, void *buf, size_t cap, bip_req_t *req)
{
	static int (*real)(bip_ep_t *, int, void *, size_t, bip_req_t *);
	static long left = -1;

	if (left < 0) {
		const char *after = getenv("NO_LRECV_AFTER");

		left = after ? atol(after) : 0;
		*(void **)&real = dlsym(RTLD_NEXT, "bip_ilrecv");
	}
	if (!left || !real)
		return -BIP_EBUSY;
	left--;
	return real(ep, tag, buf, cap, req);
}
