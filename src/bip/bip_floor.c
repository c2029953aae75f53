/*
 * bip_floor.c - the floors BIP is measured against, on this machine, in the
 * same run: a cache-line flag ping-pong between two processes (the least a
 * message can cost), and the bandwidths of the two ways to move long data
 * between processes: a pipelined two-copy ring and single-copy cross-memory
 * attach, one way, and cross-memory attach both ways at once (each process
 * reading the other's buffer: what a bidirectional bandwidth can reach).
 * Prints "name bytes value" rows; medians throughout.
 *
 * Between hosts, the floors of the network wires: "bip_floor -e PORT"
 * echoes udp datagrams on one host, "bip_floor -u ADDR:PORT" times 8-byte
 * ping-pongs against it from another; -f IFACE and -F IFACE do the same
 * with raw Ethernet frames (root). Both sides busy-poll: the least a
 * message costs on that wire.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SAMPLES 31
#define PACKET (32u << 10) /* BIP's default packet size and ring depth */
#define SLOTS 32

struct shared {
	_Alignas(64) _Atomic uint64_t ping;
	_Alignas(64) _Atomic uint64_t pong;
	_Alignas(64) _Atomic uint64_t head;
	_Alignas(64) _Atomic uint64_t tail;
	_Alignas(64) _Atomic int go;
	_Alignas(64) _Atomic uint64_t arrived;
	_Alignas(64) double child_us;
	_Alignas(64) uint8_t ring[SLOTS][PACKET];
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* One-way latency of a cache-line flag between two processes, timed as
 * bip_pingpong times messages: each round trip on its own, the median
 * halved (so both pay the same clock reads). */
static double cacheline_floor(struct shared *sh)
{
	enum { WARM = 1000, TRIPS = 1001 };
	static double v[TRIPS];
	pid_t child = fork();

	if (child == 0) {
		for (uint64_t i = 1; i <= WARM + TRIPS; i++) {
			while (atomic_load_explicit(&sh->ping,
						    memory_order_acquire) != i)
				relax();
			atomic_store_explicit(&sh->pong, i,
					      memory_order_release);
		}
		_exit(0);
	}
	for (uint64_t i = 1; i <= WARM + TRIPS; i++) {
		double t0 = now_us();

		atomic_store_explicit(&sh->ping, i, memory_order_release);
		while (atomic_load_explicit(&sh->pong, memory_order_acquire) !=
		       i)
			relax();
		if (i > WARM)
			v[i - WARM - 1] = now_us() - t0;
	}
	waitpid(child, NULL, 0);
	return median(v, TRIPS) / 2;
}

/* Two-copy ring: the producer copies into slots while the consumer copies
 * out of the previous ones, as BIP's shm wire does. Returns MB/s. */
static double ring_floor(struct shared *sh, size_t len, uint8_t *src,
			 uint8_t *dst)
{
	double v[SAMPLES];
	pid_t child;

	atomic_store(&sh->head, 0);
	atomic_store(&sh->tail, 0);
	child = fork();
	if (child == 0) {
		uint64_t tail = 0;

		for (int s = 0; s <= SAMPLES; s++)
			for (size_t off = 0; off < len; off += PACKET, tail++) {
				size_t n = len - off < PACKET ? len - off
							      : PACKET;

				while (atomic_load_explicit(
					       &sh->head,
					       memory_order_acquire) == tail)
					relax();
				memcpy(dst + off, sh->ring[tail % SLOTS], n);
				atomic_store_explicit(&sh->tail, tail + 1,
						      memory_order_release);
			}
		_exit(0);
	}
	for (uint64_t head = 0, s = 0; s <= SAMPLES; s++) {
		double t0 = now_us();

		for (size_t off = 0; off < len; off += PACKET, head++) {
			size_t n = len - off < PACKET ? len - off : PACKET;

			while (head - atomic_load_explicit(
					      &sh->tail,
					      memory_order_acquire) >= SLOTS)
				relax();
			memcpy(sh->ring[head % SLOTS], src + off, n);
			atomic_store_explicit(&sh->head, head + 1,
					      memory_order_release);
		}
		while (atomic_load_explicit(&sh->tail, memory_order_acquire) !=
		       head)
			relax();
		if (s)
			v[s - 1] = len / (now_us() - t0);
	}
	waitpid(child, NULL, 0);
	return median(v, SAMPLES);
}

/* Single copy by process_vm_readv from a child's buffer. MB/s, or -errno. */
static double cma_floor(size_t len, uint8_t *src, uint8_t *dst)
{
	double v[SAMPLES];
	int fds[2];
	pid_t child;
	char c;

	if (pipe(fds) < 0)
		return -errno;
	child = fork();
	if (child == 0) {
		close(fds[1]);
		(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
		(void)!read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	for (int s = 0; s <= SAMPLES; s++) {
		struct iovec l = { dst, len }, r = { src, len };
		double t0 = now_us();
		ssize_t n = process_vm_readv(child, &l, 1, &r, 1, 0);

		if (n != (ssize_t)len) {
			int err = errno ? errno : EIO;

			close(fds[1]);
			waitpid(child, NULL, 0);
			return -err;
		}
		if (s)
			v[s - 1] = len / (now_us() - t0);
	}
	close(fds[1]);
	waitpid(child, NULL, 0);
	return median(v, SAMPLES);
}

/* Both processes at a barrier: the n-th arrival of each. */
static void meet(struct shared *sh, uint64_t n)
{
	atomic_fetch_add_explicit(&sh->arrived, 1, memory_order_acq_rel);
	while (atomic_load_explicit(&sh->arrived, memory_order_acquire) <
	       2 * n)
		relax();
}

/* Single copies both ways at once: each process reads READS messages of
 * len bytes from the other's buffer into its own, as a bidirectional
 * window of messages read by their receivers does. Returns the bytes both
 * moved over the slower one's time, MB/s, or -errno. */
static double cma_both_floor(struct shared *sh, size_t len, uint8_t *src,
			     uint8_t *dst)
{
	enum { READS = 16 };
	double v[SAMPLES];
	pid_t parent = getpid(), child, peer;
	int err = 0;

	atomic_store(&sh->arrived, 0);
	child = fork();
	if (child < 0)
		return -errno;
	/* Our own copies of the buffers, not pages shared with the other
	 * since the fork; and the child may read the parent. */
	memset(src, child ? 0x5a : 0xa5, len);
	memset(dst, 0, len);
	if (child)
		(void)prctl(PR_SET_PTRACER, (unsigned long)child, 0, 0, 0);
	peer = child ? child : parent;
	for (int s = 0; s <= SAMPLES; s++) {
		double t0, us;

		meet(sh, 2 * (uint64_t)s + 1);
		t0 = now_us();
		for (int i = 0; i < READS && !err; i++) {
			struct iovec l = { dst, len }, r = { src, len };

			errno = 0;
			if (process_vm_readv(peer, &l, 1, &r, 1, 0) !=
			    (ssize_t)len)
				err = errno ? errno : EIO;
		}
		us = now_us() - t0;
		if (!child)
			sh->child_us = err ? -err : us;
		meet(sh, 2 * (uint64_t)s + 2);
		if (!child)
			continue;
		if (!err && sh->child_us < 0)
			err = (int)-sh->child_us;
		if (s && !err)
			v[s - 1] = 2.0 * READS * len /
				   (us > sh->child_us ? us : sh->child_us);
	}
	if (!child)
		_exit(0);
	waitpid(child, NULL, 0);
	(void)prctl(PR_SET_PTRACER, 0, 0, 0, 0);
	return err ? -err : median(v, SAMPLES);
}

enum { NET_WARM = 1000, NET_TRIPS = 1001 };
#define FLOOR_ETHERTYPE 0x88b6 /* local experimental, not BIP's own */

/* An address of either network floor. */
union net_addr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_ll ll;
};

/* A blocking-free datagram receive: spins, as a busy-polling MPI does. */
static ssize_t spin_recv(int fd, void *buf, size_t len, union net_addr *from)
{
	socklen_t flen = sizeof(*from);
	ssize_t n;

	while ((n = recvfrom(fd, buf, len, MSG_DONTWAIT, &from->sa, &flen)) <
		       0 &&
	       (errno == EAGAIN || errno == EINTR))
		;
	return n;
}

/* "-e PORT" / "-u ADDR:PORT": a udp socket on PORT (0: any), and the echo's
 * address. "-f IFACE" / "-F IFACE": a packet socket of an experimental
 * EtherType on IFACE (CAP_NET_RAW), the echo found by a broadcast. */
static int net_socket(char mode, const char *arg, union net_addr *to,
		      socklen_t *alen)
{
	char addr[INET_ADDRSTRLEN];
	unsigned port = 0;
	union net_addr me;
	int fd;

	memset(to, 0, sizeof(*to));
	if (mode == 'f' || mode == 'F') {
		to->ll = (struct sockaddr_ll){
			.sll_family = AF_PACKET,
			.sll_protocol = htons(FLOOR_ETHERTYPE),
			.sll_ifindex = (int)if_nametoindex(arg),
			.sll_halen = 6,
			.sll_addr = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		};
		*alen = sizeof(to->ll);
		fd = socket(AF_PACKET, SOCK_DGRAM, htons(FLOOR_ETHERTYPE));
	} else {
		if (mode == 'e' ? sscanf(arg, "%u", &port) != 1
				: sscanf(arg, "%15[0-9.]:%u", addr, &port) != 2 ||
					  inet_pton(AF_INET, addr,
						    &to->in.sin_addr) != 1 ||
					  !port) {
			fprintf(stderr, "bip_floor: -%c: bad address %s\n",
				mode, arg);
			exit(2);
		}
		to->in.sin_family = AF_INET;
		to->in.sin_port = htons((uint16_t)port);
		*alen = sizeof(to->in);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
	}
	/* The pinger's udp socket: any address, any port. */
	me = *to;
	if (mode == 'u')
		me.in = (struct sockaddr_in){ .sin_family = AF_INET };
	if (fd < 0 || bind(fd, &me.sa, *alen) < 0) {
		perror("bip_floor: socket");
		exit(1);
	}
	return fd;
}

/* -e, -f: answer every datagram with itself, until the pinger is done. */
static int net_echo(char mode, const char *arg)
{
	union net_addr me, from;
	socklen_t alen;
	int fd = net_socket(mode, arg, &me, &alen);
	char buf[64];

	for (int i = 0; i < NET_WARM + NET_TRIPS; i++) {
		ssize_t n = spin_recv(fd, buf, sizeof(buf), &from);

		if (n < 0 ||
		    sendto(fd, buf, (size_t)n, 0, &from.sa, alen) != n) {
			perror("bip_floor: echo");
			return 1;
		}
	}
	return 0;
}

/* -u, -F: 8-byte round trips against an echo, one-way median (a frame
 * carries 46 bytes at least: Ethernet's minimum). */
static int net_ping(char mode, const char *arg)
{
	static double v[NET_TRIPS];
	union net_addr to, from;
	socklen_t alen;
	int fd = net_socket(mode, arg, &to, &alen);
	size_t len = mode == 'F' ? 46 : 8;
	uint8_t msg[64] = { 0 };

	for (int i = 0; i < NET_WARM + NET_TRIPS; i++) {
		double t0 = now_us();

		if (sendto(fd, msg, len, 0, &to.sa, alen) != (ssize_t)len ||
		    spin_recv(fd, msg, sizeof(msg), &from) < 8) {
			perror("bip_floor: ping");
			return 1;
		}
		if (mode == 'F') /* the echo found: talk to it alone */
			memcpy(to.ll.sll_addr, from.ll.sll_addr, 6);
		if (i >= NET_WARM)
			v[i - NET_WARM] = (now_us() - t0) / 2;
	}
	printf("%s_oneway_usec 8 %.3f\n", mode == 'F' ? "frame" : "udp",
	       median(v, NET_TRIPS));
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64u << 10, 1u << 20, 4u << 20 };
	struct shared *sh;
	uint8_t *src, *dst;

	if (argc == 3 && argv[1][0] == '-' && strchr("ef", argv[1][1]) &&
	    !argv[1][2])
		return net_echo(argv[1][1], argv[2]);
	if (argc == 3 && argv[1][0] == '-' && strchr("uF", argv[1][1]) &&
	    !argv[1][2])
		return net_ping(argv[1][1], argv[2]);
	if (argc > 1) {
		fprintf(stderr, "usage: bip_floor [-e PORT | -u IPV4:PORT | "
				"-f IFACE | -F IFACE]\n");
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	src = malloc(4u << 20);
	dst = malloc(4u << 20);
	if (sh == MAP_FAILED || !src || !dst) {
		perror("bip_floor");
		return 1;
	}
	memset(src, 0x5a, 4u << 20);
	memset(dst, 0, 4u << 20);
	printf("# floor bytes value   (medians of %d samples)\n", SAMPLES);
	printf("cacheline_oneway_usec 8 %.3f\n", cacheline_floor(sh));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double cma = cma_floor(sizes[i], src, dst);

		printf("ring_MBps %zu %.1f\n", sizes[i],
		       ring_floor(sh, sizes[i], src, dst));
		if (cma < 0)
			printf("# cma_MBps %zu unavailable: %s\n", sizes[i],
			       strerror((int)-cma));
		else
			printf("cma_MBps %zu %.1f\n", sizes[i], cma);
	}
	/* Every power of two where bidirectional windows are read by their
	 * receivers: the floor a bidirectional bandwidth is held to there. */
	for (size_t len = 64u << 10; len <= 4u << 20; len *= 2) {
		double both = cma_both_floor(sh, len, src, dst);

		if (both < 0)
			printf("# cma_both_MBps %zu unavailable: %s\n", len,
			       strerror((int)-both));
		else
			printf("cma_both_MBps %zu %.1f\n", len, both);
	}
	free(src);
	free(dst);
	munmap(sh, sizeof(*sh));
	return 0;
}
