/*
 * test_checksum.c - the lossy wires' checksum is CRC32C: the standard check
 * value, and both ways of computing it (table, SSE4.2) against a bit-by-bit
 * reference on lengths up to 9100 bytes at every alignment; a header
 * sealed and then changed in any single bit is no longer intact.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../../src/firmware/checksum.c"

/* Every length to 300, then every 37th to past a jumbo frame: the three
 * chains of 256- and 64-byte blocks, and what follows them. */
#define MAX_LEN 9100

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAILED: " __VA_ARGS__);               \
			fputc('\n', stderr);                                   \
			failures++;                                            \
		}                                                              \
	} while (0)

static uint32_t crc_reference(const uint8_t *p, size_t len)
{
	uint32_t crc = ~0u;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc >> 1 ^ (crc & 1 ? 0x82f63b78u : 0);
	}
	return ~crc;
}

int main(void)
{
	static uint8_t buf[MAX_LEN + 8];
	struct bip_pkt_hdr h = { .job_key = 0x12345678, .type = 1, .len = 9 };
	uint8_t *raw = (uint8_t *)&h;
	bool hw = false;

	CHECK(bipfw_csum("123456789", 9) == 0xe3069283u,
	      "check value %08x", bipfw_csum("123456789", 9));
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
#if defined(__x86_64__)
	hw = __builtin_cpu_supports("sse4.2");
#endif
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= MAX_LEN;
		     len += len < 300 ? 1 : 37) {
			uint32_t want = crc_reference(buf + off, len);

			CHECK(~crc_bytes(~0u, buf + off, len) == want,
			      "table: offset %zu length %zu", off, len);
			CHECK(bipfw_csum(buf + off, len) == want,
			      "csum: offset %zu length %zu", off, len);
#if defined(__x86_64__)
			if (hw)
				CHECK(~crc_sse42(~0u, buf + off, len) == want,
				      "sse4.2: offset %zu length %zu", off,
				      len);
#endif
		}
	bipfw_hdr_seal(&h);
	CHECK(bipfw_hdr_intact(&h), "sealed header not intact");
	for (size_t bit = 0; bit < 8 * sizeof(h); bit++) {
		raw[bit / 8] ^= (uint8_t)(1u << bit % 8);
		CHECK(!bipfw_hdr_intact(&h), "bit %zu flipped unnoticed", bit);
		raw[bit / 8] ^= (uint8_t)(1u << bit % 8);
	}
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("CRC32C: all checks passed (%s)\n",
	       hw ? "table and SSE4.2" : "table; no SSE4.2 here");
	return 0;
}
