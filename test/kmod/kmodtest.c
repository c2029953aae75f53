/*
 * kmodtest.c - the tests of bip.ko, run as root by the /init of the QEMU
 * guest that test/kmod/qemu.sh boots. Each test runs in a process of its
 * own, as nobody (no capability at all) wherever the feature is meant for
 * unprivileged users, and ends in one line: "BIPTEST PASS name" or
 * "BIPTEST FAIL name". The frame test wants veth0 and veth1, a veth pair,
 * in the namespace it starts in, and the module loaded with
 * ifaces=veth0,veth1,veth9.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bip_kabi.h"
#include "bip_wire.h"
#include "firmware.h" /* bipfw_siphash: the wires' own tag */
#include "unit.h"

/* A failed check ends the test's process: what follows builds on it. */
#define REQUIRE(cond)                                                          \
	do {                                                                   \
		CHECK(cond, "errno %d (%s)", errno, strerror(errno));          \
		if (failures)                                                  \
			exit(1);                                               \
	} while (0)
/* A call that must fail with errno e. */
#define FAILS(call, e) REQUIRE((call) == -1 && errno == (e))

#define SECRET 0x5ec2e7b1d0c0ffeeull
#define JOB_KEY 0x42ull
#define PAGE 4096
#define KPTR ((void *)0xffff888000000000ul) /* the kernel's direct map */
#define NOBODY 65534
#define PARAMS "/sys/module/bip/parameters/"

static int dev_open(void)
{
	int fd = open(BIP_KABI_DEVICE, O_RDWR | O_CLOEXEC);

	REQUIRE(fd >= 0);
	return fd;
}

static struct bip_kabi_job join(int fd, uint64_t secret, uint64_t job_key)
{
	struct bip_kabi_job j = { .secret = secret, .job_key = job_key };

	REQUIRE(ioctl(fd, BIP_IOC_JOB, &j) == 0);
	REQUIRE(j.endpoint != 0);
	return j;
}

static int reg_try(int fd, uint64_t addr, uint64_t len, uint64_t *handle)
{
	struct bip_kabi_reg r = { .addr = addr, .len = len };
	int rc = ioctl(fd, BIP_IOC_REG, &r);

	if (handle)
		*handle = r.handle;
	return rc;
}

static uint64_t reg(int fd, const void *p, size_t len)
{
	uint64_t h;

	REQUIRE(reg_try(fd, (uintptr_t)p, len, &h) == 0 && h != 0);
	return h;
}

static int copy(int fd, uint64_t h, uint64_t off, uint64_t peer,
		uint64_t peer_h, uint64_t peer_off, uint64_t len,
		uint32_t flags)
{
	struct bip_kabi_copy c = { .handle = h, .offset = off, .peer = peer,
				   .peer_handle = peer_h,
				   .peer_offset = peer_off, .len = len,
				   .flags = flags };

	return ioctl(fd, BIP_IOC_COPY, &c);
}

static uint64_t counter(int fd, enum bip_kabi_counter c)
{
	struct bip_kabi_stats s;

	REQUIRE(ioctl(fd, BIP_IOC_STATS, &s) == 0);
	return s.file[c];
}

/* The file's counters on one line, for the log. */
static void print_stats(const char *who, int fd)
{
	struct bip_kabi_stats s;

	REQUIRE(ioctl(fd, BIP_IOC_STATS, &s) == 0);
	printf("BIPTEST STATS %s (uid %d):", who, (int)getuid());
	for (unsigned i = 0; i < BIP_CNT_N; i++)
		printf(" %s=%llu", bip_kabi_counter_name(i),
		       (unsigned long long)s.file[i]);
	printf("\n");
	fflush(stdout);
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQUIRE(p != MAP_FAILED);
	return p;
}

static uint8_t pattern(unsigned seed, size_t i)
{
	return (uint8_t)(i * 131 + (i >> 9) + seed * 71);
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

static void put(int fd, const void *p, size_t n)
{
	REQUIRE(write(fd, p, n) == (ssize_t)n);
}

/* n bytes from a pipe; false at its end (the other side failed). */
static bool get(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static void set_param(const char *name, const char *value)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	REQUIRE(fputs(value, f) >= 0);
	REQUIRE(fclose(f) == 0);
}

static void sh(const char *fmt, ...)
{
	char cmd[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	REQUIRE(system(cmd) == 0);
}

/* Become nobody, with no capability left: in particular no CAP_NET_RAW
 * (no packet socket) and no CAP_IPC_LOCK (RLIMIT_MEMLOCK holds). */
static void drop_privileges(void)
{
	REQUIRE(setgroups(0, NULL) == 0);
	REQUIRE(setresgid(NOBODY, NOBODY, NOBODY) == 0);
	REQUIRE(setresuid(NOBODY, NOBODY, NOBODY) == 0);
	FAILS(socket(AF_PACKET, SOCK_DGRAM, 0), EPERM);
}

/* --- the tests ---------------------------------------------------------- */

/* The device node, and what works before a job is set. */
static void test_device(void)
{
	struct bip_kabi_info info;
	struct stat st;
	int fd;

	REQUIRE(stat(BIP_KABI_DEVICE, &st) == 0);
	REQUIRE(S_ISCHR(st.st_mode) && (st.st_mode & 0777) == 0666);
	drop_privileges();
	fd = dev_open();
	REQUIRE(ioctl(fd, BIP_IOC_INFO, &info) == 0);
	REQUIRE(info.version == BIP_KABI_VERSION && info.page_size == PAGE);
	REQUIRE(info.max_pinned > 0 && info.nicmem_max > 0 &&
		info.send_max > 0);
	FAILS(ioctl(fd, _IO(BIP_KABI_IOC_TYPE, 99)), ENOTTY);
	FAILS(ioctl(fd, _IOR(BIP_KABI_IOC_TYPE, 0, uint64_t), &info), ENOTTY);
	FAILS(ioctl(fd, _IO('T', 1)), ENOTTY);
	close(fd);
}

/* The job: set once, and nothing else before it. */
static void test_job(void)
{
	static const uint8_t what[8] = { 'u', 'd', 'p', '-', 't', 'a', 'g' };
	struct bip_kabi_job j = { .secret = 0, .job_key = JOB_KEY };
	struct bip_kabi_stats s;
	struct bip_kabi_bind b = { .ifname = "veth0",
				   .ethertype = BIP_ETHERTYPE };
	struct bip_kabi_send snd = { .count = 1 };
	uint64_t h = 1;
	int fd = dev_open(), fd2;

	FAILS(reg_try(fd, (uintptr_t)&j, sizeof(j), NULL), EBADFD);
	FAILS(ioctl(fd, BIP_IOC_DEREG, &h), EBADFD);
	FAILS(copy(fd, 1, 0, 1, 1, 0, 1, BIP_COPY_READ), EBADFD);
	FAILS(ioctl(fd, BIP_IOC_STATS, &s), EBADFD);
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), EBADFD);
	FAILS(ioctl(fd, BIP_IOC_SEND, &snd), EBADFD);
	REQUIRE(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
			MAP_FAILED &&
		errno == EBADFD);
	FAILS(ioctl(fd, BIP_IOC_JOB, &j), EINVAL); /* secret 0 */
	j = join(fd, SECRET, JOB_KEY);
	REQUIRE(j.secret == 0); /* not echoed */
	REQUIRE(j.tag == bipfw_siphash((const uint64_t[2]){ SECRET, JOB_KEY },
				       what, sizeof(what)));
	j.secret = SECRET + 1;
	FAILS(ioctl(fd, BIP_IOC_JOB, &j), EBUSY);
	fd2 = dev_open();
	FAILS(ioctl(fd2, BIP_IOC_JOB, NULL), EFAULT);
	REQUIRE(join(fd2, SECRET, JOB_KEY).endpoint != j.endpoint);
	close(fd2);
	close(fd);
}

/* Registration, deregistration, and the limits on pinning. */
static void test_reg(void)
{
	uint8_t *buf = map_anon(16 * PAGE);
	uint64_t h, h2, stale;
	int fd = dev_open(), fd2 = dev_open();
	struct rlimit rl = { 64 << 10, 64 << 10 };

	join(fd, SECRET, JOB_KEY);
	join(fd2, SECRET, JOB_KEY);
	/* Unaligned, three pages touched. */
	h = reg(fd, buf + 100, 2 * PAGE);
	REQUIRE(counter(fd, BIP_CNT_PINNED_BYTES) == 3 * PAGE);
	h2 = reg(fd, buf + 5 * PAGE, 1);
	REQUIRE(h2 != h);
	REQUIRE(counter(fd, BIP_CNT_PINNED_BYTES) == 4 * PAGE);
	/* Handles are the file's own. */
	FAILS(ioctl(fd2, BIP_IOC_DEREG, &h), ENOENT);
	REQUIRE(ioctl(fd, BIP_IOC_DEREG, &h) == 0);
	FAILS(ioctl(fd, BIP_IOC_DEREG, &h), ENOENT); /* twice */
	stale = h;
	REQUIRE(counter(fd, BIP_CNT_PINNED_BYTES) == PAGE);
	/* A new region does not answer to the old handle. */
	h = reg(fd, buf, PAGE);
	REQUIRE(h != stale);
	FAILS(ioctl(fd, BIP_IOC_DEREG, &stale), ENOENT);
	FAILS(copy(fd, stale, 0, 0, h, 0, 1, BIP_COPY_READ), ENOENT);
	REQUIRE(ioctl(fd, BIP_IOC_DEREG, &h) == 0);
	REQUIRE(ioctl(fd, BIP_IOC_DEREG, &h2) == 0);
	REQUIRE(counter(fd, BIP_CNT_PINNED_BYTES) == 0);

	/* RLIMIT_MEMLOCK counts every file of the process. */
	REQUIRE(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
	FAILS(reg_try(fd, (uintptr_t)buf, 16 * PAGE + 1, NULL), ENOMEM);
	h = reg(fd, buf, 8 * PAGE);
	FAILS(reg_try(fd2, (uintptr_t)buf, 12 * PAGE, NULL), ENOMEM);
	h2 = reg(fd2, buf, 8 * PAGE);
	FAILS(reg_try(fd, (uintptr_t)buf, 1, NULL), ENOMEM);
	/* Closing gives them back. */
	close(fd2);
	h2 = reg(fd, buf, 8 * PAGE);
	REQUIRE(counter(fd, BIP_CNT_PINNED_BYTES) == 16 * PAGE);
	close(fd);
	fd = dev_open();
	join(fd, SECRET, JOB_KEY);
	h = reg(fd, buf, 16 * PAGE);
	close(fd);
	munmap(buf, 16 * PAGE);
}

/* max_pinned= bounds a file even for a process that may lock memory. */
static void test_max_pinned(void)
{
	uint8_t *buf = map_anon(32 * PAGE);
	int fd = dev_open();
	char old[32] = "";
	FILE *f = fopen(PARAMS "max_pinned", "r");

	REQUIRE(f && fgets(old, sizeof(old), f));
	fclose(f);
	join(fd, SECRET, JOB_KEY);
	set_param("max_pinned", "65536");
	FAILS(reg_try(fd, (uintptr_t)buf, 17 * PAGE, NULL), ENOMEM);
	reg(fd, buf, 16 * PAGE);
	FAILS(reg_try(fd, (uintptr_t)buf, 1, NULL), ENOMEM);
	set_param("max_pinned", old);
	reg(fd, buf, 16 * PAGE);
	close(fd);
}

#define CLEN (5 * PAGE + 123) /* each side's region */

/*
 * Copy between two processes of one job, both ways, at unaligned offsets
 * and lengths that cross pages; the peer's memory is checked at the end
 * against a shadow of what it should hold.
 */
static void test_copy(void)
{
	static const struct {
		uint64_t off, peer_off, len;
	} cases[] = {
		{ 0, 0, 1 },         { 1, PAGE - 1, 2 },
		{ PAGE - 1, 1, PAGE + 2 },
		{ 100, 5000, 3 * PAGE + 1 },
		{ 0, 0, CLEN },      { CLEN - 1, CLEN - 1, 1 },
		{ 4097, 3, 2 * PAGE - 5 },
		{ 7, PAGE, 0 },
	};
	int c2p[2], p2c[2], fd;
	uint64_t peer, peer_h, h, copies = 0, bytes = 0;
	uint8_t *mine, *shadow = malloc(CLEN), *theirs = malloc(CLEN);
	pid_t pid;

	REQUIRE(shadow && theirs && pipe(c2p) == 0 && pipe(p2c) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		uint8_t *buf = map_anon(8 * PAGE) + 7;
		char go;

		close(c2p[0]);
		close(p2c[1]);
		fd = dev_open();
		peer = join(fd, SECRET, JOB_KEY).endpoint;
		fill(buf, CLEN, 1);
		h = reg(fd, buf, CLEN);
		put(c2p[1], &peer, sizeof(peer));
		put(c2p[1], &h, sizeof(h));
		if (get(p2c[0], &go, 1))
			put(c2p[1], buf, CLEN);
		exit(0);
	}
	close(c2p[1]);
	close(p2c[0]);
	REQUIRE(get(c2p[0], &peer, sizeof(peer)) &&
		get(c2p[0], &peer_h, sizeof(peer_h)));
	fd = dev_open();
	join(fd, SECRET, JOB_KEY);
	mine = map_anon(8 * PAGE) + 3;
	h = reg(fd, mine, CLEN);
	fill(shadow, CLEN, 1);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t o = cases[i].off, po = cases[i].peer_off;
		uint64_t n = cases[i].len;

		memset(mine, 0xee, CLEN);
		REQUIRE(copy(fd, h, o, peer, peer_h, po, n, BIP_COPY_READ) ==
			0);
		REQUIRE(memcmp(mine + o, shadow + po, n) == 0);
		REQUIRE(o == 0 || mine[o - 1] == 0xee);
		REQUIRE(o + n == CLEN || mine[o + n] == 0xee);
		fill(mine, CLEN, 10 + i);
		REQUIRE(copy(fd, h, o, peer, peer_h, po, n, BIP_COPY_WRITE) ==
			0);
		memcpy(shadow + po, mine + o, n);
		copies += n ? 2 : 0;
		bytes += 2 * n;
	}
	/* Ranges outside either region, overflowing ones included. */
	FAILS(copy(fd, h, CLEN, peer, peer_h, 0, 1, BIP_COPY_READ), ERANGE);
	FAILS(copy(fd, h, 0, peer, peer_h, CLEN, 1, BIP_COPY_WRITE), ERANGE);
	FAILS(copy(fd, h, 0, peer, peer_h, 0, CLEN + 1, BIP_COPY_READ),
	      ERANGE);
	FAILS(copy(fd, h, ~0ull - 5, peer, peer_h, 0, 10, BIP_COPY_READ),
	      ERANGE);
	FAILS(copy(fd, h, 10, peer, peer_h, ~0ull - 5, 10, BIP_COPY_READ),
	      ERANGE);
	FAILS(copy(fd, h, 1, peer, peer_h, 1, ~0ull, BIP_COPY_WRITE), ERANGE);
	/* Unknown peers and handles. */
	FAILS(copy(fd, h, 0, peer ^ 1, peer_h, 0, 1, BIP_COPY_READ), ESRCH);
	FAILS(copy(fd, h, 0, peer, peer_h ^ (1ull << 40), 0, 1,
		   BIP_COPY_READ),
	      ENOENT);
	FAILS(copy(fd, peer_h, 0, peer, peer_h, 0, 1, BIP_COPY_READ), ENOENT);
	FAILS(copy(fd, h, 0, peer, h, 0, 1, BIP_COPY_READ), ENOENT);
	REQUIRE(counter(fd, BIP_CNT_COPIES) == copies &&
		counter(fd, BIP_CNT_COPY_BYTES) == bytes);
	put(p2c[1], "g", 1);
	REQUIRE(get(c2p[0], theirs, CLEN));
	REQUIRE(memcmp(theirs, shadow, CLEN) == 0);
	/* The peer's process is gone, and its file with it. */
	REQUIRE(waitpid(pid, NULL, 0) == pid);
	FAILS(copy(fd, h, 0, peer, peer_h, 0, 1, BIP_COPY_READ), ESRCH);
	print_stats("copy", fd);
	close(fd);
}

/* Copies racing with the end of the peer's process: each one whole or
 * refused, never a fault, and the pages stay until the last copy is done. */
static void test_race(void)
{
	const size_t len = 16 * PAGE;
	uint8_t *mine = map_anon(len);
	int fd = dev_open();
	uint64_t h, ok = 0;

	join(fd, SECRET, JOB_KEY);
	h = reg(fd, mine, len);
	for (int round = 0; round < 20; round++) {
		uint64_t ids[2];
		int c2p[2];
		pid_t pid;

		REQUIRE(pipe(c2p) == 0);
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			uint8_t *buf = map_anon(len);
			int cfd = dev_open();

			close(c2p[0]);
			fill(buf, len, 5);
			ids[0] = join(cfd, SECRET, JOB_KEY).endpoint;
			ids[1] = reg(cfd, buf, len);
			put(c2p[1], ids, sizeof(ids));
			usleep(round * 300);
			_exit(0);
		}
		close(c2p[1]);
		REQUIRE(get(c2p[0], ids, sizeof(ids)));
		close(c2p[0]);
		while (copy(fd, h, 0, ids[0], ids[1], 0, len, BIP_COPY_READ) ==
		       0) {
			REQUIRE(mine[len - 1] == pattern(5, len - 1));
			ok++;
		}
		REQUIRE(errno == ESRCH || errno == ENOENT);
		REQUIRE(waitpid(pid, NULL, 0) == pid);
	}
	REQUIRE(ok > 0 && counter(fd, BIP_CNT_COPIES) == ok);
	close(fd);
}

/* Another job's files are out of reach, whatever else matches. */
static void test_jobs(void)
{
	uint64_t ids[4], h;
	int c2p[2], p2c[2], fd;
	uint8_t *buf = map_anon(PAGE);
	pid_t pid;
	char go;

	REQUIRE(pipe(c2p) == 0 && pipe(p2c) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int other = dev_open(), other_key = dev_open();

		close(c2p[0]);
		close(p2c[1]);
		fill(buf, PAGE, 3);
		ids[0] = join(other, SECRET + 1, JOB_KEY).endpoint;
		ids[1] = reg(other, buf, PAGE);
		ids[2] = join(other_key, SECRET, JOB_KEY + 1).endpoint;
		ids[3] = reg(other_key, buf, PAGE);
		put(c2p[1], ids, sizeof(ids));
		if (get(p2c[0], &go, 1))
			put(c2p[1], buf, PAGE);
		exit(0);
	}
	close(c2p[1]);
	close(p2c[0]);
	REQUIRE(get(c2p[0], ids, sizeof(ids)));
	fd = dev_open();
	join(fd, SECRET, JOB_KEY);
	h = reg(fd, buf, PAGE);
	for (int i = 0; i < 4; i += 2) {
		FAILS(copy(fd, h, 0, ids[i], ids[i + 1], 0, 1, BIP_COPY_READ),
		      EPERM);
		FAILS(copy(fd, h, 0, ids[i], ids[i + 1], 0, PAGE,
			   BIP_COPY_WRITE),
		      EPERM);
	}
	put(p2c[1], "g", 1);
	REQUIRE(get(c2p[0], buf, PAGE));
	for (int i = 0; i < PAGE; i++)
		REQUIRE(buf[i] == pattern(3, i));
	REQUIRE(counter(fd, BIP_CNT_COPIES) == 0);
	waitpid(pid, NULL, 0);
	close(fd);
}

/* NIC memory: one area per file, the same pages in every mapping. */
static void test_mmap(void)
{
	const size_t len = 16 * PAGE;
	const int rw = PROT_READ | PROT_WRITE;
	struct bip_kabi_info info;
	int fd = dev_open(), fd2;
	uint8_t *p, *q, *r;
	pid_t pid;

	join(fd, SECRET, JOB_KEY);
	REQUIRE(ioctl(fd, BIP_IOC_INFO, &info) == 0);
	REQUIRE(mmap(NULL, len, rw, MAP_PRIVATE, fd, 0) == MAP_FAILED &&
		errno == EINVAL);
	REQUIRE(mmap(NULL, len, rw, MAP_SHARED, fd, PAGE) == MAP_FAILED &&
		errno == EINVAL); /* the first mapping starts at 0 */
	p = mmap(NULL, len, rw, MAP_SHARED, fd, 0);
	REQUIRE(p != MAP_FAILED);
	for (size_t i = 0; i < len; i++)
		REQUIRE(p[i] == 0);
	fill(p, len, 4);
	q = mmap(NULL, len, rw, MAP_SHARED, fd, 0);
	REQUIRE(q != MAP_FAILED && q != p);
	REQUIRE(memcmp(p, q, len) == 0);
	q[5] = 0x5a;
	REQUIRE(p[5] == 0x5a);
	r = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, 3 * PAGE);
	REQUIRE(r != MAP_FAILED && memcmp(r, p + 3 * PAGE, 2 * PAGE) == 0);
	/* A child writes through the mapping it inherited. */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		p[len - 1] = 0xab;
		_exit(0);
	}
	REQUIRE(waitpid(pid, NULL, 0) == pid && q[len - 1] == 0xab);
	/* Beyond the area, or beyond what the module allows. */
	REQUIRE(mmap(NULL, len + PAGE, rw, MAP_SHARED, fd, 0) == MAP_FAILED &&
		errno == EINVAL);
	REQUIRE(mmap(NULL, PAGE, rw, MAP_SHARED, fd, len) == MAP_FAILED &&
		errno == EINVAL);
	fd2 = dev_open();
	join(fd2, SECRET, JOB_KEY);
	REQUIRE(mmap(NULL, info.nicmem_max + PAGE, rw, MAP_SHARED, fd2, 0) ==
			MAP_FAILED &&
		errno == EINVAL);
	/* Another file has its own area; a mapping outlives the file. */
	r = mmap(NULL, info.nicmem_max, rw, MAP_SHARED, fd2, 0);
	REQUIRE(r != MAP_FAILED && r[0] == 0 && r[info.nicmem_max - 1] == 0);
	close(fd2);
	r[PAGE] = 1;
	REQUIRE(r[PAGE] == 1 && p[PAGE] == pattern(4, PAGE));
	REQUIRE(munmap(r, info.nicmem_max) == 0);
	/* It is locked memory: the first area uses up this limit. */
	{
		struct rlimit rl = { len, len };
		int fd3 = dev_open();

		join(fd3, SECRET, JOB_KEY);
		REQUIRE(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
		REQUIRE(mmap(NULL, PAGE, rw, MAP_SHARED, fd3, 0) ==
				MAP_FAILED &&
			errno == ENOMEM);
		close(fd3);
	}
	close(fd);
	REQUIRE(p[5] == 0x5a && q[len - 1] == 0xab);
}

/* Every ioctl given nonsense: an error each time, and nothing held. */
static void test_badinput(void)
{
	static const unsigned long cmds[] = {
		BIP_IOC_INFO, BIP_IOC_JOB,  BIP_IOC_REG,  BIP_IOC_DEREG,
		BIP_IOC_COPY, BIP_IOC_STATS, BIP_IOC_BIND, BIP_IOC_SEND,
	};
	static void *const ptrs[] = { NULL, KPTR, (void *)-1l, (void *)1 };
	uint8_t *buf = map_anon(4 * PAGE);
	struct bip_kabi_reg *ro;
	struct bip_kabi_bind b;
	struct bip_kabi_frame fr;
	struct bip_kabi_send s = { .frames = (uintptr_t)&fr, .count = 1 };
	struct bip_kabi_info info;
	uint64_t h, big;
	int fd = dev_open(), fd2 = dev_open();

	join(fd, SECRET, JOB_KEY);
	REQUIRE(ioctl(fd, BIP_IOC_INFO, &info) == 0);
	for (unsigned i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		for (unsigned k = 0; k < sizeof(ptrs) / sizeof(ptrs[0]); k++)
			FAILS(ioctl(fd, cmds[i], ptrs[k]), EFAULT);

	/* BIP_IOC_REG */
	FAILS(reg_try(fd, 0, PAGE, NULL), EFAULT);
	FAILS(reg_try(fd, (uintptr_t)KPTR, PAGE, NULL), EFAULT);
	FAILS(reg_try(fd, (uintptr_t)buf, 0, NULL), EINVAL);
	FAILS(reg_try(fd, 0x1000, ~0ull, NULL), EINVAL);        /* wraps */
	FAILS(reg_try(fd, (uintptr_t)buf, 1ull << 62, NULL), EFAULT);
	FAILS(reg_try(fd, 0x7ffffffff000ull, 2 * PAGE, NULL), EFAULT);
	FAILS(reg_try(fd, 1ull << 20, 1ull << 40, NULL), ENOMEM); /* limit */
	{
		struct bip_kabi_reg r = { .addr = (uintptr_t)buf, .len = 1,
					  .flags = 1 };

		FAILS(ioctl(fd, BIP_IOC_REG, &r), EINVAL);
		r.flags = 0;
		r.pad = 1;
		FAILS(ioctl(fd, BIP_IOC_REG, &r), EINVAL);
	}
	/* Pages we may not write, or that are not there. */
	REQUIRE(mprotect(buf + PAGE, PAGE, PROT_READ) == 0);
	FAILS(reg_try(fd, (uintptr_t)buf, 2 * PAGE, NULL), EFAULT);
	REQUIRE(mprotect(buf + PAGE, PAGE, PROT_NONE) == 0);
	FAILS(reg_try(fd, (uintptr_t)buf + PAGE, 1, NULL), EFAULT);
	REQUIRE(munmap(buf + 2 * PAGE, PAGE) == 0);
	FAILS(reg_try(fd, (uintptr_t)buf + 2 * PAGE, 1, NULL), EFAULT);
	/* The handle cannot be written back: nothing stays pinned. */
	ro = map_anon(PAGE);
	*ro = (struct bip_kabi_reg){ .addr = (uintptr_t)buf, .len = 10 };
	REQUIRE(mprotect(ro, PAGE, PROT_READ) == 0);
	FAILS(ioctl(fd, BIP_IOC_REG, ro), EFAULT);
	REQUIRE(counter(fd, BIP_CNT_PINNED_BYTES) == 0);

	/* BIP_IOC_DEREG */
	h = reg(fd, buf, 10);
	for (big = 0; big < 3; big++) {
		uint64_t bad[] = { 0, h ^ (1ull << 63), h + 1 };

		FAILS(ioctl(fd, BIP_IOC_DEREG, &bad[big]), ENOENT);
	}

	/* BIP_IOC_COPY */
	{
		uint64_t ep = join(fd2, SECRET, JOB_KEY).endpoint;
		uint64_t h2 = reg(fd2, buf + 3 * PAGE, PAGE);
		struct bip_kabi_copy c = { .handle = h, .peer = ep,
					   .peer_handle = h2, .len = 1,
					   .flags = BIP_COPY_READ, .pad = 1 };

		FAILS(ioctl(fd, BIP_IOC_COPY, &c), EINVAL);
		REQUIRE(copy(fd, h, 0, ep, h2, 0, 10, BIP_COPY_READ) == 0);
		FAILS(copy(fd, h, 0, ep, h2, 0, 1, 0), EINVAL);
		FAILS(copy(fd, h, 0, ep, h2, 0, 1, 3), EINVAL);
		FAILS(copy(fd, h2, 0, ep, h2, 0, 1, BIP_COPY_READ), ENOENT);
		FAILS(copy(fd, h, 0, 0, h2, 0, 1, BIP_COPY_READ), ESRCH);
		FAILS(copy(fd, h, 0, ep, h2, 10, PAGE, BIP_COPY_WRITE), ERANGE);
	}

	/* BIP_IOC_BIND, on interfaces in and out of ifaces= */
	memset(&b, 0, sizeof(b));
	memset(b.ifname, 'a', sizeof(b.ifname)); /* no NUL */
	b.ethertype = BIP_ETHERTYPE;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), EINVAL);
	strcpy(b.ifname, "lo");
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), EPERM);
	strcpy(b.ifname, "veth9"); /* allowed, absent */
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), ENODEV);
	strcpy(b.ifname, "veth0");
	b.ethertype = 0x0800;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), EINVAL);
	b.ethertype = BIP_ETHERTYPE;
	b.pad = 1;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), EINVAL);
	b.pad = 0;
	b.slots = 2; /* without a ring */
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), EINVAL);
	b.ring = h ^ 1;
	b.slot_size = 128;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), ENOENT);
	b.ring = h; /* 10 bytes: too small, and unaligned */
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), ERANGE);
	b.ring = reg(fd, buf + 8, 16 * 64);
	b.slot_size = 100;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), EINVAL);
	b.slot_size = 128;
	b.slots = 8;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), ERANGE); /* buf + 8: unaligned */
	b.ring_offset = 56;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), ERANGE); /* past the region */
	b.ring_offset = ~0ull - 100;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), ERANGE);
	b.slots = 0xffffffffu;
	b.slot_size = 0xffffffc0u;
	b.ring_offset = 56;
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), ERANGE);

	/* BIP_IOC_SEND: unbound, then bound to veth0, which is down */
	fr = (struct bip_kabi_frame){ .buf = (uintptr_t)buf, .len = 10,
				      .magic = BIP_OUTER_MAGIC,
				      .ethertype = BIP_ETHERTYPE };
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), ENOTCONN);
	memset(&b, 0, sizeof(b));
	strcpy(b.ifname, "veth0");
	b.ethertype = BIP_ETHERTYPE;
	REQUIRE(ioctl(fd, BIP_IOC_BIND, &b) == 0 && b.mtu == 1500);
	FAILS(ioctl(fd, BIP_IOC_BIND, &b), EBUSY);
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), ENETDOWN);
	s.count = 0;
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), EINVAL);
	s.count = info.send_max + 1;
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), EINVAL);
	s.count = 1;
	s.pad = 1;
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), EINVAL);
	s.pad = 0;
	fr.len = b.mtu - sizeof(struct bip_outer_hdr) + 1;
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), EMSGSIZE);
	fr.len = ~0u;
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), EMSGSIZE);
	fr.len = 10;
	fr.magic = 0x12345678;
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), EINVAL);
	fr.magic = BIP_OUTER_ALIVE;
	fr.ethertype = 0x0800;
	FAILS(ioctl(fd, BIP_IOC_SEND, &s), EINVAL);
	fr.ethertype = BIP_ETHERTYPE_LIVE;
	for (unsigned k = 0; k < sizeof(ptrs) / sizeof(ptrs[0]); k++) {
		fr.buf = (uintptr_t)ptrs[k];
		FAILS(ioctl(fd, BIP_IOC_SEND, &s), EFAULT);
		s.frames = (uintptr_t)ptrs[k];
		FAILS(ioctl(fd, BIP_IOC_SEND, &s), EFAULT);
		s.frames = (uintptr_t)&fr;
	}
	REQUIRE(counter(fd, BIP_CNT_FRAMES_SENT) == 0);
	close(fd2);
	close(fd);
}

/* --- the frame path, between two network namespaces -------------------- */

#define SLOTS 8
#define SLOT_SIZE 1024
#define SLOT_PAYLOAD                                                           \
	(SLOT_SIZE - sizeof(struct bip_kabi_slot) -                            \
	 sizeof(struct bip_outer_hdr))
#define RX_NODE 1
#define TX_MAX 16 /* frames per send here */

/* What a test frame carries: its number, then a pattern from it. */
static void frame_fill(uint8_t *p, uint32_t len, uint32_t seq)
{
	memcpy(p, &seq, sizeof(seq));
	for (uint32_t i = sizeof(seq); i < len; i++)
		p[i] = pattern(seq, i);
}

struct tx {
	int fd, foreign_fd;
	uint8_t dst[6];
	uint8_t buf[SLOT_SIZE];
	struct bip_kabi_frame fr[TX_MAX];
	unsigned n;
};

static void tx_add(struct tx *t, uint32_t len, uint32_t seq, uint32_t node,
		   uint32_t magic, uint16_t ethertype)
{
	uint8_t *p = malloc(len + 4);

	REQUIRE(p && t->n < TX_MAX);
	frame_fill(p, len, seq);
	t->fr[t->n] = (struct bip_kabi_frame){ .buf = (uintptr_t)p,
					       .len = len, .magic = magic,
					       .node = node,
					       .ethertype = ethertype };
	memcpy(t->fr[t->n].dst, t->dst, 6);
	t->n++;
}

static void tx_send(struct tx *t, int fd)
{
	struct bip_kabi_send s = { .frames = (uintptr_t)t->fr, .count = t->n };

	REQUIRE(ioctl(fd, BIP_IOC_SEND, &s) == (int)t->n);
	t->n = 0;
}

/* The sender, nobody in the first namespace: answers each phase. */
static void tx_run(int in, int out)
{
	struct tx t;
	struct bip_kabi_bind b = { .ifname = "veth0",
				   .ethertype = BIP_ETHERTYPE,
				   .node = BIP_KABI_NODE_ANY };
	char phase;

	drop_privileges();
	t.fd = dev_open();
	t.n = 0;
	join(t.fd, SECRET, JOB_KEY);
	REQUIRE(ioctl(t.fd, BIP_IOC_BIND, &b) == 0);
	put(out, b.mac, 6);
	t.foreign_fd = dev_open();
	join(t.foreign_fd, SECRET + 1, JOB_KEY);
	REQUIRE(ioctl(t.foreign_fd, BIP_IOC_BIND, &b) == 0);
	REQUIRE(get(in, t.dst, 6));
	while (get(in, &phase, 1)) {
		switch (phase) {
		case '0': /* one, while the receiver waits in poll */
			tx_add(&t, 4, 7, RX_NODE, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			tx_send(&t, t.fd);
			break;
		case '1': /* four frames in, one for another node, a probe,
			   * one of another job */
			tx_add(&t, 4, 0, RX_NODE, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			tx_add(&t, 5, 1, RX_NODE, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			tx_add(&t, 100, 2, RX_NODE + 1, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			tx_add(&t, 100, 2, RX_NODE, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			tx_add(&t, 8, 9, RX_NODE, BIP_OUTER_PROBE,
			       BIP_ETHERTYPE_LIVE);
			tx_add(&t, SLOT_PAYLOAD, 3, RX_NODE, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			tx_send(&t, t.fd);
			tx_add(&t, 100, 4, RX_NODE, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			tx_send(&t, t.foreign_fd);
			/* A batch goes up to its first bad frame. */
			tx_add(&t, 100, 5, RX_NODE + 2, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			tx_add(&t, 100, 6, RX_NODE, 0, BIP_ETHERTYPE);
			{
				struct bip_kabi_send s = {
					.frames = (uintptr_t)t.fr, .count = 2 };

				REQUIRE(ioctl(t.fd, BIP_IOC_SEND, &s) == 1);
				t.n = 0;
			}
			break;
		case '2': /* one too long for a slot, twelve into 8 slots */
			tx_add(&t, SLOT_PAYLOAD + 1, 99, RX_NODE,
			       BIP_OUTER_MAGIC, BIP_ETHERTYPE);
			for (uint32_t i = 0; i < 12; i++)
				tx_add(&t, 64, i, RX_NODE, BIP_OUTER_MAGIC,
				       BIP_ETHERTYPE);
			tx_send(&t, t.fd);
			break;
		case '3': /* six, under drop_every=3 */
			for (uint32_t i = 0; i < 6; i++)
				tx_add(&t, 64, i, RX_NODE, BIP_OUTER_MAGIC,
				       BIP_ETHERTYPE);
			tx_send(&t, t.fd);
			break;
		case '4': { /* the interface is gone */
			struct pollfd p = { .fd = t.fd, .events = POLLOUT };

			tx_add(&t, 64, 0, RX_NODE, BIP_OUTER_MAGIC,
			       BIP_ETHERTYPE);
			struct bip_kabi_send s = { .frames = (uintptr_t)t.fr,
						   .count = 1 };
			FAILS(ioctl(t.fd, BIP_IOC_SEND, &s), ENODEV);
			REQUIRE(poll(&p, 1, 1000) == 1 &&
				(p.revents & POLLHUP));
			REQUIRE(counter(t.fd, BIP_CNT_FRAMES_SENT) ==
				1 + 7 + 13 + 6);
			print_stats("frames sender", t.fd);
			break;
		}
		}
		put(out, "k", 1);
	}
	exit(0);
}

/* A receiving file and what its frames must be. */
struct rx {
	int fd;
	uint8_t *ring;
	unsigned next;
	uint64_t tag;
	uint8_t src[6];
	uint16_t ethertype;
	uint32_t magic, node;
	uint64_t received, dropped; /* at the end of the last phase */
};

/* A file of the job bound to veth1 with a ring of its own. */
static void rx_open(struct rx *r, uint16_t ethertype, uint32_t magic,
		    uint32_t node)
{
	struct bip_kabi_bind b = { .ifname = "veth1", .ethertype = ethertype,
				   .slot_size = SLOT_SIZE, .slots = SLOTS,
				   .node = node };
	uint8_t *mem = map_anon(3 * PAGE);

	*r = (struct rx){ .ethertype = ethertype, .magic = magic,
			  .node = node };
	r->fd = dev_open();
	r->tag = join(r->fd, SECRET, JOB_KEY).tag;
	/* 64 bytes into a page: slots straddle pages. */
	r->ring = mem + 64;
	memset(r->ring, 0xff, SLOTS * SLOT_SIZE); /* BIND frees the slots */
	b.ring = reg(r->fd, r->ring, SLOTS * SLOT_SIZE);
	REQUIRE(ioctl(r->fd, BIP_IOC_BIND, &b) == 0);
	FAILS(ioctl(r->fd, BIP_IOC_DEREG, &b.ring), EBUSY);
	memcpy(r->src, b.mac, 6); /* ours, until the sender's is known */
}

/* The next frame, within timeout_ms: checked, its number in *seq. */
static bool rx_frame(struct rx *r, int timeout_ms, uint32_t len,
		     uint32_t *seq)
{
	struct bip_kabi_slot *s =
		(struct bip_kabi_slot *)(r->ring + r->next * SLOT_SIZE);
	struct pollfd p = { .fd = r->fd, .events = POLLIN };
	const struct bip_outer_hdr *oh = (const void *)(s + 1);
	const uint8_t *data = (const uint8_t *)(oh + 1);

	if (__atomic_load_n(&s->status, __ATOMIC_ACQUIRE) != BIP_SLOT_FULL) {
		int n = poll(&p, 1, timeout_ms);

		REQUIRE(n >= 0);
		if (!n)
			return false;
		REQUIRE(p.revents == POLLIN);
		REQUIRE(__atomic_load_n(&s->status, __ATOMIC_ACQUIRE) ==
			BIP_SLOT_FULL);
	}
	REQUIRE(s->ethertype == r->ethertype &&
		memcmp(s->src, r->src, 6) == 0);
	REQUIRE(s->len == sizeof(*oh) + len);
	REQUIRE(oh->magic == r->magic && oh->node == r->node &&
		oh->tag == r->tag);
	memcpy(seq, data, sizeof(*seq));
	for (uint32_t i = sizeof(*seq); i < len; i++)
		REQUIRE(data[i] == pattern(*seq, i));
	__atomic_store_n(&s->status, BIP_SLOT_FREE, __ATOMIC_RELEASE);
	r->next = (r->next + 1) % SLOTS;
	return true;
}

/* Wait until n more frames were received or dropped, then check how many
 * of each. */
static void rx_settle(struct rx *r, uint64_t received, uint64_t dropped)
{
	uint64_t want = r->received + r->dropped + received + dropped;

	for (int i = 0; i < 300; i++) {
		if (counter(r->fd, BIP_CNT_FRAMES_RECEIVED) +
			    counter(r->fd, BIP_CNT_FRAMES_DROPPED) >=
		    want)
			break;
		usleep(10000);
	}
	REQUIRE(counter(r->fd, BIP_CNT_FRAMES_RECEIVED) ==
		r->received + received);
	REQUIRE(counter(r->fd, BIP_CNT_FRAMES_DROPPED) ==
		r->dropped + dropped);
	r->received += received;
	r->dropped += dropped;
}

/*
 * The receiver, nobody in a namespace of its own, with three files of the
 * job on veth1: packets for node 1 (r), for node 2 (other: the frames of
 * another process of the host), liveness probes (live).
 */
static void rx_run(int in, int out)
{
	static const uint32_t lens[] = { 4, 5, 100, SLOT_PAYLOAD };
	struct rx r, other, live;
	uint32_t seq;
	char phase;

	drop_privileges();
	rx_open(&r, BIP_ETHERTYPE, BIP_OUTER_MAGIC, RX_NODE);
	rx_open(&other, BIP_ETHERTYPE, BIP_OUTER_MAGIC, RX_NODE + 1);
	rx_open(&live, BIP_ETHERTYPE_LIVE, BIP_OUTER_PROBE, RX_NODE);
	put(out, r.src, 6);
	REQUIRE(get(in, r.src, 6));
	memcpy(other.src, r.src, 6);
	memcpy(live.src, r.src, 6);
	while (get(in, &phase, 1)) {
		switch (phase) {
		case '0': /* asked before the frame is sent: poll wakes */
			REQUIRE(rx_frame(&r, 5000, 4, &seq) && seq == 7);
			rx_settle(&r, 1, 0);
			break;
		case '1':
			for (uint32_t i = 0; i < 4; i++) {
				REQUIRE(rx_frame(&r, 3000, lens[i], &seq));
				REQUIRE(seq == i);
			}
			REQUIRE(!rx_frame(&r, 200, 0, &seq));
			rx_settle(&r, 4, 0);
			REQUIRE(counter(r.fd, BIP_CNT_FRAMES_FOREIGN) == 1);
			REQUIRE(rx_frame(&other, 0, 100, &seq) && seq == 2);
			REQUIRE(!rx_frame(&other, 0, 0, &seq));
			rx_settle(&other, 1, 0);
			REQUIRE(rx_frame(&live, 0, 8, &seq) && seq == 9);
			rx_settle(&live, 1, 0);
			/* Closed while bound, frames may be on their way. */
			close(other.fd);
			close(live.fd);
			break;
		case '2':
			rx_settle(&r, SLOTS, 1 + 12 - SLOTS);
			for (uint32_t i = 0; i < SLOTS; i++) {
				REQUIRE(rx_frame(&r, 0, 64, &seq));
				REQUIRE(seq == i);
			}
			REQUIRE(!rx_frame(&r, 0, 0, &seq));
			break;
		case '3':
			rx_settle(&r, 4, 2);
			for (uint32_t i = 0; i < 4; i++)
				REQUIRE(rx_frame(&r, 0, 64, &seq));
			break;
		case '4': {
			struct pollfd p = { .fd = r.fd, .events = POLLIN };

			REQUIRE(poll(&p, 1, 1000) == 1 &&
				p.revents == POLLHUP);
			print_stats("frames receiver", r.fd);
			break;
		}
		}
		put(out, "k", 1);
	}
	exit(0);
}

/* A child for one end: in (commands), out (answers); rx first moves to a
 * namespace of its own and waits for veth1 to join it. */
static pid_t spawn(void (*run)(int, int), bool netns, int *in, int *out)
{
	int down[2], up[2];
	pid_t pid;
	char c;

	REQUIRE(pipe(down) == 0 && pipe(up) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		if (netns) {
			REQUIRE(unshare(CLONE_NEWNET) == 0);
			put(up[1], "n", 1);
			REQUIRE(get(down[0], &c, 1));
			sh("ip link set veth1 up");
		}
		run(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	*in = up[0];
	*out = down[1];
	if (netns) {
		REQUIRE(get(*in, &c, 1));
		sh("ip link set veth1 netns %d", (int)pid);
		put(*out, "m", 1);
	}
	return pid;
}

/* Phase p at the sender, then at the receiver (rx_out -1: told already). */
static void phase(int tx_out, int tx_in, int rx_out, int rx_in, char p)
{
	char k;

	put(tx_out, &p, 1);
	REQUIRE(get(tx_in, &k, 1));
	if (rx_out >= 0)
		put(rx_out, &p, 1);
	REQUIRE(get(rx_in, &k, 1));
}

static void test_frames(void)
{
	int tx_in, tx_out, rx_in, rx_out, st;
	uint8_t mac[6];
	pid_t tx, rx;

	signal(SIGPIPE, SIG_IGN);
	sh("ip link set veth0 up");
	rx = spawn(rx_run, true, &rx_in, &rx_out);
	tx = spawn(tx_run, false, &tx_in, &tx_out);
	REQUIRE(get(rx_in, mac, 6));
	put(tx_out, mac, 6);
	REQUIRE(get(tx_in, mac, 6));
	put(rx_out, mac, 6);
	put(rx_out, "0", 1);
	usleep(300000);
	phase(tx_out, tx_in, -1, rx_in, '0');
	phase(tx_out, tx_in, rx_out, rx_in, '1');
	phase(tx_out, tx_in, rx_out, rx_in, '2');
	set_param("drop_every", "3");
	phase(tx_out, tx_in, rx_out, rx_in, '3');
	set_param("drop_every", "0");
	/* Both ends go (veth1 with veth0): the files are unbound, not the
	 * interfaces held. */
	sh("ip link del veth0");
	phase(tx_out, tx_in, rx_out, rx_in, '4');
	close(tx_out);
	close(rx_out);
	REQUIRE(waitpid(tx, &st, 0) == tx && WIFEXITED(st) &&
		WEXITSTATUS(st) == 0);
	REQUIRE(waitpid(rx, &st, 0) == rx && WIFEXITED(st) &&
		WEXITSTATUS(st) == 0);
}

/* --- the runner --------------------------------------------------------- */

static int failed;

static void run(const char *name, void (*fn)(void), bool unprivileged)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* A group of its own: what a failed test leaves is killed. */
		setpgid(0, 0);
		alarm(60);
		if (unprivileged)
			drop_privileges();
		fn();
		fflush(stdout);
		exit(failures != 0);
	}
	st = -1;
	if (pid > 0) {
		waitpid(pid, &st, 0);
		kill(-pid, SIGKILL);
	}
	if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		printf("BIPTEST PASS %s%s\n", name,
		       unprivileged ? " (unprivileged)" : "");
	} else {
		printf("BIPTEST FAIL %s (status %#x)\n", name, st);
		failed++;
	}
	fflush(stdout);
}

/* "kmodtest stats": the module's counters since it loaded, on one line,
 * for /init to compare around a run of libbip. */
static int module_stats(void)
{
	struct bip_kabi_stats s;
	int fd = dev_open();

	join(fd, 0x5354415453, 1);
	REQUIRE(ioctl(fd, BIP_IOC_STATS, &s) == 0);
	printf("module:");
	for (unsigned i = 0; i < BIP_CNT_N; i++)
		printf(" %s=%llu", bip_kabi_counter_name(i),
		       (unsigned long long)s.module[i]);
	printf("\n");
	close(fd);
	return failures != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "stats"))
		return module_stats();
	setvbuf(stdout, NULL, _IOLBF, 0);
	run("device", test_device, false);
	run("job", test_job, true);
	run("reg", test_reg, true);
	run("max_pinned", test_max_pinned, false);
	run("copy", test_copy, true);
	run("race", test_race, true);
	run("jobs", test_jobs, true);
	run("mmap", test_mmap, true);
	run("badinput", test_badinput, true);
	run("frames", test_frames, false);
	return failed != 0;
}
