/* bip_impl.h - libbip's private state, shared by its files. */
#ifndef BIP_IMPL_H
#define BIP_IMPL_H

#include <stdbool.h>

#include "bip.h"
#include "firmware.h"
#include "knobs.h"

struct bip_pmi;

struct bip_ep {
	int node, nnodes;
	uint64_t job_key;
	int host, nhosts;
	struct bip_knobs k;
	struct bipfw *fw;
	bool *connected;
	struct bip_pmi *pmi; /* set when bootstrapped by bip_init */
};

/* A request handle names a send slot, or a tag with this bit set. */
#define BIP_REQ_RECV 0x80000000u

/* The peer must be another node of the job, already connected. */
int bip_check_node(const bip_ep_t *ep, int node);

#endif
