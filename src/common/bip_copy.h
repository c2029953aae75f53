/*
 * bip_copy.h - memcpy without its slow case on some x86 processors: on AMD
 * Zen the C library's `rep movsb` runs 10 to 20 times slower when the
 * destination lies 1 to 63 bytes past the source modulo 4 KiB (measured:
 * 64 KiB at 2.5 GB/s instead of 45; a page-aligned window copied into a
 * buffer from malloc, 16 bytes into its page, is such a case). Copies of
 * 2 KiB or more at those distances go by a loop of vector moves instead;
 * the others are memcpy's. Other processors lose little there (Intel
 * Xeon: memcpy 39 GB/s at such a distance, 54 at 0, the loop 24), so
 * whether this machine has the slow case is measured (bip_copy_calibrate),
 * not assumed. Used by every layer for the copies whose alignments the
 * user chooses; and the piece of a vector read (struct bip_rvec).
 * Installed beside bip.h.
 */
#ifndef BIP_COMMON_COPY_H
#define BIP_COMMON_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A piece of a single copy from another process's memory, read with
 * others by one system call (bip_readv, the firmware's bipfw_readv): len
 * bytes at addr there into dst here; rc, set by the read, the piece's own
 * result. */
#define BIP_READV_MAX 16
struct bip_rvec {
	void *dst;
	uint64_t addr;
	size_t len;
	int rc;
};

/* The loop (copy.c): any len, any alignments. */
void bip_copy_loop(void *dst, const void *src, size_t len);

/* The copies `rep movsb` slows at those distances on this machine: the C
 * library's memcpy (bip_copy then takes its loop), and the kernel's,
 * cross-memory attach among them (64 KiB at 2.2 GB/s instead of 9 on AMD
 * Zen), which no loop of ours can avoid (BIP goes through a bounce buffer
 * instead, and the MPI netmod asks for such data rather than reading it).
 * Both until bip_copy_calibrate says otherwise. */
#define BIP_COPY_ALIAS_USER 1u
#define BIP_COPY_ALIAS_KERNEL 2u
extern unsigned bip_copy_alias;

/* Measures both on this machine, once per process (64 KiB copies 16 bytes
 * apart against the loop, and against cross-memory attach to oneself 0
 * bytes apart; the fastest of a few each), sets bip_copy_alias, and says
 * what it measured in why (len bytes at most). A kind counts as slow at
 * 1.5 x (user) or 2 x (kernel) the other way's time. Returns
 * bip_copy_alias. */
unsigned bip_copy_calibrate(char *why, size_t len);

/* Whether copies of kind (BIP_COPY_ALIAS_*) from src to dst are slow. */
static inline int bip_copy_slow(unsigned kind, uintptr_t dst, uintptr_t src)
{
	return (bip_copy_alias & kind) && ((dst - src) & 4095) - 1 < 63;
}

/* Below this, rep movsb's slow case costs less than the loop's start. */
#define BIP_COPY_LOOP_MIN 2048

/* Copies longer than a piece and at most bip_copy_split_max bytes (0:
 * none) go in pieces of BIP_COPY_PIECE, each below the size from which
 * the C library's memcpy takes `rep movsb` (2112 bytes with fast short
 * rep movsb, more without), so that they take its vector loop instead.
 * Set by BIP_SHM_COPY_SPLIT: on one AMD Zen 5 machine, MPI messages of 4-16
 * KiB between two processes came 1.3-1.6 x faster that way (4 KiB
 * windows 2 x). The cause was the rings' PREFETCHW (bip_copy_plain), and
 * ring records now take plain stores anyway; the knob still reaches the
 * other copies. */
#define BIP_COPY_PIECE 2048
extern size_t bip_copy_split_max;

/* The copy in pieces of BIP_COPY_PIECE (copy.c). */
void bip_copy_pieces(void *dst, const void *src, size_t len);

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
	    bip_copy_slow(BIP_COPY_ALIAS_USER, (uintptr_t)dst,
			  (uintptr_t)src))
		bip_copy_loop(dst, src, len);
	else if (len > BIP_COPY_PIECE && len <= bip_copy_split_max)
		bip_copy_pieces(dst, src, len);
	else
		memcpy(dst, src, len);
}

/* bip_copy by plain vector stores, never `rep movsb`: for lines asked for
 * ahead of the copy with PREFETCHW, which `rep movsb` then writes 2 x
 * slower than the vector loop does (AMD Zen 5: 4 KiB ring records 16 GB/s
 * against 33), though either alone is as fast as the other. */
static inline void bip_copy_plain(void *dst, const void *src, size_t len)
{
	if (len > BIP_COPY_PIECE)
		bip_copy_pieces(dst, src, len);
	else
		bip_copy(dst, src, len);
}

#ifdef __cplusplus
}
#endif

#endif
