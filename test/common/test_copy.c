/*
 * test_copy.c - bip_copy (bip_copy.h) moves exactly the bytes memcpy
 * would: every distance between source and destination modulo 4 KiB that
 * takes its own loop (1 to 63 bytes ahead) and some that do not, lengths
 * on both sides of the loop's threshold and of its 64-byte steps, every
 * length of the inline copy of small ones (0 to 64 bytes, at each
 * alignment of a cache line), and nothing written around the destination.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bip_copy.h"
#include "unit.h"

#define AREA (3 * 4096 + 8192)

int main(void)
{
	static const size_t lens[] = { 0, 1, 63, 64, 2047, 2048, 2049,
				       4095, 4096, 4100, 8191 + 64 };
	unsigned char *src = aligned_alloc(4096, AREA);
	unsigned char *dst = aligned_alloc(4096, AREA + 4096);

	CHECK(src && dst, "aligned_alloc");
	if (!src || !dst)
		return unit_result("test_copy");
	for (size_t i = 0; i < AREA; i++)
		src[i] = (unsigned char)(i * 7 + (i >> 8));
	for (int ahead = 0; ahead <= 130; ahead++) {
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t len = lens[l], s_off = 4096 - 8;
			unsigned char *d = dst + 4096 + s_off + ahead;

			memset(dst, 0xa5, AREA + 4096);
			bip_copy(d, src + s_off, len);
			CHECK(!memcmp(d, src + s_off, len),
			      "%zu bytes %d ahead: bytes differ", len, ahead);
			CHECK(d[-1] == 0xa5 && d[len] == 0xa5,
			      "%zu bytes %d ahead: wrote outside", len, ahead);
		}
	}
	for (size_t len = 0; len <= BIP_COPY_SMALL_MAX + 1; len++) {
		for (int off = 0; off < 64; off++) {
			unsigned char *d = dst + 64 + off;

			memset(dst, 0xa5, 256);
			bip_copy(d, src + 3 + off, len);
			CHECK(!memcmp(d, src + 3 + off, len),
			      "%zu bytes at %d: bytes differ", len, off);
			CHECK(d[-1] == 0xa5 && d[len] == 0xa5,
			      "%zu bytes at %d: wrote outside", len, off);
		}
	}
	free(src);
	free(dst);
	return unit_result("test_copy");
}
