/*
 * wire/shm.c - the shm wire: links between processes of one host made of
 * single-producer/single-consumer packet rings in shared memory, a futex
 * doorbell as the NIC's interrupt, and cross-memory attach or bip.ko's copy
 * (kcopy.c) as the DMA engine.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "bip_copy.h"
#include "bip_errno.h"
#include "bip_field.h"
#include "kdev.h"
#include "log.h"
#include "shm.h"

#define SEG_MAGIC 0x3170696273686d31ull /* "1mhsbip1" */
#define SEG_VERSION 4
#define CACHELINE 64
/* Records start on 128-byte boundaries: a header and the first payload
 * line form the pair of lines the hardware fetches together. */
#define RECORD_ALIGN (2 * CACHELINE)

#define PAGE 4096 /* the rings start on a page of their own */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older C libraries lack it */
#endif
#define RING_MAX (1ull << 30)
#define RING_AUTO_MAX (1u << 20)   /* auto: what 2 to 9 nodes of a host get */
#define RING_AUTO_TOTAL (8u << 20) /* auto: all inbound rings of a process */
#define RING_GROW (64u << 10) /* a ring's pages are reserved at most this
			       * many at once (first one, then doubling) */

/*
 * What the owner writes once, before any peer can know the segment's name.
 * A peer copies it, checks the copy and uses only the copy: any process
 * that maps the segment can rewrite the original at any time.
 */
struct seg_info {
	uint64_t magic;
	uint32_t version;
	uint32_t nnodes;
	uint64_t job_key;
	int32_t node;
	int32_t pid;
	uint64_t self_addr; /* where the owner mapped it: CMA probe target */
	uint64_t kendpoint; /* its /dev/bip file in the job (0: none) */
	uint32_t packet_size;
	uint32_t flags;    /* SEG_* */
	uint64_t ring_off, ring_size; /* ring_size: bytes of records */
};

/* The owner issues a global membarrier before it sleeps: senders that
 * registered for it need no fence of their own (see shm_commit). */
#define SEG_MEMBARRIER 1u

/* Segment header; the rings follow at ring_off(nnodes). */
struct seg_hdr {
	struct seg_info info;
	_Atomic uint32_t attached; /* peers that mapped it */
	_Atomic uint32_t closed;   /* owner closed its endpoint */
	/* The doorbell sits on a line of its own: senders read it often,
	 * the owner on every poll (for nsenders), and both rarely write. */
	_Alignas(CACHELINE) _Atomic uint32_t sleeping; /* enum sleep */
	_Atomic uint32_t doorbell;
	_Atomic uint32_t nsenders; /* bits set in senders so far */
	/* The CPU the owner last waited on, + 1 (0: not said yet): written
	 * when it changed, read by peers that wait (shm_host_cpus). */
	_Atomic uint32_t cpu;
	/* One bit per node that announced its first message: the owner
	 * polls only those rings, so the others are never touched. */
	_Alignas(CACHELINE) _Atomic uint64_t senders[];
};

/* How the owner sleeps, so how a sender wakes it: alone, on the futex
 * doorbell; beside other wires, in poll() on its bell socket. */
enum sleep { AWAKE, SLEEP_FUTEX, SLEEP_POLL };

/* Whether the CPU says it has PREFETCHW (x86-64 CPUs before it treat the
 * opcode as they like). */
static bool has_prefetchw(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_PRFCHW);
#else
	return false;
#endif
}

/* Where the rings start in a segment of a job of nnodes: past the header
 * and its senders bitmap, on a page boundary. Both ends compute it. */
static size_t ring_off(int nnodes)
{
	size_t words = ((size_t)nnodes + 63) / 64;

	return (sizeof(struct seg_hdr) + words * sizeof(uint64_t) + PAGE - 1) &
	       ~(size_t)(PAGE - 1);
}

/*
 * A ring of records, one after the other: a packet header and its payload
 * rounded up to RECORD_ALIGN, so a small message takes two lines and the
 * next one follows on the same page. Positions count bytes
 * and only grow; a record never wraps: one that would cross the end of the
 * ring goes to its start, behind a pad record that fills the rest.
 *
 * The producer writes the payload, the header, and last the header's link
 * word, the record's stamp: its position + 1 (a pad's also has STAMP_PAD),
 * mixed with the ring's key. The consumer polls the stamp at its tail, so
 * a small message crosses cores in the lines it occupies and no separate
 * head counter. The key, drawn from the job's key, keeps bytes left by
 * an earlier lap (a payload where a header now starts) from ever passing
 * for a stamp. The consumer's tail sits on its own line and is read by the
 * producer only when the ring looks full.
 */
struct ring {
	_Alignas(2 * CACHELINE) _Atomic uint64_t tail; /* consumer */
	_Alignas(2 * CACHELINE) uint8_t data[];
};

#define STAMP_PAD (1ull << 63)

static _Atomic uint64_t *stamp_at(uint8_t *rec)
{
	return (_Atomic uint64_t *)(rec + offsetof(struct bip_pkt_hdr, link));
}

/* A record of len payload bytes. */
static size_t record_bytes(size_t len)
{
	return (sizeof(struct bip_pkt_hdr) + len + RECORD_ALIGN - 1) &
	       ~(size_t)(RECORD_ALIGN - 1);
}

/* The smallest ring that always takes a full packet once empty: a record
 * that must go behind a pad starts at rec - RECORD_ALIGN or later. */
static uint64_t ring_min(size_t packet_size)
{
	uint64_t need = 2 * record_bytes(packet_size) - RECORD_ALIGN, r = 1;

	while (r < need)
		r <<= 1;
	return r;
}

/* Reserve and map the pages under [p, p + len) of a shared mapping, so
 * that a full /dev/shm is an error now, not a SIGBUS at the first write.
 * Returns 0 or an errno: EINVAL from kernels before 5.14, which lack it. */
static int populate(const void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1);

	return madvise((void *)lo, (uintptr_t)p + len - lo,
		       MADV_POPULATE_WRITE) ? errno : 0;
}

struct shm_peer {
	struct seg_hdr *seg; /* the peer's segment, mapped */
	size_t size;
	struct ring *out;    /* our ring inside it */
	uint64_t mask;       /* its size - 1, from the checked copy */
	uint64_t key;        /* its stamps' key */
	uint64_t head;       /* our next write position in out */
	uint64_t tail_seen;  /* last tail read from out */
	uint64_t ready;      /* bytes of out reserved from its start
			      * (UINT64_MAX: all of it) */
	bool cut;            /* out could not be reserved: the peer is lost */
	bool stalled;        /* out was full short of its end since it
			      * last grew: its next end grows */
	bool fence;          /* our commits fence: the peer's sleep does not */
	uint32_t last_used;  /* header and payload bytes of our last record */
	pid_t pid;
	int pidfd;           /* the peer's process, or -1: judged by its pid */
	bool cma;
	uint64_t kendpoint;  /* its /dev/bip file, 0: no kernel copy */
	bool mapped;         /* seg is ours to unmap (not a test's memory) */
	bool polled;         /* its ring in our segment is in srcs */
};

/* The class's knobs. */
struct shm_knobs {
	size_t ring_size;    /* bytes per inbound ring; 0: by node count */
	size_t cma_min;      /* long messages of at least this size go by
			      * cross-memory attach (SIZE_MAX: never) */
	size_t pull_min;     /* ready-mode ones, read by the receiver */
	size_t kcopy_min;    /* announced ones by bip.ko's copy (SIZE_MAX:
			      * never, BIP_KNOB_AUTO: calibrate) */
	unsigned mem_max;    /* regions of shared memory held at once */
	unsigned alias;      /* enum alias: are copies 1-63 bytes apart
			      * slow here? */
	size_t copy_split;   /* copies up to this size go split
			      * (bip_copy_pieces up to bip_copy_split_max;
			      * SIZE_MAX: never) */
};

enum alias { ALIAS_AUTO, ALIAS_SLOW, ALIAS_FAST };
static const char *const alias_choices[] = { "auto", "slow", "fast", NULL };

static const struct bip_knob_def knobs[] = {
	{ { "BIP_SHM_RING_SIZE", "size (power of 2)|0", "0",
	    "Bytes of each inbound shared-memory ring (one per peer on the "
	    "host; a message takes its size + 64 bytes, rounded up to "
	    "128). At least two packets. 0: 1 MiB while the host has "
	    "at most 9 nodes, then 8 MiB shared by the peers, so that a "
	    "process's rings stay bounded as nodes grow." },
	  BIP_KNOB_SIZE, 0, RING_MAX, NULL,
	  BIP_KNOB_SIZE_T(struct shm_knobs, ring_size) },
	{ { "BIP_SHM_CMA_MIN", "size|never", "never",
	    "Announced long messages (raw BIP's bip_lsend) of at least this "
	    "size are written by the sender into the receiver's buffer in "
	    "one copy (cross-memory attach) instead of the two-copy rings, "
	    "which measured faster for one message at a time here." },
	  BIP_KNOB_SIZE, 0, SIZE_MAX, NULL,
	  BIP_KNOB_SIZE_T(struct shm_knobs, cma_min) },
	{ { "BIP_SHM_PULL_MIN", "size|never", "8k",
	    "Data of at least this size may be read by its receiver from "
	    "the sender's memory in one copy (cross-memory attach, "
	    "bip_read): ready-mode long messages, and MPI's three-way "
	    "messages, sent while another long message to the same peer is "
	    "in flight. A message alone goes by the rings: there both "
	    "processes copy at once, which finished sooner here; several at "
	    "once move more per second when each process copies its own "
	    "once (16 KiB windowed: 1.3x with 8k against 32k; 4 KiB the "
	    "same)." },
	  BIP_KNOB_SIZE, 0, SIZE_MAX, NULL,
	  BIP_KNOB_SIZE_T(struct shm_knobs, pull_min) },
	{ { "BIP_SHM_KCOPY_MIN", "size|never|auto", "auto",
	    "With the kernel module bip.ko loaded, announced long messages "
	    "of at least this size are written by the sender into the "
	    "receive buffer, which the receiver registered, in one copy by "
	    "the kernel instead of two through the rings. auto: measured "
	    "when the endpoint opens, the smallest size at which the "
	    "kernel's copy costs no more CPU time than the rings' two "
	    "(bip_info -p shows it)." },
	  BIP_KNOB_SIZE_AUTO, 0, SIZE_MAX, NULL,
	  BIP_KNOB_SIZE_T(struct shm_knobs, kcopy_min) },
	{ { "BIP_SHM_MEM_MAX", "count", "256",
	    "Most regions of memory shared with the host's other processes "
	    "(bip_mem_alloc: MPI_Alloc_mem, MPI_Win_allocate) a process "
	    "holds at once; each keeps a file descriptor open. Beyond it "
	    "bip_mem_alloc says BIP_EAGAIN, and MPI gives plain memory "
	    "instead. 0: none." },
	  BIP_KNOB_COUNT, 0, 65536, NULL,
	  BIP_KNOB_UINT(struct shm_knobs, mem_max) },
	{ { "BIP_SHM_ALIAS", "auto|slow|fast", "auto",
	    "Whether copies of 2 KiB or more whose destination lies 1 to 63 "
	    "bytes past the source modulo 4 KiB are slow on this machine "
	    "(rep movsb on AMD Zen: 4-20 x): BIP then copies them by a "
	    "loop of its own, the kernel's through a page-aligned bounce "
	    "buffer, and the MPI netmod asks for such data instead of "
	    "reading it. auto: measured when a process with peers on its "
	    "host opens its endpoint, about 0.1 ms (bip_info prints the "
	    "verdict)." },
	  BIP_KNOB_CHOICE, 0, 0, alias_choices,
	  BIP_KNOB_UINT(struct shm_knobs, alias) },
	{ { "BIP_SHM_COPY_SPLIT", "size|never", "never",
	    "Copies of more than 2 KiB and at most this size (BIP's, and the "
	    "MPI netmod's: the rings' data, eager pieces, collectives in "
	    "shared memory) go in pieces of 2 KiB, each short enough for "
	    "the C library's memcpy to take its vector loop rather than "
	    "rep movsb. On one AMD Zen 5 machine 8k made MPI messages of "
	    "4-16 KiB 1.3-1.6 x faster (4 KiB windows 2 x): there rep "
	    "movsb into ring lines fetched ahead (PREFETCHW) runs at half "
	    "speed, and ring records of up to 8 KiB are now written by "
	    "plain stores anyway. Try it where 4 KiB messages are slow "
	    "against 2 KiB ones (more than 1.6 x their time)." },
	  BIP_KNOB_SIZE, 0, SIZE_MAX, NULL,
	  BIP_KNOB_SIZE_T(struct shm_knobs, copy_split) },
};

static const struct bip_knob_table shm_knobs = BIP_KNOB_TABLE(knobs);

struct bipfw_shm {
	struct bipfw_wire_params p;
	struct shm_knobs k;
	struct seg_hdr *self;
	size_t size;
	uint64_t ring_size;  /* bytes of records in each inbound ring */
	uint64_t ring_key;   /* their stamps' key */
	struct bip_pkt_hdr rx_hdr; /* copy of the header peek shows */
	size_t rx_len;       /* bytes of the record peek shows */
	struct shm_peer *peers;
	struct ring **in; /* our inbound rings, by source (NULL for self) */
	uint64_t *tails;  /* consumer positions of our inbound rings */
	uint32_t *lent;   /* records behind them lent to the host (keep) */
	int *srcs;        /* the peers attached: the rings worth a look */
	int nsrcs;
	int rx_next;      /* index in srcs to look at first (round-robin) */
	int rx_cur;       /* index in srcs of the packet being processed */
	uint32_t nsenders_seen; /* the header's nsenders at our last scan */
	size_t ring_off;  /* where the rings start in every segment */
	int fd;           /* our segment, to reserve inbound rings in */
	unsigned nregions; /* of shared memory, allocated (shm_mem.c) */
	bool lazy;        /* rings are reserved as they fill (the kernel can
			   * populate a mapping without SIGBUS) */
	bool membarrier;  /* registered for global membarriers */
	bool fence_any;   /* a peer attached needs our fence (pp->fence) */
	bool prefetchw;   /* the CPU fetches lines for writing on request */
	uint32_t burst;   /* records sent since we last took one */
	const uint64_t *watch; /* shared word a sleep waits on too... */
	uint64_t watch_value;  /* ...until it holds at least this */
	bool linked;      /* our name is still in /dev/shm */
	int bellfd;       /* our bell socket (also rings the others), or -1 */
	bool bell_bound;  /* it has our bell's name: poll() can sleep on it */
	uint8_t *bounce;  /* cross-memory copies at a slow distance (cma_copy) */
	bipfw_shm_sleep_hook_t sleep_hook; /* tests: between sleep's steps */
	void *sleep_arg;
};

/* The ring for packets from src in the segment of owner, whose ring size
 * is known privately (never read back from the segment). */
static struct ring *ring_at(void *seg, size_t off, int owner, size_t stride,
			    int src)
{
	int idx = src < owner ? src : src - 1;

	return (struct ring *)((uint8_t *)seg + off +
			       (size_t)idx * stride);
}

/* A ring's whole span in its segment: the tail's line and the records. */
static size_t ring_bytes(uint64_t ring_size)
{
	return sizeof(struct ring) + (size_t)ring_size;
}

/* From one ring to the next: whole pages, so that a ring's first page
 * holds its tail's line and its first records. */
static size_t ring_stride(uint64_t ring_size)
{
	return (ring_bytes(ring_size) + PAGE - 1) & ~(size_t)(PAGE - 1);
}

/* The stamps' key of the rings in node's segment: both ends derive it
 * from the job's key, neither reads it from shared memory. It guards
 * against chance, not against the job's own processes, which can write
 * the ring anyway. */
static uint64_t ring_key(const struct bipfw_shm *shm, int node)
{
	const uint64_t key[2] = { shm->p.job_key, 0x72696e676b6579ull };
	uint8_t msg[8] = { 'r', 'i', 'n', 'g' };
	uint32_t n = (uint32_t)node;

	memcpy(msg + 4, &n, sizeof(n));
	/* Bit 1 set: a position + 1 has it clear (positions are multiples
	 * of RECORD_ALIGN), so no stamp is 0 and a ring of zeros shows no
	 * record. */
	return bipfw_siphash(key, msg, sizeof(msg)) | 2;
}

/* Bytes per inbound ring with local_nodes on the host: the knob's, or
 * RING_AUTO_TOTAL shared by the peers within [ring_min, RING_AUTO_MAX].
 * 0 if the knob is unusable. */
static uint64_t ring_size_for(const struct shm_knobs *k, size_t packet_size,
			      int local_nodes)
{
	uint64_t min = ring_min(packet_size), r = k->ring_size;
	uint64_t peers = local_nodes > 1 ? (uint64_t)local_nodes - 1 : 1;

	if (r) {
		if ((r & (r - 1)) || r < min) {
			bip_err("invalid knob BIP_SHM_RING_SIZE=%" PRIu64
				": expected a power of two of at least %" PRIu64
				" (two packets of BIP_PACKET_SIZE), or 0",
				r, min);
			return 0;
		}
		return r;
	}
	for (r = RING_AUTO_MAX; r > min && r * peers > RING_AUTO_TOTAL;)
		r >>= 1;
	return r < min ? min : r;
}

void bipfw_shm_name(char *buf, size_t len, uint64_t secret, uint64_t job_key,
		    int node)
{
	const uint64_t key[2] = { secret, job_key };
	uint8_t msg[8] = { 's', 'h', 'm', 0 };
	uint32_t n = (uint32_t)node;

	memcpy(msg + 4, &n, sizeof(n));
	snprintf(buf, len, "bip-%u-%016" PRIx64, (unsigned)geteuid(),
		 bipfw_siphash(key, msg, sizeof(msg)));
}

/* A node's bell: an abstract unix datagram socket (nothing left behind in
 * the file system), named from the job's secret so that other users cannot
 * guess it. Its datagrams carry nothing: they only make poll() return. */
static socklen_t bell_addr(const struct bipfw_shm *shm, int node,
			   struct sockaddr_un *a)
{
	const uint64_t key[2] = { shm->p.secret, shm->p.job_key };
	uint8_t msg[8] = { 'b', 'e', 'l' };
	uint32_t n = (uint32_t)node;
	int len;

	memcpy(msg + 4, &n, sizeof(n));
	*a = (struct sockaddr_un){ .sun_family = AF_UNIX };
	len = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
		       "bip-bell-%u-%016" PRIx64, (unsigned)geteuid(),
		       bipfw_siphash(key, msg, sizeof(msg)));
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)len);
}

static void bell_open(struct bipfw_shm *shm)
{
	struct sockaddr_un a;
	socklen_t len = bell_addr(shm, shm->p.node, &a);

	shm->bellfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			     0);
	if (shm->bellfd < 0)
		return;
	/* Unbound, it still rings others; we then sleep by polling. */
	shm->bell_bound = bind(shm->bellfd, (struct sockaddr *)&a, len) == 0;
	if (!shm->bell_bound)
		bip_dbg("shm wire: no bell socket (%s): waiting beside other "
			"wires polls",
			strerror(errno));
}

static void bell_ring(struct bipfw_shm *shm, int peer)
{
	struct sockaddr_un a;
	socklen_t len = bell_addr(shm, peer, &a);
	char c = 0;

	/* A full bell is ringing already. */
	if (shm->bellfd >= 0)
		(void)sendto(shm->bellfd, &c, 1, MSG_DONTWAIT,
			     (struct sockaddr *)&a, len);
}

static void bell_drain(struct bipfw_shm *shm)
{
	char c[64];

	while (recv(shm->bellfd, c, sizeof(c), MSG_DONTWAIT) > 0)
		;
}

static int shm_cleanup(uint64_t secret, uint64_t job_key, int node)
{
	char path[sizeof("/dev/shm/") + BIPFW_SHM_NAME_MAX] = "/dev/shm/";
	const size_t dir = strlen(path);
	struct stat st;

	bipfw_shm_name(path + dir, sizeof(path) - dir, secret, job_key, node);
	if (lstat(path, &st) < 0 || st.st_uid != geteuid())
		return 0;
	if (unlink(path) == 0) {
		bip_info("removed leftover %s", path);
		return 1;
	}
	if (errno == ENOENT)
		return 0;
	bip_warn("cannot remove %s: %s", path, strerror(errno));
	return -BIP_ESYS;
}

/*
 * A segment's name goes when the last of its host's other nodes attached.
 * A job killed while starting (an MPI_Abort before every rank attached,
 * say) leaves names nothing else removes: no launcher but bip_run knows
 * the job's secret. So each open removes this user's segments whose owner
 * is gone: a valid header, a pid that no longer exists, and untouched for
 * STALE_S seconds (a pid we cannot see from another pid namespace would
 * look gone; a job past its start has no name left to remove).
 */
#define STALE_S 60

static void reap_stale(void)
{
	char prefix[32];
	DIR *dir = opendir("/dev/shm");
	struct dirent *e;
	size_t plen;

	if (!dir)
		return;
	snprintf(prefix, sizeof(prefix), "bip-%u-", (unsigned)geteuid());
	plen = strlen(prefix);
	while ((e = readdir(dir))) {
		struct seg_info h;
		struct stat st;
		int fd;

		if (strncmp(e->d_name, prefix, plen))
			continue;
		fd = openat(dirfd(dir), e->d_name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid() && st.st_mtime + STALE_S < time(NULL) &&
		    pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		    h.magic == SEG_MAGIC && h.version == SEG_VERSION &&
		    h.pid > 0 && kill(h.pid, 0) < 0 && errno == ESRCH &&
		    unlinkat(dirfd(dir), e->d_name, 0) == 0)
			bip_info("removed /dev/shm/%s, left by pid %d (gone)",
				 e->d_name, (int)h.pid);
		close(fd);
	}
	closedir(dir);
}

/* "/" and the segment name of a node of our job. */
static void seg_path(const struct bipfw_shm *shm, int node, char *buf,
		     size_t len)
{
	buf[0] = '/';
	bipfw_shm_name(buf + 1, len - 1, shm->p.secret, shm->p.job_key, node);
}

static int futex(_Atomic uint32_t *addr, int op, uint32_t val,
		 const struct timespec *ts)
{
	return (int)syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

/* /proc/PID/stat, read into buf: its fields from the third (the state) on,
 * found behind the command name, which may hold spaces and parentheses;
 * or NULL with errno set. */
#define PROC_STAT_MAX 1024
static const char *proc_stat(pid_t pid, char *buf)
{
	char path[32];
	const char *p;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, PROC_STAT_MAX - 1);
	err = n < 0 ? errno : EIO;
	close(fd);
	p = n > 0 ? (buf[n] = '\0', strrchr(buf, ')')) : NULL;
	if (!p || p[1] != ' ' || !p[2]) {
		errno = err;
		return NULL;
	}
	return p + 2;
}

static bool pid_alive(pid_t pid)
{
	char buf[PROC_STAT_MAX];
	const char *state;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	/* A zombie still answers kill(): look at its state. */
	state = proc_stat(pid, buf);
	if (!state)
		return errno != ENOENT;
	return *state != 'Z' && *state != 'X';
}

/* Our name exists already. Another user's file is never touched (and
 * never used): the job stops with who holds it. Ours, of a dead process
 * (a crashed run that was given the same secret), is removed: 0 to retry. */
static int name_taken(const char *name)
{
	int fd = shm_open(name, O_RDONLY, 0);
	struct seg_info h = { 0 };
	struct stat st;
	int rc = -BIP_EACCES;

	if (fd < 0) {
		bip_err("/dev/shm%s exists and cannot be opened (%s): another "
			"user holds this job's segment name; refusing it",
			name, strerror(errno));
		return -BIP_EACCES;
	}
	if (fstat(fd, &st) == 0 && st.st_uid != geteuid())
		bip_err("/dev/shm%s is held by uid %u, not by this job's user "
			"%u: another user created this job's segment name "
			"first; refusing it",
			name, (unsigned)st.st_uid, (unsigned)geteuid());
	else if (pread(fd, &h, sizeof(h), 0) == sizeof(h) && h.pid > 0 &&
		 pid_alive(h.pid))
		bip_err("/dev/shm%s is in use by process %d: was this job "
			"started twice with one secret?",
			name, (int)h.pid);
	else {
		bip_warn("removing stale segment /dev/shm%s", name);
		rc = shm_unlink(name) == 0 ? 0 : -BIP_EACCES;
	}
	close(fd);
	return rc;
}

static int create_segment(struct bipfw_shm *shm, const char *name)
{
	int fd, rc;

	while ((fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600)) < 0 &&
	       errno == EEXIST)
		if ((rc = name_taken(name)))
			return rc;
	if (fd < 0) {
		bip_err("cannot create /dev/shm%s: %s", name, strerror(errno));
		return -BIP_ESYS;
	}
	/* The segment has a ring for every node of the job but stays sparse:
	 * only the header is reserved now, and a ring's pages as messages
	 * first reach them (ring_grow; all at connect on kernels that cannot
	 * populate), so rings of nodes on other hosts, or of peers never
	 * sent to, cost nothing. A full /dev/shm is then an error, not a
	 * SIGBUS at the first write into a sparse page. */
	errno = ftruncate(fd, (off_t)shm->size) ? errno
						: posix_fallocate(fd, 0,
								  (off_t)shm->ring_off);
	if (errno) {
		bip_err("cannot size /dev/shm%s to %zu bytes: %s", name,
			shm->size, strerror(errno));
		close(fd);
		shm_unlink(name);
		return -BIP_ESYS;
	}
	shm->self = mmap(NULL, shm->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
	shm->fd = fd;
	if (shm->self == MAP_FAILED) {
		shm->self = NULL;
		bip_err("cannot map /dev/shm%s: %s", name, strerror(errno));
		shm_unlink(name);
		return -BIP_ESYS;
	}
	return 0;
}

/* bip.ko's copy for long messages, if the module is open and the knob lets
 * it: the threshold, measured if auto (said in the module's line of
 * bip_info -p). Returns our file's id for the segment header, or 0. */
static uint64_t kcopy_open(struct bipfw_shm *shm)
{
	struct bipfw_kdev *k = shm->p.kdev;
	char why[160];

	if (!k || k->fd < 0 || shm->p.local_nodes <= 1 ||
	    shm->k.kcopy_min == SIZE_MAX) {
		shm->k.kcopy_min = SIZE_MAX;
		return 0;
	}
	if (shm->k.kcopy_min != BIP_KNOB_AUTO) {
		bipfw_kdev_why_add(k, "; shm kernel copy from %zu bytes "
				   "(BIP_SHM_KCOPY_MIN)", shm->k.kcopy_min);
		return k->endpoint;
	}
	shm->k.kcopy_min = bipfw_kcopy_calibrate(k, why, sizeof(why));
	if (shm->k.kcopy_min == SIZE_MAX)
		bipfw_kdev_why_add(k, "; shm kernel copy never (kernel/rings: "
				   "%s)", why);
	else
		bipfw_kdev_why_add(k, "; shm kernel copy from %zu KiB "
				   "(kernel/rings: %s)",
				   shm->k.kcopy_min >> 10, why);
	return shm->k.kcopy_min == SIZE_MAX ? 0 : k->endpoint;
}

/* Which copies rep movsb slows here (bip_copy.h), and which go split:
 * only processes with peers on their host copy between processes. */
static void copy_alias(const struct shm_knobs *k, int local_nodes)
{
	char why[160];

	if (k->alias == ALIAS_SLOW)
		bip_copy_alias = BIP_COPY_ALIAS_USER | BIP_COPY_ALIAS_KERNEL;
	else if (k->alias == ALIAS_FAST)
		bip_copy_alias = 0;
	else if (local_nodes > 1) {
		(void)bip_copy_calibrate(why, sizeof(why));
		bip_dbg("copies %s", why);
	}
	bip_copy_split_max = k->copy_split == SIZE_MAX ? 0 : k->copy_split;
}

/* Cross-memory attach between the job's processes, either way: siblings
 * may read each other's memory only if each allows it (Yama). */
static bool cma_wanted(const struct bipfw_shm *shm)
{
	return shm->k.cma_min != SIZE_MAX || shm->k.pull_min != SIZE_MAX;
}

int bipfw_shm_open(const struct bipfw_wire_params *params,
		   struct bipfw_shm **shm_p)
{
	struct bipfw_shm *shm;
	struct seg_info *h;
	size_t stride; /* from one ring to the next */
	char name[BIPFW_SHM_NAME_MAX];
	int rc, n = params->nnodes;

	if (n < 1 || params->node < 0 || params->node >= n || !params->secret ||
	    params->packet_size < BIP_SMALL_MAX ||
	    params->packet_size > UINT32_MAX / 2)
		return -BIP_EINVAL;
	reap_stale();
	shm = calloc(1, sizeof(*shm));
	if (!shm)
		return -BIP_ENOMEM;
	shm->bellfd = -1;
	shm->fd = -1;
	shm->p = *params;
	rc = bip_knob_table_load(&shm_knobs, &shm->k);
	if (rc)
		goto fail;
	copy_alias(&shm->k, params->local_nodes);
	shm->ring_size = ring_size_for(&shm->k, params->packet_size,
				       params->local_nodes);
	if (!shm->ring_size) {
		rc = -BIP_EINVAL;
		goto fail;
	}
	shm->ring_key = ring_key(shm, params->node);
	stride = ring_stride(shm->ring_size);
	shm->ring_off = ring_off(n);
	shm->size = shm->ring_off + stride * (size_t)(n - 1);
	shm->peers = calloc((size_t)n, sizeof(*shm->peers));
	shm->tails = calloc((size_t)n, sizeof(*shm->tails));
	shm->lent = calloc((size_t)n, sizeof(*shm->lent));
	shm->in = calloc((size_t)n, sizeof(*shm->in));
	shm->srcs = calloc((size_t)n, sizeof(*shm->srcs));
	if (!shm->peers || !shm->tails || !shm->lent || !shm->in ||
	    !shm->srcs) {
		rc = -BIP_ENOMEM;
		goto fail;
	}
	for (int i = 0; i < n; i++)
		shm->peers[i].pidfd = -1;
	bell_open(shm);

	seg_path(shm, params->node, name, sizeof(name));
	rc = create_segment(shm, name);
	if (rc)
		goto fail;
	shm->linked = true;
	shm->lazy = populate(shm->self, shm->ring_off) == 0;
	/* A global membarrier before each sleep spares the senders their
	 * fence (shm_commit), but it interrupts every CPU (24 us a sleep
	 * here). Nodes that share cores sleep often: they fence instead (NAS
	 * patterns on 16 nodes on 2 cores: 7.0 -> 5.9 s). */
	shm->membarrier = !params->shared_cores &&
			  syscall(SYS_membarrier,
				  MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED,
				  0, 0) == 0;
	shm->prefetchw = has_prefetchw();
	h = &shm->self->info;
	h->magic = SEG_MAGIC;
	h->version = SEG_VERSION;
	h->nnodes = (uint32_t)n;
	h->job_key = params->job_key;
	h->node = params->node;
	h->pid = getpid();
	h->self_addr = (uint64_t)(uintptr_t)h;
	h->kendpoint = kcopy_open(shm);
	h->packet_size = (uint32_t)params->packet_size;
	h->flags = shm->membarrier ? SEG_MEMBARRIER : 0;
	h->ring_off = shm->ring_off;
	h->ring_size = shm->ring_size;
	for (int src = 0; src < n; src++)
		if (src != params->node)
			shm->in[src] = ring_at(shm->self, shm->ring_off,
					       params->node, stride, src);
	/* Alone on this host: no one will attach. */
	if (params->local_nodes <= 1) {
		shm_unlink(name);
		shm->linked = false;
	}
	/* Siblings may only attach to us if we say so (Yama ptrace scope). */
	if (cma_wanted(shm))
		(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	*shm_p = shm;
	return 0;
fail:
	bipfw_shm_close(shm);
	return rc;
}

int bipfw_shm_card(const struct bipfw_shm *shm, char *buf, size_t len)
{
	int n = snprintf(buf, len, "shm,%d,%d,%016" PRIx64, (int)getpid(),
			 shm->p.node, shm->p.job_key);

	return n < 0 || (size_t)n >= len ? -BIP_ETOOLONG : 0;
}

/* Can we read the peer's memory? Read its segment magic where it mapped it. */
static bool cma_works(struct shm_peer *pp, uint64_t addr)
{
	uint64_t magic = 0;
	struct iovec local = { &magic, sizeof(magic) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(magic) };

	if (process_vm_readv(pp->pid, &local, 1, &remote, 1, 0) !=
	    sizeof(magic)) {
		bip_info("cross-memory attach to pid %d refused (%s); long "
			 "messages use the packet rings",
			 (int)pp->pid, strerror(errno));
		return false;
	}
	return magic == SEG_MAGIC;
}

/* Map a peer's segment; its file stays open in *fd_p. */
static int map_peer(const char *name, int peer, void **seg_p,
		    size_t *size_p, int *fd_p)
{
	struct stat st;
	int fd;

	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0) {
		bip_err("cannot attach node %d's segment /dev/shm%s: %s", peer,
			name, strerror(errno));
		return errno == EACCES ? -BIP_EACCES : -BIP_ESYS;
	}
	/* Only a file of our own, that nobody else may open, is a segment of
	 * this job; the checks run on the file we hold, not on the name. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077)) {
		bip_err("node %d's segment /dev/shm%s belongs to uid %u with "
			"mode %03o, not to this job's user %u with mode 600: "
			"refusing it",
			peer, name, (unsigned)st.st_uid,
			(unsigned)st.st_mode & 0777, (unsigned)geteuid());
		close(fd);
		return -BIP_EACCES;
	}
	if ((size_t)st.st_size < sizeof(struct seg_hdr)) {
		bip_err("node %d's segment /dev/shm%s is malformed", peer,
			name);
		close(fd);
		return -BIP_ECARD;
	}
	*size_p = (size_t)st.st_size;
	*seg_p = mmap(NULL, *size_p, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*seg_p == MAP_FAILED) {
		close(fd);
		*seg_p = NULL;
		bip_err("cannot map node %d's segment: %s", peer,
			strerror(errno));
		return -BIP_ESYS;
	}
	*fd_p = fd;
	return 0;
}

/* Reserve the whole ring in the segment mapped at seg from file fd. */
static int reserve_ring(int fd, const void *seg, const struct ring *ring,
			size_t ring_size, int peer)
{
	errno = posix_fallocate(fd, (off_t)((const uint8_t *)ring -
					    (const uint8_t *)seg),
				(off_t)ring_size);
	if (errno) {
		bip_err("no room in /dev/shm for the ring with node %d: %s",
			peer, strerror(errno));
		return -BIP_ESYS;
	}
	return 0;
}

/* Kernels that cannot populate: both rings of a pair are reserved whole
 * at connect, by both ends, before either is used; the peer's segment
 * is mapped at seg from file fd. */
static int reserve_rings(struct bipfw_shm *shm, int peer, int fd,
			 const void *seg)
{
	const struct shm_peer *pp = &shm->peers[peer];
	int rc = reserve_ring(fd, seg, pp->out, ring_bytes(pp->mask + 1), peer);

	return rc ? rc : reserve_ring(shm->fd, shm->self, shm->in[peer],
				      ring_bytes(shm->ring_size), peer);
}

/* Tell the peer to poll our ring from now on: before our first record
 * there (see scan_senders). */
static void announce(const struct bipfw_shm *shm, struct shm_peer *pp)
{
	int me = shm->p.node;

	atomic_fetch_or_explicit(&pp->seg->senders[me / 64], 1ull << (me % 64),
				 memory_order_release);
	atomic_fetch_add_explicit(&pp->seg->nsenders, 1, memory_order_release);
}

/* The first message to a peer reserves the start of its ring, and the
 * ring's pages are reserved as the head first moves through them, up to
 * end (at most the ring's end): a page first, then steps that double up
 * to RING_GROW. A job whose ranks talk to few others takes little memory
 * and starts fast; a first message pays for a page, not for the whole
 * ring, and a stream soon reserves in large steps. The pages come mapped,
 * so the first lap takes no page faults on this side. */
static int ring_grow(struct bipfw_shm *shm, int peer, uint64_t end)
{
	struct shm_peer *pp = &shm->peers[peer];
	uint64_t size = pp->mask + 1;
	uint64_t step = pp->ready >= RING_GROW ? RING_GROW
			: pp->ready	       ? pp->ready
					       : PAGE - sizeof(struct ring);
	uint64_t to = end > pp->ready + step ? end : pp->ready + step;
	/* The first step takes the tail's line too: the owner starts to
	 * poll and write there once we announce. */
	uint8_t *from = pp->ready ? pp->out->data + pp->ready
				  : (uint8_t *)pp->out;
	int err;

	if (to > size)
		to = size;
	err = populate(from, (size_t)(pp->out->data + to - from));
	if (err) {
		bip_err("no room in /dev/shm for the ring to node %d (%s): "
			"messages to it fail; a smaller BIP_SHM_RING_SIZE or a "
			"larger /dev/shm helps",
			peer, strerror(err == EFAULT ? ENOSPC : err));
		pp->cut = true;
		return -BIP_ESYS;
	}
	if (!pp->ready)
		announce(shm, pp);
	pp->ready = to == size ? UINT64_MAX : to;
	pp->stalled = false;
	return 0;
}

/* Check a copy of a peer's segment header against what this job expects,
 * overflow-safe; the segment is size bytes long. */
static int seg_info_check(const struct bipfw_shm *shm, int peer, int pid,
			  const struct seg_info *h, size_t size)
{
	uint64_t rings = (uint64_t)(shm->p.nnodes - 1);

	if (h->magic != SEG_MAGIC || h->version != SEG_VERSION ||
	    (h->flags & ~SEG_MEMBARRIER) || h->job_key != shm->p.job_key ||
	    h->node != peer || h->nnodes != (uint32_t)shm->p.nnodes ||
	    h->pid != pid) {
		bip_err("node %d's segment does not belong to this job", peer);
		return -BIP_ECARD;
	}
	/* The packet size is agreed (card); the ring length is the owner's
	 * choice within the knob's range (a power of two: positions are
	 * masked, never divided, on the hot path). */
	if (h->packet_size != shm->p.packet_size ||
	    h->ring_size < ring_min(shm->p.packet_size) ||
	    h->ring_size > RING_MAX || (h->ring_size & (h->ring_size - 1)) ||
	    h->ring_off != shm->ring_off || size < shm->ring_off ||
	    (size - shm->ring_off) / rings < ring_stride(h->ring_size)) {
		bip_err("node %d's segment has a malformed geometry (rings of "
			"%" PRIu64 " bytes for packets of %u in %zu bytes)",
			peer, h->ring_size, h->packet_size, size);
		return -BIP_ECARD;
	}
	return 0;
}

/* From now on, look at the ring from src in our segment. */
static void poll_ring(struct bipfw_shm *shm, int src)
{
	if (!shm->peers[src].polled) {
		shm->peers[src].polled = true;
		shm->srcs[shm->nsrcs++] = src;
	}
}

/* Poll the ring from src, whose sender announced itself. It reserved the
 * ring's first pages before; we reserve them too, so that a peer which
 * announces without can not make our reads allocate, or SIGBUS. */
static void start_polling(struct bipfw_shm *shm, int src)
{
	int err = shm->lazy ? populate(shm->in[src],
				       sizeof(struct ring) + RECORD_ALIGN)
			    : 0;

	if (err) {
		bip_err("no room in /dev/shm for the ring from node %d (%s): "
			"messages from it are lost",
			src, strerror(err == EFAULT ? ENOSPC : err));
		shm->peers[src].cut = true;
		return;
	}
	poll_ring(shm, src);
}

static bool announced(const struct bipfw_shm *shm, int src)
{
	return atomic_load_explicit(&shm->self->senders[src / 64],
				    memory_order_acquire) &
	       (1ull << (src % 64));
}

static void scan_senders_bits(struct bipfw_shm *shm, uint32_t n)
{
	int words = (shm->p.nnodes + 63) / 64;

	shm->nsenders_seen = n;
	for (int w = 0; w < words; w++) {
		uint64_t bits = atomic_load_explicit(&shm->self->senders[w],
						     memory_order_acquire);

		for (; bits; bits &= bits - 1) {
			int src = w * 64 + __builtin_ctzll(bits);
			struct shm_peer *pp = &shm->peers[src];

			/* Peers write these bits: a node counts once, and
			 * only once we are connected to it (connect looks
			 * at its bit then). */
			if (src < shm->p.nnodes && src != shm->p.node &&
			    pp->seg && !pp->polled && !pp->cut)
				start_polling(shm, src);
		}
	}
}

/*
 * Rule: a ring is polled from the time its sender announces its first
 * message (a bit in our header, then the count of bits, both released
 * before that message's stamp), never before: rings of peers that never
 * send to us are neither read nor reserved, and a poll looks only at the
 * rings that carry traffic. The count sits on the doorbell's line, so
 * noticing a new sender costs one load of a line that is rarely written.
 */
static inline void scan_senders(struct bipfw_shm *shm)
{
	uint32_t n = atomic_load_explicit(&shm->self->nsenders,
					  memory_order_acquire);

	if (n != shm->nsenders_seen)
		scan_senders_bits(shm, n);
}

int bipfw_shm_attach(struct bipfw_shm *shm, int peer, int pid, void *seg,
		     size_t size)
{
	struct shm_peer *pp = &shm->peers[peer];
	struct seg_info h;
	int rc;

	if (size < sizeof(struct seg_hdr))
		return -BIP_ECARD;
	memcpy(&h, seg, sizeof(h));
	rc = seg_info_check(shm, peer, pid, &h, size);
	if (rc)
		return rc;
	pp->seg = seg;
	pp->size = size;
	pp->pid = h.pid;
	pp->mask = h.ring_size - 1;
	pp->key = ring_key(shm, peer);
	pp->out = ring_at(seg, shm->ring_off, peer, ring_stride(h.ring_size),
			  shm->p.node);
	/* Both ends start at 0. The tail is read only once the ring looks
	 * full: its page may not be reserved yet (reading a hole in a full
	 * /dev/shm is a SIGBUS). */
	pp->head = pp->tail_seen = 0;
	pp->ready = shm->lazy ? 0 : UINT64_MAX;
	pp->fence = !shm->membarrier || !(h.flags & SEG_MEMBARRIER);
	shm->fence_any |= pp->fence;
	pp->cma = cma_wanted(shm) && cma_works(pp, h.self_addr);
	/* Only an id: the kernel checks that it is a file of our job. */
	pp->kendpoint = shm->k.kcopy_min != SIZE_MAX ? h.kendpoint : 0;
	return 0;
}

int bipfw_shm_card_parse(const char *card, struct bipfw_shm_card *c)
{
	const char *p = card;
	uint64_t pid, node;

	if (!bip_field_lit(&p, ',', "shm") ||
	    !bip_field_uint(&p, ',', 10, INT32_MAX, &pid) || !pid ||
	    !bip_field_uint(&p, ',', 10, 0xffff, &node) ||
	    !bip_field_uint(&p, '\0', 16, UINT64_MAX, &c->job_key) || *p)
		return -BIP_ECARD;
	c->pid = (int)pid;
	c->node = (int)node;
	return 0;
}

int bipfw_shm_connect(struct bipfw_shm *shm, int peer, const char *card)
{
	struct shm_peer *pp;
	struct bipfw_shm_card c;
	char name[BIPFW_SHM_NAME_MAX];
	void *seg;
	size_t size;
	int rc, fd;

	if (peer < 0 || peer >= shm->p.nnodes || peer == shm->p.node)
		return -BIP_ENODE;
	pp = &shm->peers[peer];
	if (pp->seg)
		return -BIP_ESTATE;
	rc = bipfw_shm_card_parse(card, &c);
	if (rc)
		return rc;
	if (c.node != peer || c.job_key != shm->p.job_key) {
		bip_err("card of node %d/job %016" PRIx64 " given for node %d",
			c.node, c.job_key, peer);
		return -BIP_ECARD;
	}
	seg_path(shm, peer, name, sizeof(name));
	rc = map_peer(name, peer, &seg, &size, &fd);
	if (rc)
		return rc;
	rc = bipfw_shm_attach(shm, peer, c.pid, seg, size);
	if (!rc && !shm->lazy)
		rc = reserve_rings(shm, peer, fd, seg);
	close(fd);
	if (rc) {
		pp->seg = NULL;
		munmap(seg, size);
		return rc;
	}
	pp->mapped = true;
	if (!shm->lazy || announced(shm, peer))
		start_polling(shm, peer);
	/* A pid can be reused once its process is gone; a pidfd names the
	 * process itself. Kernels before 5.3 lack it: the pid then. */
	pp->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)c.pid, 0);
	/* Last of the host's nodes to attach removes the name: a crash then
	 * leaves nothing. */
	if (atomic_fetch_add(&pp->seg->attached, 1) + 1 ==
	    (uint32_t)shm->p.local_nodes - 1)
		shm_unlink(name);
	return 0;
}

void bipfw_shm_close(struct bipfw_shm *shm)
{
	char name[BIPFW_SHM_NAME_MAX];

	if (!shm)
		return;
	for (int i = 0; shm->peers && i < shm->p.nnodes; i++) {
		if (shm->peers[i].mapped)
			munmap(shm->peers[i].seg, shm->peers[i].size);
		if (shm->peers[i].pidfd >= 0)
			close(shm->peers[i].pidfd);
	}
	if (shm->self) {
		atomic_store(&shm->self->closed, 1);
		munmap(shm->self, shm->size);
	}
	if (shm->linked) {
		seg_path(shm, shm->p.node, name, sizeof(name));
		shm_unlink(name);
	}
	if (shm->bellfd >= 0)
		close(shm->bellfd);
	if (shm->fd >= 0)
		close(shm->fd);
	free(shm->peers);
	free(shm->in);
	free(shm->tails);
	free(shm->lent);
	free(shm->srcs);
	free(shm->bounce);
	free(shm);
}

void *bipfw_shm_inbound(struct bipfw_shm *shm, int src, size_t *len_p)
{
	*len_p = ring_bytes(shm->ring_size);
	shm->tails[src] = 0;
	poll_ring(shm, src);
	return shm->in[src];
}

/* --- wire operations ---------------------------------------------------- */

/* Rule: a ring grows only when its consumer lags far behind. At the end
 * of the reserved part, if the ring was not found full since it last grew
 * and the consumer took every record, or has passed half of the part (its tail is in this
 * lap, at least that far in), the record goes to the ring's start (behind a
 * pad to the end) instead of into new pages: a ping-pong keeps writing the
 * same few lines, hot in both caches, and a stream whose consumer lags by
 * L bytes settles on a part of about 2L, both taking no page faults after
 * their first laps (reserving a page costs 1.5-10 us: growing through a
 * whole 1 MiB ring cost a stream of 8 B messages 2-4 us per page for its
 * first 8000 messages). Behind such a pad the ring holds only its reserved
 * part until the consumer passes it: a burst that finds it full marks it
 * stalled, and its next end grows, by steps that double (the consumer lags
 * that far: a part twice as large holds it). Positions jump by up to
 * the ring's size per lap of the reserved part: at 10^7 laps a second they
 * would reach STAMP_PAD after 2^63 / 2^20 / 10^7 s, 2.7 years, with 1 MiB. */
static bool reuse_start(struct shm_peer *pp, uint64_t at, uint64_t rec)
{
	uint64_t unread, tail_at;

	if (pp->ready == UINT64_MAX || pp->stalled ||
	    rec + RECORD_ALIGN > pp->ready)
		return false;
	pp->tail_seen = atomic_load_explicit(&pp->out->tail,
					     memory_order_acquire);
	/* The unread records lie in [tail_at, at) and the pad goes at at:
	 * the start is free up to tail_at. A tail in the lap before (more
	 * unread than at) has not passed the last pad yet. */
	unread = pp->head - pp->tail_seen;
	if (unread > at)
		return false;
	tail_at = at - unread;
	return rec <= tail_at && (!unread || 2 * tail_at >= pp->ready);
}

/* Room for a record of rec bytes at at in our ring in the peer's segment,
 * behind a pad if it would cross the end (of the ring, or of its reserved
 * part: reuse_start). The tail comes from the peer: whatever it says, we
 * write only inside the ring's reserved part. */
static __attribute__((noinline)) struct bip_pkt_hdr *
reserve_slow(struct bipfw_shm *shm, int peer, uint64_t at, uint64_t rec)
{
	struct shm_peer *pp = &shm->peers[peer];
	uint64_t size = pp->mask + 1;
	uint64_t pad = at + rec > size ? size - at : 0, end;

	if (!pp->seg || pp->cut)
		return NULL;
	if (pp->head + pad + rec - pp->tail_seen > size) {
		pp->tail_seen = atomic_load_explicit(&pp->out->tail,
						     memory_order_acquire);
		if (pp->head + pad + rec - pp->tail_seen > size) {
			if (pp->ready != UINT64_MAX)
				pp->stalled = true;
			return NULL;
		}
	}
	/* First lap: a pad reaches the end; a record reaches the stamp
	 * behind it too, which the consumer reads next (a hole there would
	 * be allocated by its read, or be its SIGBUS on a full /dev/shm). */
	end = pad ? size : at + rec + RECORD_ALIGN;
	if (end > pp->ready) {
		if (reuse_start(pp, at, rec))
			pad = size - at;
		else if (ring_grow(shm, peer, end))
			return NULL;
	}
	if (pad) {
		atomic_store_explicit(stamp_at(pp->out->data + at),
				      ((pp->head + 1) | STAMP_PAD) ^ pp->key,
				      memory_order_release);
		pp->head += pad;
		at = 0;
	}
	return (struct bip_pkt_hdr *)(pp->out->data + at);
}

/* Whether a record of rec bytes goes at at without a pad or new pages (and
 * leaves the stamp behind it reserved). */
static inline bool fits_at(const struct shm_peer *pp, uint64_t at,
			   uint64_t rec)
{
	return at + rec + RECORD_ALIGN <= pp->ready && at + rec <= pp->mask + 1;
}

/* Room for a record of len payload bytes. Most records need no pad, no
 * new pages and no fresh look at the tail: those are reserve_slow's. */
static struct bip_pkt_hdr *shm_reserve(void *ctx, int peer, size_t len)
{
	struct bipfw_shm *shm = ctx;
	struct shm_peer *pp = &shm->peers[peer];
	uint64_t size = pp->mask + 1, at = pp->head & pp->mask;
	uint64_t rec = record_bytes(len);

	if (fits_at(pp, at, rec) && pp->head + rec - pp->tail_seen <= size &&
	    pp->seg && !pp->cut)
		return (struct bip_pkt_hdr *)(pp->out->data + at);
	return reserve_slow(shm, peer, at, rec);
}

/* The writer's half of the no-lost-wakeup barrier (the sleeper's is
 * sleep_barrier): a fence, or nothing where the sleeper's membarrier runs
 * one on our CPU for us. */
static void wake_fence(bool fence)
{
	if (fence)
		atomic_thread_fence(memory_order_seq_cst);
	else
		atomic_signal_fence(memory_order_seq_cst);
}

/* The peer's doorbell, rung the way it sleeps. */
static __attribute__((noinline)) void wake_ring(struct bipfw_shm *shm,
						int peer, uint32_t how)
{
	struct seg_hdr *s = shm->peers[peer].seg;

	switch (how) {
	case SLEEP_FUTEX:
		atomic_fetch_add(&s->doorbell, 1);
		futex(&s->doorbell, FUTEX_WAKE, 1, NULL);
		break;
	case SLEEP_POLL:
		bell_ring(shm, peer);
		break;
	}
}

/* The peer's doorbell, if it sleeps (after wake_fence): a look at one
 * word, in line in every send. */
static inline void wake_sleeper(struct bipfw_shm *shm, int peer)
{
	uint32_t how = atomic_load_explicit(&shm->peers[peer].seg->sleeping,
					    memory_order_relaxed);

	if (how != AWAKE)
		wake_ring(shm, peer, how);
}

/* Ask for the lines of a ring (data, size mask + 1) at positions [from,
 * to), for writing (PREFETCHW: only where has_prefetchw) or reading. */
static inline void fetch_lines(uint8_t *data, uint64_t mask, uint64_t from,
			       uint64_t to, bool write)
{
	for (; from < to; from += CACHELINE) {
#if defined(__x86_64__)
		if (write) {
			__asm__ volatile("prefetchw %0" ::"m"(
				data[from & mask]));
			continue;
		}
#endif
		__builtin_prefetch(data + (from & mask));
	}
}

/* The widest payload whose record write_ahead and reply_ahead ask for.
 * Wider, the lines asked for are more than the copy can use before they
 * are taken back (64 KiB MPI bw 38 -> 54 GB/s on an AMD Zen 5 without the
 * 32 KiB records asked for), and a `rep movsb` into lines asked for with
 * PREFETCHW runs at half speed there (4 KiB records 16 -> 33 GB/s by plain
 * stores): records up to this size are copied by plain stores
 * (shm_plain_max), wider ones by memcpy and not asked for. */
#define AHEAD_MAX (8u << 10)

/* Rule: a record sent right behind another, none taken between (a burst:
 * a stream, a window of sends), asks now for the lines that a record like
 * it, one record on, will write, if the consumer is known to have left
 * them. The stores of a record would otherwise wait for each line to come
 * back from the consumer's cache, which read it a lap ago: asked for a
 * record early, the lines cross while the host prepares the next send
 * (windows of 8 B messages both ways 121 -> 147 MB/s here, one way 1 KiB
 * 2.8 -> 6.7 GB/s, 4 KiB 12.2 -> 14.2). Not for the first record after
 * one taken: in a ping-pong the request crosses with the message the peer
 * waits for (8 B one way 0.22 -> 0.26 us when every record asked); that
 * one is reply_ahead's. Nor for payloads wider than AHEAD_MAX. */
static void write_ahead(struct bipfw_shm *shm, struct shm_peer *pp,
			size_t len)
{
	uint64_t at = pp->head + record_bytes(len);
	uint64_t end = at + sizeof(struct bip_pkt_hdr) + len;

	if (shm->burst++ && shm->prefetchw && len <= AHEAD_MAX &&
	    end - pp->tail_seen <= pp->mask + 1)
		fetch_lines(pp->out->data, pp->mask, at, end, true);
}

/* Rule: the first record taken from src since we sent (a reply, in a
 * ping-pong: src read what we sent it) asks for the lines that a record
 * like our last one to src will write where the next will go (at our
 * head, or at the ring's start where reserve_slow would start over), if
 * src is known to have left them, all but the stamp's line, which src
 * polls. The reply to it is then written into lines of ours instead of
 * waiting for each to come back from src's cache (MPI ping-pong, one way:
 * 256 B 0.39 -> 0.30 us, 1 KiB 0.65 -> 0.44, 4 KiB 0.99 -> 0.83). Not
 * after records of up to two pairs of lines: where we are src's only
 * sender it asks for the lines behind the stamp itself while it waits
 * (look_ahead). Nor after payloads wider than AHEAD_MAX. */
static void reply_ahead(struct bipfw_shm *shm, int src)
{
	struct shm_peer *pp = &shm->peers[src];
	uint64_t used = pp->last_used, size = pp->mask + 1;
	uint64_t at = pp->head & pp->mask, pos = pp->head;

	if (used <= 2 * RECORD_ALIGN || !shm->prefetchw ||
	    used - sizeof(struct bip_pkt_hdr) > AHEAD_MAX)
		return;
	if (!fits_at(pp, at, record_bytes(used - sizeof(struct bip_pkt_hdr)))) {
		pos += size - at;
		at = 0;
	}
	if (pos + used - pp->tail_seen <= size)
		fetch_lines(pp->out->data, pp->mask, at + CACHELINE, at + used,
			    true);
}

/* The record is written: its stamp makes it visible to the consumer. */
static void shm_commit(void *ctx, int peer, struct bip_pkt_hdr *pkt,
		       size_t len)
{
	struct bipfw_shm *shm = ctx;
	struct shm_peer *pp = &shm->peers[peer];

	atomic_store_explicit(stamp_at((uint8_t *)pkt), (pp->head + 1) ^ pp->key,
			      memory_order_release);
	pp->head += record_bytes(len);
	pp->last_used = (uint32_t)(sizeof(struct bip_pkt_hdr) + len);
	/* Either the peer sees our packet or we see it asleep and ring
	 * (Dekker: a store then a load on each side, a full barrier between
	 * them). The peer's side is sleep_barrier. A peer that issues a
	 * global membarrier before sleeping runs that barrier on our CPU for
	 * us, so the send path costs no fence; else we fence ourselves. */
	wake_fence(pp->fence);
	wake_sleeper(shm, peer);
	write_ahead(shm, pp, len);
}

/* The stamp at the tail of our ring from src: 0 nothing yet, 1 a record,
 * -1 a pad. Our own geometry, from our private copy: peers can write our
 * header. */
static inline int ring_state(struct bipfw_shm *shm, int src)
{
	uint64_t t = shm->tails[src];
	uint64_t stamp = atomic_load_explicit(
		stamp_at(shm->in[src]->data + (t & (shm->ring_size - 1))),
		memory_order_acquire);

	if (stamp == ((t + 1) ^ shm->ring_key))
		return 1;
	return stamp == (((t + 1) | STAMP_PAD) ^ shm->ring_key) ? -1 : 0;
}

static inline bool ring_ready(struct bipfw_shm *shm, int src)
{
	return ring_state(shm, src) != 0;
}

/* Before a sleep, after its barrier: a packet, or the watched word raised
 * (shm_mem_watch). */
static bool any_ready(struct bipfw_shm *shm)
{
	if (shm->watch &&
	    __atomic_load_n(shm->watch, __ATOMIC_ACQUIRE) >= shm->watch_value)
		return true;
	scan_senders(shm);
	for (int i = 0; i < shm->nsrcs; i++)
		if (ring_ready(shm, shm->srcs[i]))
			return true;
	return false;
}

/* The sender may write again up to end: every record before it is read,
 * and no longer lent out. */
static void ring_free(struct bipfw_shm *shm, int src, uint64_t end)
{
	atomic_store_explicit(&shm->in[src]->tail, end, memory_order_release);
}

/* Past len bytes: they go back to the sender at once, unless records
 * before them are still lent (then when those come back). */
static void ring_advance(struct bipfw_shm *shm, int src, uint64_t len)
{
	shm->tails[src] += len;
	if (!shm->lent[src])
		ring_free(shm, src, shm->tails[src]);
}

/* The record (or pads, then maybe a record) at the tail of the ring from
 * srcs[i]. The header shown is our copy; the record's length comes from
 * that copy, bounded by the end of the ring (a peer that lies about it
 * loses its own packets, never makes us read past the ring). */
static __attribute__((noinline)) int take_record(struct bipfw_shm *shm,
						 int i, int state,
						 const void **hdr,
						 const void **payload,
						 size_t *avail)
{
	int src = shm->srcs[i];
	uint64_t at, room;
	size_t len;
	uint8_t *rec;

	while (state < 0) {
		ring_advance(shm, src,
			     shm->ring_size -
				     (shm->tails[src] & (shm->ring_size - 1)));
		state = ring_state(shm, src);
	}
	if (!state)
		return -BIP_EAGAIN;
	at = shm->tails[src] & (shm->ring_size - 1);
	rec = shm->in[src]->data + at;
	memcpy(&shm->rx_hdr, rec, sizeof(shm->rx_hdr));
	/* A ring carries its sender's packets only: one that claims another
	 * source is forged, and packet_valid drops it (a small message
	 * outside the sequence has no number that a forger would have to
	 * guess). */
	if (shm->rx_hdr.src != src)
		shm->rx_hdr.src = BIPFW_SHM_FORGED;
	room = shm->ring_size - at - sizeof(struct bip_pkt_hdr);
	len = shm->rx_hdr.flags & BIP_PKTF_INLINE ? 0 : shm->rx_hdr.len;
	if (len > room)
		len = (size_t)room;
	shm->rx_len = record_bytes(len);
	/* The payload's lines are still in the sender's cache: asked for
	 * now, they cross while the header is checked and dispatched, not
	 * one after the other when the host reads them (MPI ping-pong, one
	 * way: 56-128 B 0.40-0.47 -> 0.31-0.34 us, 17-48 B 0.29 -> 0.27;
	 * past 1 KiB the hardware's streamer does as well). */
	fetch_lines(shm->in[src]->data, shm->ring_size - 1, at + CACHELINE,
		    at + (shm->rx_len < 1024 ? shm->rx_len : 1024), false);
	if (shm->burst) {
		shm->burst = 0;
		reply_ahead(shm, src);
	}
	*hdr = &shm->rx_hdr;
	*payload = rec + sizeof(struct bip_pkt_hdr);
	*avail = len < shm->p.packet_size ? len : shm->p.packet_size;
	shm->rx_cur = i;
	return 0;
}

/* Every inbound ring once, from rx_next on (round-robin), new senders
 * first included. */
static __attribute__((noinline)) int peek_rings(struct bipfw_shm *shm,
						const void **hdr,
						const void **payload,
						size_t *avail)
{
	int n, i, state;

	scan_senders(shm);
	n = shm->nsrcs;
	i = shm->rx_next;
	for (int k = 0; k < n; k++, i = i + 1 == n ? 0 : i + 1)
		if ((state = ring_state(shm, shm->srcs[i])) &&
		    take_record(shm, i, state, hdr, payload, avail) == 0)
			return 0;
	return -BIP_EAGAIN;
}

/* Rule: while the ring from src is empty and the last record taken was of
 * at most two pairs of lines (small messages, a ping-pong), each look at
 * the stamp also asks for the lines behind it that such a record fills:
 * when the next one lands they cross with its header's line instead of
 * after it (MPI ping-pong, one way: 32 B 0.26 -> 0.22 us, 64 B 0.28 ->
 * 0.24, 128 B 0.31 -> 0.27-0.30). Not after larger records: asking for
 * lines the producer is still writing made its stores wait (1 KiB 0.62 ->
 * 0.67 us, 256 B 0.37 -> 0.43 when it asked for all six). */
static inline void look_ahead(struct bipfw_shm *shm, int src)
{
	uint64_t t = shm->tails[src];

	fetch_lines(shm->in[src]->data, shm->ring_size - 1, t + CACHELINE,
		    t + shm->rx_len, false);
}

/* This is the idle loop's hot path: no division, precomputed ring
 * pointers, and with one sender (two processes) a look at one stamp and
 * no frame: the rest is out of line (take_record, peek_rings). */
static int shm_peek(void *ctx, const void **hdr, const void **payload,
		    size_t *avail)
{
	struct bipfw_shm *shm = ctx;
	int state;

	if (shm->nsrcs != 1 ||
	    atomic_load_explicit(&shm->self->nsenders, memory_order_acquire) !=
		    shm->nsenders_seen)
		return peek_rings(shm, hdr, payload, avail);
	state = ring_state(shm, shm->srcs[0]);
	if (!state) {
		if (shm->rx_len <= 2 * RECORD_ALIGN)
			look_ahead(shm, shm->srcs[0]);
		return -BIP_EAGAIN;
	}
	return take_record(shm, 0, state, hdr, payload, avail);
}

/* The record stays at its ring's tail; the next peek starts at the next
 * sender's ring. */
static void shm_hold(void *ctx)
{
	struct bipfw_shm *shm = ctx;
	int i = shm->rx_cur;

	shm->rx_next = i + 1 == shm->nsrcs ? 0 : i + 1;
}

static void shm_release(void *ctx)
{
	struct bipfw_shm *shm = ctx;

	ring_advance(shm, shm->srcs[shm->rx_cur], shm->rx_len);
	shm_hold(shm);
}

/* Past the record, which stays in the ring, lent to the host's small
 * queue, until shm_unkeep; the sender's space comes back only then. The
 * queue gives records back in the order it took them, and each ring's in
 * its own order: so giving one back frees everything before its end, and
 * the last one everything read so far. The token is that end. */
static uint64_t shm_keep(void *ctx)
{
	struct bipfw_shm *shm = ctx;
	int src = shm->srcs[shm->rx_cur];

	shm->lent[src]++;
	shm->tails[src] += shm->rx_len;
	shm_hold(shm);
	return shm->tails[src];
}

static void shm_unkeep(void *ctx, int src, uint64_t end)
{
	struct bipfw_shm *shm = ctx;

	if (!shm->lent[src])
		return;
	ring_free(shm, src, --shm->lent[src] ? end : shm->tails[src]);
}

/* Single copy between our memory and the peer's, the whole of len (the
 * kernel may move less per call). A refusal turns cross-memory attach off
 * for that peer (-BIP_EAGAIN): its messages go by the rings from then on.
 * An address outside the peer's memory is only that copy's failure. */
static int cma_direct(struct bipfw_shm *shm, int peer, void *local_buf,
		      uint64_t addr, size_t len, bool write)
{
	struct shm_peer *pp = &shm->peers[peer];
	size_t done = 0;

	while (done < len) {
		struct iovec local = { (uint8_t *)local_buf + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done),
					len - done };
		ssize_t n = write ? process_vm_writev(pp->pid, &local, 1,
						      &remote, 1, 0)
				  : process_vm_readv(pp->pid, &local, 1,
						     &remote, 1, 0);

		if (n <= 0) {
			bool bad_addr = n == 0 || errno == EFAULT;

			bip_warn("cross-memory %s node %d failed: %s",
				 write ? "write to" : "read from", peer,
				 n < 0 ? strerror(errno) : "nothing moved");
			if (bad_addr)
				return -BIP_ESYS;
			pp->cma = false;
			return -BIP_EAGAIN;
		}
		done += (size_t)n;
	}
	return 0;
}

/* The kernel copies with rep movsb, which is 4 to 10 times slower when
 * the two addresses lie 1 to 63 bytes apart modulo a page (bip_copy.h):
 * heap buffers of equal size, 16 bytes into their pages, often are. Such
 * a copy goes through a bounce buffer at the peer address's page offset,
 * which the kernel copies at full speed, and our copy loop moves between
 * it and local_buf while the piece is still in the cache. */
#define BOUNCE_PIECE (64u << 10)

/* Whether the kernel's copy, from the peer's memory to ours or back,
 * goes through the bounce buffer (allocated here on first use). */
static bool cma_bounces(struct bipfw_shm *shm, const void *local,
			uint64_t addr, size_t len, bool write)
{
	if (len < BIP_COPY_LOOP_MIN ||
	    !(write ? bip_copy_slow(BIP_COPY_ALIAS_KERNEL, (uintptr_t)addr,
				    (uintptr_t)local)
		    : bip_copy_slow(BIP_COPY_ALIAS_KERNEL, (uintptr_t)local,
				    (uintptr_t)addr)))
		return false;
	return shm->bounce ||
	       (shm->bounce = aligned_alloc(PAGE, BOUNCE_PIECE + PAGE));
}

static int cma_copy(struct bipfw_shm *shm, int peer, void *local_buf,
		    uint64_t addr, size_t len, bool write)
{
	uint8_t *local = local_buf;
	size_t n;
	int rc = 0;

	if (!cma_bounces(shm, local, addr, len, write))
		return cma_direct(shm, peer, local, addr, len, write);
	for (size_t done = 0; done < len && !rc; done += n) {
		uint8_t *b = shm->bounce + ((addr + done) & (PAGE - 1));

		n = len - done < BOUNCE_PIECE ? len - done : BOUNCE_PIECE;
		if (write)
			bip_copy(b, local + done, n);
		rc = cma_direct(shm, peer, b, addr + done, n, write);
		if (!rc && !write)
			bip_copy(local + done, b, n);
	}
	return rc;
}

/* A receive buffer the kernel may write from the peer's side, if bip.ko
 * is open at both ends and the message is long enough. */
static int shm_expose(void *ctx, int peer, void *buf, size_t len,
		      uint64_t *key)
{
	struct bipfw_shm *shm = ctx;

	*key = 0;
	if (!shm->peers[peer].kendpoint || len < shm->k.kcopy_min)
		return 0;
	return bipfw_kdev_reg(shm->p.kdev, buf, len, key);
}

static void shm_unexpose(void *ctx, uint64_t key)
{
	bipfw_kdev_dereg(((struct bipfw_shm *)ctx)->p.kdev, key);
}

static int shm_dma_write(void *ctx, int peer, uint64_t addr, uint64_t key,
			 const void *src, size_t len)
{
	struct bipfw_shm *shm = ctx;
	struct shm_peer *pp = &shm->peers[peer];

	if (key && pp->kendpoint &&
	    !bipfw_kcopy_write(shm->p.kdev, pp->kendpoint, key, src, len)) {
		shm->p.cnt->kernel_copies++;
		return 0;
	}
	if (!pp->cma || len < shm->k.cma_min)
		return -BIP_EAGAIN;
	return cma_copy(shm, peer, (void *)(uintptr_t)src, addr, len, true);
}

static size_t shm_plain_max(void *ctx)
{
	return ((struct bipfw_shm *)ctx)->prefetchw ? AHEAD_MAX : 0;
}

static size_t shm_pull_min(void *ctx, int peer)
{
	(void)peer;
	return ((struct bipfw_shm *)ctx)->k.pull_min;
}

/* The peer's tail (its own to write) is only compared with our head. */
static bool shm_read_all(void *ctx, int peer)
{
	struct shm_peer *pp = &((struct bipfw_shm *)ctx)->peers[peer];

	return !pp->seg || !pp->out || pp->cut ||
	       atomic_load_explicit(&pp->out->tail, memory_order_acquire) ==
		       pp->head;
}

static bool shm_rma_reach(void *ctx, int peer)
{
	return ((struct bipfw_shm *)ctx)->peers[peer].cma;
}

static int shm_rma(void *ctx, int peer, void *local, uint64_t addr,
		   size_t len, bool write)
{
	if (!shm_rma_reach(ctx, peer))
		return -BIP_EAGAIN;
	return cma_copy(ctx, peer, local, addr, len, write);
}

/* Rule: the pieces that need no bounce go to the kernel in one call (a
 * call costs ~0.2 us here, a 16 KiB copy 0.4: a window of 16 KiB messages
 * read one call each moved 28 GB/s, 8 a call 42). The kernel stops at the
 * first piece it cannot read whole; that one and those behind it go by
 * cma_copy each, which says what failed. */
static void shm_readv(void *ctx, int peer, struct bip_rvec *v, unsigned n)
{
	/* n <= BIP_READV_MAX, and the peer reached: bipfw_readv checked. */
	struct bipfw_shm *shm = ctx;
	struct iovec local[BIP_READV_MAX], remote[BIP_READV_MAX];
	unsigned k = 0, at[BIP_READV_MAX];
	size_t got = 0;
	ssize_t moved;

	for (unsigned i = 0; i < n; i++) {
		v[i].rc = 0;
		if (!v[i].len)
			continue;
		if (cma_bounces(shm, v[i].dst, v[i].addr, v[i].len, false)) {
			v[i].rc = cma_copy(shm, peer, v[i].dst, v[i].addr,
					   v[i].len, false);
			continue;
		}
		local[k] = (struct iovec){ v[i].dst, v[i].len };
		remote[k] = (struct iovec){ (void *)(uintptr_t)v[i].addr,
					    v[i].len };
		at[k++] = i;
	}
	moved = k ? process_vm_readv(shm->peers[peer].pid, local, k, remote,
				     k, 0)
		  : 0;
	if (moved > 0)
		got = (size_t)moved;
	for (unsigned j = 0; j < k; j++) {
		struct bip_rvec *p = &v[at[j]];
		size_t part = got < p->len ? got : p->len;

		got -= part;
		/* A refusal turned cross-memory attach off: no more calls. */
		if (part < p->len)
			p->rc = shm_rma_reach(ctx, peer)
					? cma_copy(shm, peer,
						   (uint8_t *)p->dst + part,
						   p->addr + part,
						   p->len - part, false)
					: -BIP_EAGAIN;
	}
}

/* Memory shared with the host's other processes (shm_mem.c), at most
 * BIP_SHM_MEM_MAX regions at once: each holds a descriptor. */
static int shm_mem_alloc(void *ctx, size_t len, void **addr_p,
			 uint64_t *key_p)
{
	struct bipfw_shm *shm = ctx;
	int rc;

	if (shm->nregions >= shm->k.mem_max)
		return -BIP_EAGAIN;
	/* Peers may take its descriptor only if we say so (Yama ptrace
	 * scope), as for cross-memory attach. */
	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	rc = bipfw_shm_mem_alloc(len, addr_p, key_p);
	shm->nregions += !rc;
	return rc;
}

/* A watch into memory that goes ends with it: a sleep never reads a
 * mapping that is gone. */
static void unwatch(struct bipfw_shm *shm, const void *addr, size_t len)
{
	uintptr_t w = (uintptr_t)shm->watch, a = (uintptr_t)addr;

	if (addr && w >= a && w - a < len)
		shm->watch = NULL;
}

static void shm_mem_free(void *ctx, void *addr, size_t len, uint64_t key)
{
	struct bipfw_shm *shm = ctx;

	unwatch(shm, addr, len);
	bipfw_shm_mem_free(addr, len, key);
	shm->nregions--;
}

static int shm_mem_map(void *ctx, int peer, uint64_t key, uint64_t off,
		       size_t len, void **addr_p)
{
	const struct shm_peer *pp = &((struct bipfw_shm *)ctx)->peers[peer];

	return bipfw_shm_mem_map(pp->seg ? pp->pidfd : -1, peer, key, off, len,
				 addr_p);
}

/* Rule (no lost wakeup, as for packets): a waiter names its word here,
 * then its sleep looks at the word after saying it sleeps and fencing
 * (any_ready). A process that raises the word fences (shm_mem_wake_barrier),
 * then looks whether the waiter sleeps and rings (shm_mem_wake): either the
 * waiter's last look sees the word, or the raiser sees it asleep. The
 * membarrier of a registered sleeper stands for the raiser's fence, as it
 * does for a sender's. */
static void shm_mem_watch(void *ctx, const uint64_t *word, uint64_t value)
{
	struct bipfw_shm *shm = ctx;

	shm->watch_value = value;
	shm->watch = word;
}

static void shm_mem_wake_barrier(void *ctx)
{
	const struct bipfw_shm *shm = ctx;

	wake_fence(!shm->membarrier || shm->fence_any);
}

static void shm_mem_wake(void *ctx, int peer)
{
	struct bipfw_shm *shm = ctx;

	if (shm->peers[peer].seg)
		wake_sleeper(shm, peer);
}

static void shm_mem_unmap(void *ctx, void *addr, size_t len)
{
	unwatch(ctx, addr, len);
	bipfw_shm_mem_unmap(addr, len);
}

static int shm_peer_state(void *ctx, int peer)
{
	struct shm_peer *pp = &((struct bipfw_shm *)ctx)->peers[peer];

	if (!pp->seg)
		return BIPFW_PEER_LIVE; /* not connected yet: nothing to judge */
	if (pp->cut)
		return BIPFW_PEER_CUT;
	/* Closed counts only once what it sent before closing is read
	 * (its announcement, if any, went before the close). */
	if (atomic_load(&pp->seg->closed)) {
		scan_senders(ctx);
		return pp->polled && ring_ready(ctx, peer) ? BIPFW_PEER_LIVE
							   : BIPFW_PEER_CLOSED;
	}
	if (pp->pidfd >= 0) {
		/* Readable once the process has exited. */
		struct pollfd pfd = { .fd = pp->pidfd, .events = POLLIN };

		return poll(&pfd, 1, 0) == 0 ? BIPFW_PEER_LIVE
					     : BIPFW_PEER_GONE;
	}
	return pid_alive(pp->pid) ? BIPFW_PEER_LIVE : BIPFW_PEER_GONE;
}

/* After saying we sleep, before looking at the rings a last time: the
 * other half of shm_commit's barrier. The membarrier runs a full barrier
 * on every CPU that runs a registered process, and only registered
 * senders skip their fence. */
static void sleep_barrier(const struct bipfw_shm *shm)
{
	if (!shm->membarrier ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0))
		atomic_thread_fence(memory_order_seq_cst);
}

void bipfw_shm_set_sleep_hook(struct bipfw_shm *shm,
			      bipfw_shm_sleep_hook_t fn, void *arg)
{
	shm->sleep_hook = fn;
	shm->sleep_arg = arg;
}

static void sleep_step(struct bipfw_shm *shm, enum bipfw_shm_sleep_step step)
{
	if (shm->sleep_hook)
		shm->sleep_hook(shm->sleep_arg, step);
}

/* Rule (no lost wakeup): read the doorbell, say we sleep, fence, look at
 * the rings a last time, then sleep only while the doorbell still holds
 * what we read. A sender that wrote before our last look is seen by it;
 * one that wrote after sees us asleep and rings, which the futex's own
 * compare catches even before we are in it. */
static void shm_wait(void *ctx, unsigned timeout_us)
{
	struct bipfw_shm *shm = ctx;
	struct seg_hdr *s = shm->self;
	uint32_t bell = atomic_load(&s->doorbell);
	struct timespec ts = { timeout_us / 1000000,
			       (long)(timeout_us % 1000000) * 1000 };

	sleep_step(shm, BIPFW_SHM_SLEEP_BELL_READ);
	atomic_store(&s->sleeping, SLEEP_FUTEX);
	sleep_barrier(shm);
	sleep_step(shm, BIPFW_SHM_SLEEP_SAID);
	if (any_ready(shm))
		goto awake;
	sleep_step(shm, BIPFW_SHM_SLEEP_LOOKED);
	futex(&s->doorbell, FUTEX_WAIT, bell, &ts);
awake:
	atomic_store(&s->sleeping, AWAKE);
}

/* Beside other wires: the bell socket, which senders ring once they see
 * SLEEP_POLL (same fence protocol as the futex). */
static int shm_wait_fd(void *ctx)
{
	struct bipfw_shm *shm = ctx;

	if (!shm->bell_bound)
		return -BIP_ESTATE;
	bell_drain(shm);
	atomic_store(&shm->self->sleeping, SLEEP_POLL);
	sleep_barrier(shm);
	if (any_ready(shm))
		return -BIP_EAGAIN;
	return shm->bellfd;
}

static void shm_wait_end(void *ctx)
{
	atomic_store(&((struct bipfw_shm *)ctx)->self->sleeping, AWAKE);
}

/* Whether the kernel shows pid runnable on cpu now: its state (the third
 * field) and processor (the 39th). */
static bool runs_on(pid_t pid, int cpu)
{
	char buf[PROC_STAT_MAX];
	const char *p = proc_stat(pid, buf);
	int at;

	if (!p || *p != 'R')
		return false;
	for (int field = 3; field < 39; field++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	return sscanf(p, "%d", &at) == 1 && at == cpu;
}

/*
 * Rule: a node says on which CPU it waits, on the line senders read anyway,
 * and only when that changed; a node that waits long reads what its peers
 * said, and asks the kernel whether one runs on its CPU (a read of /proc,
 * 5-10 us): first those that said its CPU, then, on a host of up to
 * ASK_ALL peers, the others, else those that said nothing yet; ASK_MAX at
 * most. What a peer said may be old: the one we wait for may not have run
 * since a wake-up put it on our CPU, and so not said it since. The idle
 * policy moves only for a peer that competes for our CPU now. The kernel
 * is asked about the peer's main thread, the one that runs MPI in a
 * program that is not threaded.
 */
#define ASK_ALL 2
#define ASK_MAX 4

/* The CPU a peer said, -1 for none yet, or -2 for a value out of range
 * (the peer writes its header: one load, then checked). */
static int said_cpu(const struct shm_peer *pp)
{
	uint32_t said = atomic_load_explicit(&pp->seg->cpu,
					     memory_order_relaxed);

	return said > BIPFW_CPUS_MAX ? -2 : (int)said - 1;
}

static int shm_host_cpus(void *ctx, int cpu, struct bipfw_cpus *others)
{
	struct bipfw_shm *shm = ctx;
	bool ask_all = shm->p.local_nodes <= ASK_ALL + 1;
	int asked = 0;

	if (atomic_load_explicit(&shm->self->cpu, memory_order_relaxed) !=
	    (uint32_t)cpu + 1)
		atomic_store_explicit(&shm->self->cpu, (uint32_t)cpu + 1,
				      memory_order_relaxed);
	if (!others)
		return 0;
	for (int i = 0; i < shm->p.nnodes; i++) {
		const struct shm_peer *pp = &shm->peers[i];
		int c;

		if (i == shm->p.node || !pp->seg || pp->cut)
			continue;
		c = said_cpu(pp);
		if (c >= 0)
			others->bits[c / 64] |= UINT64_C(1) << (c % 64);
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < shm->p.nnodes && asked < ASK_MAX; i++) {
			const struct shm_peer *pp = &shm->peers[i];
			int c;

			if (i == shm->p.node || !pp->seg || pp->cut)
				continue;
			c = said_cpu(pp);
			if (pass == 0 ? c != cpu
				      : c == cpu || c < -1 || (!ask_all && c >= 0))
				continue;
			asked++;
			if (runs_on(pp->pid, cpu))
				return 1;
		}
	return 0;
}

static int cma_probe(void)
{
	int fds[2], rc = 0;
	volatile uint64_t word = SEG_MAGIC, got = 0;
	pid_t child;
	char c;

	if (pipe(fds) < 0)
		return -errno;
	child = fork();
	if (child < 0) {
		rc = -errno;
		close(fds[0]);
		close(fds[1]);
		return rc;
	}
	if (child == 0) {
		/* The child is a sibling-like target: it allows any tracer,
		 * as BIP processes do when CMA is enabled. */
		close(fds[1]);
		(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
		(void)!read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	{
		struct iovec local = { (void *)&got, sizeof(got) };
		struct iovec remote = { (void *)&word, sizeof(word) };

		if (process_vm_readv(child, &local, 1, &remote, 1, 0) !=
		    sizeof(got))
			rc = -errno;
		else if (got != SEG_MAGIC)
			rc = -EIO;
	}
	close(fds[1]);
	waitpid(child, NULL, 0);
	return rc;
}

/* What the rings of one process take at most (each is reserved as
 * messages from its peer first fill it), with a host of n nodes. */
static int rings_text(const struct shm_knobs *k, size_t packet_size, int n,
		      char *buf, size_t len)
{
	uint64_t r = ring_size_for(k, packet_size, n);

	return snprintf(buf, len, "%s%" PRIu64 " KiB at %d%s (at most %.2f "
			"MiB a process)", n == 2 ? "" : ", ", r >> 10, n,
			n == 2 ? " nodes a host" : "",
			(double)(ring_stride(r) * (uint64_t)(n - 1) +
				 ring_off(n)) / (1 << 20));
}

static int shm_probe(size_t packet_size, char *state, size_t len)
{
	static const int hosts[] = { 2, 32, 128 };
	struct shm_knobs k;
	int cma = cma_probe(), n;

	if (bip_knob_table_load(&shm_knobs, &k) ||
	    !ring_size_for(&k, packet_size, 2)) {
		snprintf(state, len, "a knob is invalid (BIP_LOG=error says "
				     "which)");
		return -BIP_EINVAL;
	}
	if (cma)
		n = snprintf(state, len,
			     "cross-memory attach unavailable (%s): long "
			     "messages use the rings",
			     strerror(-cma));
	else
		n = snprintf(state, len, "cross-memory attach available");
	n += snprintf(state + n, len > (size_t)n ? len - (size_t)n : 0,
		      "; rings per peer (BIP_SHM_RING_SIZE) ");
	for (unsigned i = 0; i < 3; i++)
		n += rings_text(&k, packet_size, hosts[i], state + n,
				len > (size_t)n ? len - (size_t)n : 0);
	return 0;
}

/* --- the class ------------------------------------------------------------ */

static int shm_open_ctx(const struct bipfw_wire_params *p, void **ctx_p)
{
	return bipfw_shm_open(p, (struct bipfw_shm **)ctx_p);
}

static void shm_close_ctx(void *ctx)
{
	bipfw_shm_close(ctx);
}

static int shm_card_ctx(void *ctx, char *buf, size_t len)
{
	return bipfw_shm_card(ctx, buf, len);
}

static int shm_connect_ctx(void *ctx, int peer, const char *card)
{
	return bipfw_shm_connect(ctx, peer, card);
}

const struct bipfw_wire_class bipfw_shm_class = {
	.name = "shm",
	.flags = BIPFW_WIRE_PEEK_COPY,
	.scope = BIPFW_SCOPE_HOST,
	.knobs = &shm_knobs,
	.open = shm_open_ctx,
	.close = shm_close_ctx,
	.card = shm_card_ctx,
	.connect = shm_connect_ctx,
	.plain_max = shm_plain_max,
	.reserve = shm_reserve,
	.commit = shm_commit,
	.peek = shm_peek,
	.release = shm_release,
	.hold = shm_hold,
	.keep = shm_keep,
	.unkeep = shm_unkeep,
	.dma_write = shm_dma_write,
	.expose = shm_expose,
	.unexpose = shm_unexpose,
	.pull_min = shm_pull_min,
	.rma = shm_rma,
	.readv = shm_readv,
	.read_all = shm_read_all,
	.rma_reach = shm_rma_reach,
	.mem_alloc = shm_mem_alloc,
	.mem_free = shm_mem_free,
	.mem_map = shm_mem_map,
	.mem_unmap = shm_mem_unmap,
	.mem_watch = shm_mem_watch,
	.mem_wake_barrier = shm_mem_wake_barrier,
	.mem_wake = shm_mem_wake,
	.host_cpus = shm_host_cpus,
	.peer_state = shm_peer_state,
	.wait = shm_wait,
	.wait_fd = shm_wait_fd,
	.wait_end = shm_wait_end,
	.cleanup = shm_cleanup,
	.probe = shm_probe,
};
