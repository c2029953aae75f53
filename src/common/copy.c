/*
 * copy.c - bip_copy's loop (bip_copy.h): 64 bytes a turn in vector loads
 * and stores, never `rep movsb`; its copy in pieces too short for
 * `rep movsb`; and the measure of whether this machine needs the loop.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bip_copy.h"

unsigned bip_copy_alias = BIP_COPY_ALIAS_USER | BIP_COPY_ALIAS_KERNEL;

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

size_t bip_copy_split_max;

void bip_copy_pieces(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	for (; len > BIP_COPY_PIECE;
	     len -= BIP_COPY_PIECE, d += BIP_COPY_PIECE, s += BIP_COPY_PIECE)
		memcpy(d, s, BIP_COPY_PIECE);
	memcpy(d, s, len);
}

/* --- calibration ------------------------------------------------------- */

#define CAL_LEN (64u << 10)
#define CAL_RUNS 4   /* the fastest of them: a preempted one is ignored */
#define CAL_AHEAD 16 /* a buffer from malloc against a page-aligned one */

enum cal_way { CAL_MEMCPY, CAL_LOOP, CAL_CMA };

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The fastest of CAL_RUNS copies of CAL_LEN bytes by way, after one to
 * fault the pages in; 0 if cross-memory attach to ourselves is refused. */
static uint64_t fastest(enum cal_way way, unsigned char *dst,
			const unsigned char *src)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i <= CAL_RUNS; i++) {
		struct iovec l = { dst, CAL_LEN }, r = { (void *)src, CAL_LEN };
		uint64_t t = now_ns();

		if (way == CAL_MEMCPY)
			memcpy(dst, src, CAL_LEN);
		else if (way == CAL_LOOP)
			bip_copy_loop(dst, src, CAL_LEN);
		else if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) !=
			 (ssize_t)CAL_LEN)
			return 0;
		__asm__ volatile("" : : "r"(dst) : "memory");
		t = now_ns() - t;
		if (i && t < best)
			best = t ? t : 1;
	}
	return best;
}

/*
 * Rule: bip_copy takes its loop where memcpy is 1.5 x slower than it 16
 * bytes past the source (AMD Zen: 10-20 x; Intel Xeon: the loop is the
 * slower); the kernel's copies go through a bounce buffer where they are 2
 * x slower there than at 0 bytes (AMD Zen: 4-10 x; Intel Xeon: 1.2 x).
 * The margins keep a noisy machine's verdict where a clear one is.
 */
unsigned bip_copy_calibrate(char *why, size_t len)
{
	static int done;
	static char said[160] = "not measured (no memory)";
	unsigned char *src = NULL, *dst = NULL;
	uint64_t mem, loop, cma, cma0;
	int n;

	if (done)
		goto out;
	src = aligned_alloc(4096, CAL_LEN + 4096);
	dst = aligned_alloc(4096, CAL_LEN + 4096);
	if (!src || !dst)
		goto out;
	memset(src, 0x5a, CAL_LEN + 4096);
	memset(dst, 0, CAL_LEN + 4096);
	mem = fastest(CAL_MEMCPY, dst + CAL_AHEAD, src);
	loop = fastest(CAL_LOOP, dst + CAL_AHEAD, src);
	cma = fastest(CAL_CMA, dst + CAL_AHEAD, src);
	cma0 = fastest(CAL_CMA, dst, src);
	bip_copy_alias = 0;
	if (mem * 2 > loop * 3)
		bip_copy_alias |= BIP_COPY_ALIAS_USER;
	if (cma && cma0 && cma > 2 * cma0)
		bip_copy_alias |= BIP_COPY_ALIAS_KERNEL;
	n = snprintf(said, sizeof(said), "16 bytes apart mod 4 KiB, 64 KiB: "
		     "memcpy %.1f GB/s, loop %.1f (%s)", (double)CAL_LEN / mem,
		     (double)CAL_LEN / loop,
		     bip_copy_alias & BIP_COPY_ALIAS_USER ? "loop" : "memcpy");
	if (n < 0 || (size_t)n >= sizeof(said))
		n = 0;
	if (cma && cma0)
		snprintf(said + n, sizeof(said) - (size_t)n,
			 "; cross-memory %.1f, 0 apart %.1f (%s)",
			 (double)CAL_LEN / cma, (double)CAL_LEN / cma0,
			 bip_copy_alias & BIP_COPY_ALIAS_KERNEL ? "bounced"
								: "direct");
	else
		snprintf(said + n, sizeof(said) - (size_t)n,
			 "; cross-memory attach refused");
	done = 1;
out:
	free(src);
	free(dst);
	if (len)
		snprintf(why, len, "%s", said);
	return bip_copy_alias;
}
