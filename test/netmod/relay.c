/*
 * relay.c - a bad network between two hosts of the multi-host tests:
 * forwards every Ethernet frame between two interfaces (packet sockets)
 * and, from a seeded generator, drops DROP %, doubles DUP % and holds back
 * REORDER % of them until 1 to 4 later frames went the same way (or 2 ms
 * passed), so they arrive out of order. It stands in for netem, which the
 * test kernel lacks, and unlike nftables its faults can be replayed. Runs
 * until SIGTERM or SIGINT, then prints what it did.
 *
 *   relay IFACE_A IFACE_B DROP DUP REORDER SEED
 *
 * The links it joins need their offloads off (no GSO/GRO super-frames, no
 * checksums left to the device): it moves frames as they are.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAX 65536
#define HELD_MAX 64
#define HOLD_FRAMES 4
#define HOLD_NS 2000000

struct held {
	int left;         /* frames to let pass first */
	int64_t deadline; /* or until then */
	size_t len;
	unsigned char *frame;
};

/* One direction: frames read from in go out of out. */
struct way {
	int in, out;
	struct held held[HELD_MAX];
	int nheld;
};

static volatile sig_atomic_t stop;
static unsigned drop_pct, dup_pct, reorder_pct;
static uint64_t rng;
static uint64_t forwarded, dropped, doubled, reordered, failed;

static void on_signal(int sig)
{
	stop = 1;
}

/* xorshift64*: the same seed, the same faults. */
static unsigned pct(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned)((rng * 0x2545f4914f6cdd1dull) >> 33) % 100;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int open_iface(const char *name)
{
	struct sockaddr_ll a = { .sll_family = AF_PACKET,
				 .sll_protocol = htons(ETH_P_ALL) };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	a.sll_ifindex = (int)if_nametoindex(name);
	if (fd < 0 || !a.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "relay: %s: %s\n", name, strerror(errno));
		exit(1);
	}
	return fd;
}

static void put(struct way *w, const void *frame, size_t len)
{
	if (send(w->out, frame, len, 0) == (ssize_t)len)
		forwarded++;
	else
		failed++;
}

/* Frames held long enough go out: after enough later ones, or late. */
static void release(struct way *w, int passed, int64_t now)
{
	for (int i = 0; i < w->nheld;) {
		struct held *h = &w->held[i];

		h->left -= passed;
		if (h->left > 0 && now < h->deadline) {
			i++;
			continue;
		}
		put(w, h->frame, h->len);
		free(h->frame);
		*h = w->held[--w->nheld];
	}
}

static void relay_frame(struct way *w, const unsigned char *frame,
			size_t len)
{
	unsigned copies = 1;

	release(w, 1, now_ns());
	if (pct() < drop_pct)
		copies = 0, dropped++;
	else if (pct() < dup_pct)
		copies = 2, doubled++;
	for (unsigned c = 0; c < copies; c++) {
		struct held *h = &w->held[w->nheld];

		if (pct() >= reorder_pct || w->nheld == HELD_MAX ||
		    !(h->frame = malloc(len))) {
			put(w, frame, len);
			continue;
		}
		memcpy(h->frame, frame, len);
		h->len = len;
		h->left = 1 + (int)(pct() % HOLD_FRAMES);
		h->deadline = now_ns() + HOLD_NS;
		w->nheld++;
		reordered++;
	}
}

static unsigned arg_pct(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v > 100) {
		fprintf(stderr, "relay: '%s' is no percentage\n", s);
		exit(2);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	static unsigned char frame[FRAME_MAX];
	struct sigaction sa = { .sa_handler = on_signal };
	struct way ways[2];
	struct pollfd pfd[2];

	if (argc != 7) {
		fprintf(stderr, "usage: relay IFACE_A IFACE_B DROP DUP REORDER "
				"SEED\n");
		return 2;
	}
	drop_pct = arg_pct(argv[3]);
	dup_pct = arg_pct(argv[4]);
	reorder_pct = arg_pct(argv[5]);
	rng = strtoull(argv[6], NULL, 10) * 0x9e3779b97f4a7c15ull | 1;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	memset(ways, 0, sizeof(ways));
	ways[0].in = ways[1].out = open_iface(argv[1]);
	ways[1].in = ways[0].out = open_iface(argv[2]);
	for (int d = 0; d < 2; d++)
		pfd[d] = (struct pollfd){ .fd = ways[d].in, .events = POLLIN };
	printf("relay: %s <-> %s, drop %u %%, dup %u %%, reorder %u %%\n",
	       argv[1], argv[2], drop_pct, dup_pct, reorder_pct);
	fflush(stdout);
	while (!stop) {
		int n = poll(pfd, 2, 1);

		for (int d = 0; d < 2 && n > 0; d++) {
			struct sockaddr_ll from;
			socklen_t fl = sizeof(from);
			ssize_t len;

			if (!(pfd[d].revents & POLLIN))
				continue;
			len = recvfrom(ways[d].in, frame, sizeof(frame),
				       MSG_DONTWAIT, (struct sockaddr *)&from,
				       &fl);
			/* What we send out of an interface comes back to its
			 * socket as outgoing: not ours to relay. */
			if (len > 0 && from.sll_pkttype != PACKET_OUTGOING)
				relay_frame(&ways[d], frame, (size_t)len);
		}
		for (int d = 0; d < 2; d++)
			release(&ways[d], 0, now_ns());
	}
	for (int d = 0; d < 2; d++)
		release(&ways[d], HOLD_FRAMES, INT64_MAX);
	printf("relay: %" PRIu64 " frames forwarded, %" PRIu64 " dropped, %"
	       PRIu64 " doubled, %" PRIu64 " held back, %" PRIu64
	       " not sent\n", forwarded, dropped, doubled, reordered, failed);
	return 0;
}
