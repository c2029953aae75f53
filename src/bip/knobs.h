/* knobs.h - the values of BIP's tunables, read once at bip_open(): libbip's
 * own and the NIC program's; each wire class reads its own when opened. */
#ifndef BIP_KNOBS_H
#define BIP_KNOBS_H

#include "firmware.h"

enum bip_idle_policy { BIP_IDLE_BLOCK, BIP_IDLE_YIELD, BIP_IDLE_SPIN };
enum bip_spread { BIP_SPREAD_AUTO, BIP_SPREAD_OFF };

struct bip_knobs {
	unsigned log;
	unsigned idle;
	unsigned spin_us;
	unsigned yield_us;
	unsigned slice_us;
	unsigned spread; /* enum bip_spread */
	unsigned close_timeout_ms;
	size_t stream_ring_max;
	size_t mem_read_min;
	char profile[256]; /* as set; profile.c read it before any knob */
	struct bipfw_config fw; /* its knob fields */
};

/* Parse libbip's and the NIC program's knobs from the environment, and check
 * every wire's: -BIP_EINVAL (logged) if one is malformed or out of range. */
int bip_knobs_load(struct bip_knobs *k);

#endif
