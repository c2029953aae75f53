/*
 * fuzz_shm.c - libFuzzer harness for the shm wire's reading of what other
 * processes wrote: a peer's segment (header copied and checked by
 * bipfw_shm_attach, then written into as the ring's producer), and our own
 * inbound ring (record stamps, pads, headers) as a peer filled it. The segment is
 * a heap buffer of exactly the fuzzer's size, so any access outside it is
 * caught. Built with -DFUZZ_SEEDS instead, it writes seeds: segments and
 * rings laid out as a real peer lays them out.
 *
 * Input: one byte of choice (bit 0: the peer's segment; else our ring,
 * whose records are lent as the small queue lends them when bit 1 is set:
 * every other one kept, then all given back in order), then the bytes of
 * that segment or ring image. Every header read from node 1's ring must
 * name node 1, or the forged mark.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip_errno.h"
#include "wire/shm.h"
#include "log.h"

#define KEY 0x5eedull
#define SECRET 0x5ec2e7ull
#define PKT BIP_SMALL_MAX
#define RING "32k" /* the least for PKT: two packets, rounded up */
#define SLOTS 4       /* packets a harness run sends or reads */

static const struct bipfw_wire_params params = {
	.node = 0, .nnodes = 2, .local_nodes = 2, .job_key = KEY,
	.secret = SECRET, .packet_size = PKT,
};

/* Open with the smallest rings (the class reads its knobs). */
static int shm_open(const struct bipfw_wire_params *p, struct bipfw_shm **s)
{
	setenv("BIP_SHM_RING_SIZE", RING, 1);
	return bipfw_shm_open(p, s);
}

/* What the NIC program does to send: reserve, write, commit. */
static int shm_send(struct bipfw_shm *shm, int peer,
		    const struct bip_pkt_hdr *h, const void *payload,
		    size_t len)
{
	struct bip_pkt_hdr *pkt = bipfw_shm_class.reserve(shm, peer, len);

	if (!pkt)
		return -BIP_EAGAIN;
	memcpy(pkt + 1, payload, len);
	memcpy(pkt, h, sizeof(*h));
	bipfw_shm_class.commit(shm, peer, pkt, len);
	return 0;
}

static struct bipfw_shm *shm;

static void close_endpoint(void)
{
	bipfw_shm_close(shm);
}

/* One endpoint for the whole run, its segment named from a secret of this
 * process, removed at exit. */
static struct bipfw_shm *endpoint(void)
{
	struct bipfw_wire_params p = params;

	if (shm)
		return shm;
	p.secret ^= (uint64_t)getpid() << 20;
	if (shm_open(&p, &shm))
		abort();
	atexit(close_endpoint);
	bip_log_threshold = -1; /* every input is a malformed segment */
	return shm;
}

#ifndef FUZZ_SEEDS

/* With FUZZ_REPORT set: segments attached and written into, packets read
 * from the ring; printed at exit. */
static unsigned attached, sent, read_pkts;
static int reporting;

static void report(void)
{
	printf("reached attach %u\nreached ring-write %u\nreached ring-read "
	       "%u\n",
	       attached, sent, read_pkts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bipfw_shm *shm = endpoint();
	const struct bip_pkt_hdr *hdr;
	const void *payload;
	static uint8_t page[PKT];
	size_t len, avail;

	if (!reporting++ && getenv("FUZZ_REPORT"))
		atexit(report);
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		/* A peer's segment: attach it, then send into it. */
		uint8_t *seg = malloc(size - 1 ? size - 1 : 1);
		struct bip_pkt_hdr h = { .len = PKT };

		memcpy(seg, data + 1, size - 1);
		if (bipfw_shm_attach(shm, 1, 4242, seg, size - 1) == 0) {
			attached++;
			for (int i = 0; i < 2 * SLOTS; i++, sent++)
				if (shm_send(shm, 1, &h, page, PKT))
					break;
		}
		free(seg);
		return 0;
	}
	/* Our ring from node 1, as it wrote it: read every packet. */
	{
		uint8_t *ring = bipfw_shm_inbound(shm, 1, &len);
		uint64_t tokens[2 * SLOTS];
		int kept = 0;

		memset(ring, 0, len);
		memcpy(ring, data + 1, size - 1 < len ? size - 1 : len);
		for (int i = 0; i < 2 * SLOTS; i++) {
			if (bipfw_shm_class.peek(shm, &hdr, &payload, &avail))
				break;
			/* What the NIC program reads: a header, and up to a
			 * packet of payload after it. */
			memcpy(page, payload, avail);
			memcpy(page, hdr, sizeof(*hdr));
			/* Node 1's ring speaks for node 1 only. */
			if (hdr->src != 1 && hdr->src != BIPFW_SHM_FORGED)
				abort();
			if ((data[0] & 2) && (i & 1))
				tokens[kept++] = bipfw_shm_class.keep(shm);
			else
				bipfw_shm_class.release(shm);
			read_pkts++;
		}
		for (int i = 0; i < kept; i++)
			bipfw_shm_class.unkeep(shm, 1, tokens[i]);
	}
	return 0;
}

#else /* FUZZ_SEEDS: segments and rings as a peer makes them */

static void save(const char *dir, const char *name, const void *buf,
		 size_t len, int choice)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp || fputc(choice, fp) == EOF ||
	    fwrite(buf, 1, len, fp) != len || fclose(fp)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct bipfw_wire_params peer = params;
	struct bipfw_shm *a, *b;
	size_t len;
	uint8_t *ring;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	/* Node 1's real segment, as node 0 would find it. */
	peer.node = 1;
	if (shm_open(&params, &a))
		return 1;
	if (shm_open(&peer, &b))
		return 1;
	{
		char name[BIPFW_SHM_NAME_MAX], path[80];
		FILE *fp;
		uint8_t *img;
		long n;

		bipfw_shm_name(name, sizeof(name), SECRET, KEY, 1);
		snprintf(path, sizeof(path), "/dev/shm/%s", name);
		fp = fopen(path, "rb");
		if (!fp)
			return 1;
		fseek(fp, 0, SEEK_END);
		n = ftell(fp);
		rewind(fp);
		img = malloc((size_t)n);
		if (fread(img, 1, (size_t)n, fp) != (size_t)n)
			return 1;
		fclose(fp);
		/* The harness's peer pid stands in the header. */
		memcpy(img + 28, &(int32_t){ 4242 }, 4);
		save(argv[1], "segment", img, (size_t)n, 1);
		save(argv[1], "segment-cut", img, 4096, 1);
		/* The tail of our ring off its lines, near the end (once
		 * made the producer stamp a pad past the ring). */
		{
			uint64_t ring, tail;

			memcpy(&ring, img + 56, 8);
			tail = ring - 10;
			memcpy(img + 4096, &tail, 8);
			save(argv[1], "segment-odd-tail", img, (size_t)n, 1);
			tail = 0;
			memcpy(img + 4096, &tail, 8);
		}
		if (bipfw_shm_attach(a, 1, 4242, img, (size_t)n)) {
			fprintf(stderr, "a real segment refused\n");
			return 1;
		}
		/* Rings are masked, so a length that is not a power of two
		 * is refused, and so is one too short for two packets. */
		{
			uint64_t ring;

			memcpy(&ring, img + 56, 8);
			ring = ring / 4 * 3;
			memcpy(img + 56, &ring, 8);
			if (bipfw_shm_attach(a, 1, 4242, img, (size_t)n) !=
			    -BIP_ECARD) {
				fprintf(stderr, "a ring of 3/4 taken\n");
				return 1;
			}
			ring = ring / 3;
			memcpy(img + 56, &ring, 8);
			if (bipfw_shm_attach(a, 1, 4242, img, (size_t)n) !=
			    -BIP_ECARD) {
				fprintf(stderr, "a ring under two packets "
						"taken\n");
				return 1;
			}
		}
		free(img);
	}
	/* Our ring with packets node 1 put there: connect the two, send. */
	{
		char card[256];
		struct bip_pkt_hdr h = { .type = BIP_PKT_SMALL, .src = 1 };
		static uint8_t data[PKT];

		bipfw_shm_card(a, card, sizeof(card));
		if (bipfw_shm_connect(b, 0, card))
			return 1;
		ring = bipfw_shm_inbound(a, 1, &len);
		/* The third claims another source: forged. */
		for (int i = 0; i < 4; i++) {
			h.len = i & 1 ? PKT : 100;
			h.src = i == 2 ? 0 : 1;
			shm_send(b, 0, &h, data, h.len);
		}
		save(argv[1], "ring", ring, len, 0);
	}
	bipfw_shm_close(b);
	bipfw_shm_close(a);
	return 0;
}

#endif
