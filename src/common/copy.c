/*
 * copy.c - bip_copy's loop (bip_copy.h): 64 bytes a turn in vector loads
 * and stores, never `rep movsb`.
 */
#include "bip_copy.h"

void bip_copy_loop(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	for (; len >= 64; len -= 64, d += 64, s += 64) {
		__builtin_memcpy(d, s, 64);
		/* d is opaque to the compiler from here: it cannot see the
		 * loop as one memcpy and call the C library's after all. */
		__asm__("" : "+r"(d));
	}
	memcpy(d, s, len);
}
