/*
 * test_copy.c - bip_copy (bip_copy.h) moves exactly the bytes memcpy
 * would: every distance between source and destination modulo 4 KiB that
 * takes its own loop (1 to 63 bytes ahead) and some that do not, lengths
 * on both sides of the loop's threshold and of its 64-byte steps, every
 * length of the inline copy of small ones (0 to 64 bytes, at each
 * alignment of a cache line), and nothing written around the destination,
 * whether this machine's memcpy is taken as slow at those distances or
 * not, and with copies split in pieces (BIP_SHM_COPY_SPLIT) or not; the
 * same of bip_copy_plain, the copy by plain stores into lines asked for
 * ahead; and the calibration that decides it gives one verdict, and says
 * what it measured.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bip_copy.h"
#include "unit.h"

#define AREA (3 * 4096 + 8192)

static void test_calibrate(void)
{
	char why[160] = "";
	unsigned got = bip_copy_calibrate(why, sizeof(why));

	CHECK(got == bip_copy_alias &&
		      !(got & ~(BIP_COPY_ALIAS_USER | BIP_COPY_ALIAS_KERNEL)),
	      "calibration returned %u, set %u", got, bip_copy_alias);
	CHECK(strstr(why, "memcpy") && strstr(why, "GB/s"),
	      "the calibration said '%s'", why);
	CHECK(strstr(why, got & BIP_COPY_ALIAS_USER ? "(loop)" : "(memcpy)"),
	      "the verdict %u is not what it said: '%s'", got, why);
	bip_copy_alias = ~got & 3u;
	CHECK(bip_copy_calibrate(NULL, 0) == (~got & 3u),
	      "a second calibration measured again");
	bip_copy_alias = got;
}

typedef void copy_fn(void *dst, const void *src, size_t len);

/* Every case of copy, with memcpy taken as slow at rep movsb's distances
 * or not. */
static void test_copies(copy_fn *copy, const char *name,
			const unsigned char *src, unsigned char *dst)
{
	static const size_t lens[] = { 0, 1, 63, 64, 2047, 2048, 2049,
				       4095, 4096, 4100, 6144, 6145, 8191 + 64 };

	for (int ahead = 0; ahead <= 130; ahead++) {
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t len = lens[l], s_off = 4096 - 8;
			unsigned char *d = dst + 4096 + s_off + ahead;

			memset(dst, 0xa5, AREA + 4096);
			copy(d, src + s_off, len);
			CHECK(!memcmp(d, src + s_off, len),
			      "%s %zu bytes %d ahead (alias %u): bytes differ",
			      name, len, ahead, bip_copy_alias);
			CHECK(d[-1] == 0xa5 && d[len] == 0xa5,
			      "%s %zu bytes %d ahead (alias %u): wrote outside",
			      name, len, ahead, bip_copy_alias);
		}
	}
	for (size_t len = 0; len <= BIP_COPY_SMALL_MAX + 1; len++) {
		for (int off = 0; off < 64; off++) {
			unsigned char *d = dst + 64 + off;

			memset(dst, 0xa5, 256);
			copy(d, src + 3 + off, len);
			CHECK(!memcmp(d, src + 3 + off, len),
			      "%s %zu bytes at %d: bytes differ", name, len,
			      off);
			CHECK(d[-1] == 0xa5 && d[len] == 0xa5,
			      "%s %zu bytes at %d: wrote outside", name, len,
			      off);
		}
	}
}

int main(void)
{
	unsigned char *src = aligned_alloc(4096, AREA);
	unsigned char *dst = aligned_alloc(4096, AREA + 4096);

	CHECK(src && dst, "aligned_alloc");
	if (!src || !dst)
		return unit_result("test_copy");
	for (size_t i = 0; i < AREA; i++)
		src[i] = (unsigned char)(i * 7 + (i >> 8));
	for (unsigned alias = 0; alias < 2; alias++) {
		bip_copy_alias = alias ? 0 : BIP_COPY_ALIAS_USER;
		test_copies(bip_copy, "bip_copy", src, dst);
		test_copies(bip_copy_plain, "bip_copy_plain", src, dst);
	}
	/* Split (BIP_SHM_COPY_SPLIT): every length above a piece, the
	 * loop's distances among them, goes in pieces, then a tail. */
	bip_copy_split_max = SIZE_MAX;
	test_copies(bip_copy, "bip_copy split", src, dst);
	bip_copy_split_max = 0;
	test_calibrate();
	free(src);
	free(dst);
	return unit_result("test_copy");
}
