/* knobs.h - the values of libbip's tunables, parsed once at bip_open(). */
#ifndef BIP_KNOBS_H
#define BIP_KNOBS_H

#include <stddef.h>

enum bip_idle_policy { BIP_IDLE_BLOCK, BIP_IDLE_YIELD, BIP_IDLE_SPIN };

struct bip_knobs {
	unsigned log;
	unsigned small_queue;
	unsigned send_slots;
	unsigned long_tags;
	size_t packet_size;
	unsigned window;
	unsigned ack_every;
	unsigned ack_delay_us;
	unsigned retrans_us;
	unsigned nack_backoff_us;
	unsigned liveness_ms;
	unsigned ring_slots;
	size_t cma_min;
	unsigned idle;
	unsigned spin_us;
	unsigned yield_us;
	unsigned close_timeout_ms;
};

/* Parse every knob from the environment; -BIP_EINVAL (logged) if one is
 * malformed or out of range. */
int bip_knobs_load(struct bip_knobs *k);

#endif
