/*
 * checksum.c - corruption detection on lossy wires: a 32-bit checksum of the
 * payload and of the header. Fletcher-style sums over 32-bit words are cheap
 * and catch the bit flips and truncations a datagram wire produces.
 */
#include <string.h>

#include "firmware.h"

uint32_t bipfw_csum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t a = 1, b = 0;
	uint32_t w;

	for (; len >= 4; len -= 4, p += 4) {
		memcpy(&w, p, 4);
		a = (a + w) % 0xfffffffbu;
		b = (b + a) % 0xfffffffbu;
	}
	for (; len; len--, p++) {
		a = (a + *p) % 0xfffffffbu;
		b = (b + a) % 0xfffffffbu;
	}
	return (uint32_t)(a ^ (b << 16) ^ (b >> 16));
}

void bipfw_hdr_seal(struct bip_pkt_hdr *h)
{
	h->hcsum = 0;
	h->hcsum = bipfw_csum(h, sizeof(*h));
}

bool bipfw_hdr_intact(const struct bip_pkt_hdr *h)
{
	struct bip_pkt_hdr copy = *h;

	copy.hcsum = 0;
	return bipfw_csum(&copy, sizeof(copy)) == h->hcsum;
}
