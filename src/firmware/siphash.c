/*
 * siphash.c - SipHash-2-4 (Aumasson and Bernstein), a keyed pseudorandom
 * function: the NIC program derives the names of a job's shared-memory
 * segments from the job's secret with it, so that a name seen in /dev/shm
 * reveals neither the secret nor the names of the other nodes.
 */
#include <string.h>

#include "firmware.h"

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND(v0, v1, v2, v3)                                               \
	do {                                                                   \
		v0 += v1;                                                      \
		v1 = rotl(v1, 13);                                             \
		v1 ^= v0;                                                      \
		v0 = rotl(v0, 32);                                             \
		v2 += v3;                                                      \
		v3 = rotl(v3, 16);                                             \
		v3 ^= v2;                                                      \
		v0 += v3;                                                      \
		v3 = rotl(v3, 21);                                             \
		v3 ^= v0;                                                      \
		v2 += v1;                                                      \
		v1 = rotl(v1, 17);                                             \
		v1 ^= v2;                                                      \
		v2 = rotl(v2, 32);                                             \
	} while (0)

uint64_t bipfw_siphash(const uint64_t key[2], const void *data, size_t len)
{
	const uint8_t *in = data;
	uint64_t v0 = 0x736f6d6570736575ull ^ key[0];
	uint64_t v1 = 0x646f72616e646f6dull ^ key[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ key[0];
	uint64_t v3 = 0x7465646279746573ull ^ key[1];
	uint64_t m, last = (uint64_t)len << 56;
	size_t tail = len & 7;

	/* Little-endian words (every supported host is little-endian). */
	for (const uint8_t *end = in + len - tail; in != end; in += 8) {
		memcpy(&m, in, 8);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t i = 0; i < tail; i++)
		last |= (uint64_t)in[i] << (8 * i);
	v3 ^= last;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= last;
	v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
