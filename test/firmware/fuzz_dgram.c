/*
 * fuzz_dgram.c - libFuzzer harness for the network wires' reading of what
 * the network delivers (udp datagrams, eth frames): a received message
 * (maybe a coalesced run, whose segment size comes in control data that
 * the fuzzer writes too) is cut into segments as dgram.c's peek cuts it,
 * and each segment classified (bipfw_dgram_classify). The message is a heap buffer of exactly its size,
 * so any read beyond it is caught. Built with -DFUZZ_SEEDS instead, it
 * writes seeds: a packet, one for another process, a liveness answer,
 * another job's datagram and a run of three packets.
 *
 * Input: the control message's level and type (a byte each: 0 means the
 * udp wire's own), its length (a byte: 0 no control message, 1 a short
 * one, else a full one), the segment size (4 bytes, little-endian int),
 * then the message.
 */
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "firmware.h"
#include "wire/dgram.h"

#define TAG 0x7a67u
#define NNODES 4
#define SELF 1
#define OUTER sizeof(struct bip_outer_hdr)
#define HDR sizeof(struct bip_pkt_hdr)
#define CTL 5

static unsigned long counts[BIPFW_DGRAM_NKINDS];

static void report(void)
{
	fprintf(stderr,
		"reached: %lu packets, %lu for another process, %lu liveness "
		"answers, %lu foreign, %lu malformed\n",
		counts[BIPFW_DGRAM_PACKET], counts[BIPFW_DGRAM_OTHER],
		counts[BIPFW_DGRAM_ALIVE], counts[BIPFW_DGRAM_FOREIGN],
		counts[BIPFW_DGRAM_BAD]);
}

/* Segments as the wire's peek walks them. */
static void walk(const struct msghdr *h, const uint8_t *msg, size_t len)
{
	size_t seg = bipfw_dgram_seg_size(h, len), off = 0;

	if (len && (seg == 0 || seg > len))
		abort();
	do {
		size_t n = len - off < seg ? len - off : seg;
		uint32_t node = UINT32_MAX;
		enum bipfw_dgram_kind k = bipfw_dgram_classify(
			msg + off, n, TAG, SELF, NNODES, &node);

		if (k >= BIPFW_DGRAM_NKINDS ||
		    (k == BIPFW_DGRAM_PACKET && n < OUTER + HDR) ||
		    (k == BIPFW_DGRAM_ALIVE && node >= NNODES))
			abort();
		counts[k]++;
		off += seg;
	} while (seg && off < len);
}

#ifndef FUZZ_SEEDS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct msghdr h = { 0 };
	static int reporting;
	uint8_t *msg;
	int seg;

	if (!reporting++ && getenv("FUZZ_REPORT"))
		atexit(report);
	if (size < CTL + 4)
		return 0;
	memset(&cm, 0, sizeof(cm));
	if (data[2]) {
		cm.align.cmsg_level = data[0] ? data[0] : IPPROTO_UDP;
		cm.align.cmsg_type = data[1] ? data[1] : UDP_GRO;
		cm.align.cmsg_len = data[2] == 1 ? CMSG_LEN(1)
						 : CMSG_LEN(sizeof(int));
		memcpy(&seg, data + 3, sizeof(seg));
		memcpy(CMSG_DATA(&cm.align), &seg, sizeof(seg));
		h.msg_control = cm.buf;
		h.msg_controllen = sizeof(cm.buf);
	}
	size -= CTL + 4;
	msg = malloc(size ? size : 1);
	memcpy(msg, data + CTL + 4, size);
	walk(&h, msg, size);
	free(msg);
	return 0;
}
#else
static void save(const char *dir, const char *name, int seg,
		 const void *msg, size_t len)
{
	char path[512];
	uint8_t head[CTL + 4] = { 0, 0, (uint8_t)(seg ? 2 : 0) };
	FILE *f;

	memcpy(head + 3, &seg, sizeof(seg));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(head, 1, sizeof(head), f) != sizeof(head) ||
	    fwrite(msg, 1, len, f) != len) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	enum { PAYLOAD = 40, ONE = OUTER + HDR + PAYLOAD };
	static uint8_t run[3 * ONE];
	struct bip_outer_hdr o = { .magic = BIP_OUTER_MAGIC, .node = SELF,
				   .tag = TAG };
	struct bip_pkt_hdr p = { .version = BIP_WIRE_VERSION,
				 .type = BIP_PKT_SMALL, .len = PAYLOAD };

	if (argc != 2)
		return 2;
	for (int i = 0; i < 3; i++) {
		memcpy(run + i * ONE, &o, OUTER);
		memcpy(run + i * ONE + OUTER, &p, HDR);
	}
	save(argv[1], "packet", 0, run, ONE);
	save(argv[1], "run", ONE, run, sizeof(run));
	save(argv[1], "run-short-tail", ONE, run, sizeof(run) - 7);
	run[4] = SELF + 1;
	save(argv[1], "other-process", 0, run, ONE);
	o.magic = BIP_OUTER_ALIVE;
	o.node = 2;
	save(argv[1], "alive", 0, &o, OUTER);
	o.tag ^= 1;
	save(argv[1], "foreign", 0, &o, OUTER);
	return 0;
}
#endif
