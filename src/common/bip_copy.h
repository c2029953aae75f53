/*
 * bip_copy.h - memcpy without its slow case on some x86 processors: on AMD
 * Zen the C library's `rep movsb` runs 10 to 20 times slower when the
 * destination lies 1 to 63 bytes past the source modulo 4 KiB (measured:
 * 64 KiB at 2.5 GB/s instead of 45; a page-aligned window copied into a
 * buffer from malloc, 16 bytes into its page, is such a case). Copies of
 * 2 KiB or more at those distances go by a loop of vector moves instead;
 * the others are memcpy's. Used by every layer for the copies whose
 * alignments the user chooses. Installed beside bip.h.
 */
#ifndef BIP_COMMON_COPY_H
#define BIP_COMMON_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The loop (copy.c): any len, any alignments. */
void bip_copy_loop(void *dst, const void *src, size_t len);

/* Whether `rep movsb` is slow from src to dst: the kernel's copies use it
 * too (cross-memory attach: 64 KiB at 2.2 GB/s instead of 9), which no
 * loop of ours can avoid. */
static inline int bip_copy_slow(uintptr_t dst, uintptr_t src)
{
	return ((dst - src) & 4095) - 1 < 63;
}

/* Below this, rep movsb's slow case costs less than the loop's start. */
#define BIP_COPY_LOOP_MIN 2048

#define BIP_COPY_SMALL_MAX 64

/* Up to BIP_COPY_SMALL_MAX (64) bytes, never more (the middle of a longer
 * buffer is not copied): the headers and payloads of small messages,
 * inline, two overlapping moves of the widest size that fits, where
 * memcpy would cost a call through the PLT and its dispatch on the size. */
static inline void bip_copy_small(void *dst, const void *src, size_t len)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;

	if (len >= 32) {
		memcpy(d, s, 32);
		memcpy(d + len - 32, s + len - 32, 32);
	} else if (len >= 16) {
		memcpy(d, s, 16);
		memcpy(d + len - 16, s + len - 16, 16);
	} else if (len >= 8) {
		memcpy(d, s, 8);
		memcpy(d + len - 8, s + len - 8, 8);
	} else if (len >= 4) {
		memcpy(d, s, 4);
		memcpy(d + len - 4, s + len - 4, 4);
	} else if (len) {
		d[0] = s[0];
		d[len - 1] = s[len - 1];
		d[len / 2] = s[len / 2];
	}
}

static inline void bip_copy(void *dst, const void *src, size_t len)
{
	if (len <= BIP_COPY_SMALL_MAX)
		bip_copy_small(dst, src, len);
	else if (len >= BIP_COPY_LOOP_MIN &&
	    bip_copy_slow((uintptr_t)dst, (uintptr_t)src))
		bip_copy_loop(dst, src, len);
	else
		memcpy(dst, src, len);
}

#ifdef __cplusplus
}
#endif

#endif
