/*
 * bip_floor.c - the floors BIP is measured against, on this machine, in the
 * same run: a cache-line flag ping-pong between two processes (the least a
 * message can cost), and the bandwidths of the two ways to move long data
 * between processes: a pipelined two-copy ring and single-copy cross-memory
 * attach. Prints "name bytes value" rows; medians throughout.
 *
 * Between hosts, the floor of the udp wire: "bip_floor -e PORT" echoes
 * datagrams on one host, "bip_floor -u ADDR:PORT" times 8-byte ping-pongs
 * against it from another, both busy-polling (the least a udp message
 * costs there).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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

enum { UDP_WARM = 1000, UDP_TRIPS = 1001 };

/* A blocking-free datagram receive: spins, as a busy-polling MPI does. */
static ssize_t udp_spin_recv(int fd, void *buf, size_t len,
			     struct sockaddr_in *from)
{
	socklen_t flen = sizeof(*from);
	ssize_t n;

	while ((n = recvfrom(fd, buf, len, MSG_DONTWAIT, (void *)from,
			     &flen)) < 0 &&
	       (errno == EAGAIN || errno == EINTR))
		;
	return n;
}

static int udp_socket(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (void *)&a, sizeof(a)) < 0) {
		perror("bip_floor: udp socket");
		exit(1);
	}
	return fd;
}

/* -e PORT: answer every datagram with itself, until the pinger is done. */
static int udp_echo(uint16_t port)
{
	int fd = udp_socket(port);
	char buf[64];

	for (int i = 0; i < UDP_WARM + UDP_TRIPS; i++) {
		struct sockaddr_in from;
		ssize_t n = udp_spin_recv(fd, buf, sizeof(buf), &from);

		if (n < 0 || sendto(fd, buf, (size_t)n, 0, (void *)&from,
				    sizeof(from)) != n) {
			perror("bip_floor: udp echo");
			return 1;
		}
	}
	return 0;
}

/* -u ADDR:PORT: 8-byte round trips against an echo, one-way median. */
static int udp_ping(const char *where)
{
	static double v[UDP_TRIPS];
	struct sockaddr_in to = { .sin_family = AF_INET }, from;
	char addr[INET_ADDRSTRLEN];
	unsigned port;
	uint64_t msg = 0;
	int fd;

	if (sscanf(where, "%15[0-9.]:%u", addr, &port) != 2 || !port ||
	    port > 65535 || inet_pton(AF_INET, addr, &to.sin_addr) != 1) {
		fprintf(stderr, "bip_floor: -u wants IPV4:PORT, not %s\n",
			where);
		return 2;
	}
	to.sin_port = htons((uint16_t)port);
	fd = udp_socket(0);
	for (int i = 0; i < UDP_WARM + UDP_TRIPS; i++) {
		double t0 = now_us();

		msg++;
		if (sendto(fd, &msg, sizeof(msg), 0, (void *)&to,
			   sizeof(to)) != sizeof(msg) ||
		    udp_spin_recv(fd, &msg, sizeof(msg), &from) !=
			    sizeof(msg)) {
			perror("bip_floor: udp ping");
			return 1;
		}
		if (i >= UDP_WARM)
			v[i - UDP_WARM] = (now_us() - t0) / 2;
	}
	printf("udp_oneway_usec 8 %.3f\n", median(v, UDP_TRIPS));
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64u << 10, 1u << 20, 4u << 20 };
	struct shared *sh;
	uint8_t *src, *dst;

	if (argc == 3 && strcmp(argv[1], "-e") == 0)
		return udp_echo((uint16_t)atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "-u") == 0)
		return udp_ping(argv[2]);
	if (argc > 1) {
		fprintf(stderr, "usage: bip_floor [-e PORT | -u IPV4:PORT]\n");
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
	free(src);
	free(dst);
	munmap(sh, sizeof(*sh));
	return 0;
}
