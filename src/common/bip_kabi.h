/*
 * bip_kabi.h - the /dev/bip ABI: the ioctls of bip.ko and their arguments,
 * shared by the kernel module and libbip (bip(4) describes them).
 *
 * The values below are the ABI: they must not change silently. Change
 * BIP_KABI_VERSION whenever an ioctl, a structure, an offset or a meaning
 * changes; BIP_IOC_INFO says which version the loaded module speaks.
 * Fixed-width integers only, every pointer carried as a uint64_t, and every
 * structure padded by hand to a multiple of 8 bytes, so 32- and 64-bit
 * processes and the kernel lay them out alike.
 */
#ifndef BIP_COMMON_KABI_H
#define BIP_COMMON_KABI_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#include <linux/stddef.h>
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#endif

#define BIP_KABI_VERSION 1
#define BIP_KABI_DEVICE "/dev/bip"
#define BIP_KABI_IOC_TYPE 0xbb /* no ioctl of Linux 6.1's headers has it */

/* BIP_IOC_INFO: the module's version and limits; with BIP_IOC_JOB, the one
 * ioctl that works before the job is set. */
struct bip_kabi_info {
	uint32_t version;     /*  0: BIP_KABI_VERSION of the module */
	uint32_t page_size;   /*  4: bytes of a page */
	uint64_t max_pinned;  /*  8: bytes one file may pin (max_pinned=) */
	uint64_t nicmem_max;  /* 16: bytes of NIC memory per file */
	uint32_t send_max;    /* 24: frames per BIP_IOC_SEND */
	uint32_t pad;         /* 28 */
};

/* BIP_IOC_JOB: bind the file to a job, once. The job is the pair (secret,
 * job key), compared in constant time; the kernel derives the network tag
 * of the outer header from it the way the udp and eth wires do (SipHash-2-4
 * keyed by {secret, job_key} over the 8 bytes "udp-tag\0"), so a process
 * that only saw the tag on a wire cannot act as the job. */
struct bip_kabi_job {
	uint64_t secret;   /*  0: in: the job's random secret, not 0 */
	uint64_t job_key;  /*  8: in: the job's key */
	uint64_t endpoint; /* 16: out: this file's random id, which the job's
			    *     other processes name it by (BIP_IOC_COPY) */
	uint64_t tag;      /* 24: out: the job's network tag */
};

/* BIP_IOC_REG: pin [addr, addr + len) of the caller's memory (writable) and
 * name it by a handle, valid on this file until BIP_IOC_DEREG or close.
 * Pinned pages count against RLIMIT_MEMLOCK, as does the NIC memory that
 * mmap(2) of the file maps (nicmem_max bytes at most). */
struct bip_kabi_reg {
	uint64_t addr;   /*  0: in */
	uint64_t len;    /*  8: in: > 0 */
	uint32_t flags;  /* 16: in: 0 */
	uint32_t pad;    /* 20: 0 */
	uint64_t handle; /* 24: out: never 0 */
};

/* BIP_IOC_COPY: the emulated NIC's DMA engine, between a region of this
 * file and a region of another file of the same job (or this one). */
#define BIP_COPY_READ 1  /* the peer's region -> this file's */
#define BIP_COPY_WRITE 2 /* this file's region -> the peer's */

struct bip_kabi_copy {
	uint64_t handle;      /*  0: a region of this file */
	uint64_t offset;      /*  8: bytes into it */
	uint64_t peer;        /* 16: the peer file's endpoint (BIP_IOC_JOB) */
	uint64_t peer_handle; /* 24: a region of the peer file */
	uint64_t peer_offset; /* 32: bytes into it */
	uint64_t len;         /* 40: bytes to copy; both ranges inside */
	uint32_t flags;       /* 48: BIP_COPY_READ or BIP_COPY_WRITE */
	uint32_t pad;         /* 52: 0 */
};

/* Counters: one list gives the indexes and the names tools print. */
#define BIP_KABI_COUNTERS(X)                                                   \
	X(COPIES)          /* BIP_IOC_COPY calls that moved data */            \
	X(COPY_BYTES)      /* bytes they moved */                              \
	X(FRAMES_SENT)     /* frames handed to the interface */                \
	X(BYTES_SENT)      /* their bytes, from the outer header on */         \
	X(FRAMES_RECEIVED) /* frames put in the receive ring */                \
	X(BYTES_RECEIVED)  /* their bytes, from the outer header on */         \
	X(FRAMES_DROPPED)  /* ring full, frame too long, injected loss */      \
	X(FRAMES_FOREIGN)  /* frames of another job, not delivered */          \
	X(PINNED_BYTES)    /* bytes of registered pages now (a level) */

enum bip_kabi_counter {
#define BIP_KABI_COUNTER_ENUM(name) BIP_CNT_##name,
	BIP_KABI_COUNTERS(BIP_KABI_COUNTER_ENUM)
#undef BIP_KABI_COUNTER_ENUM
	BIP_CNT_N
};

#define BIP_KABI_NCOUNTERS 16 /* room for counters to come */

/* Name of a counter, for tools. */
static inline const char *bip_kabi_counter_name(unsigned int c)
{
	static const char *const names[] = {
#define BIP_KABI_COUNTER_NAME(name) [BIP_CNT_##name] = #name,
		BIP_KABI_COUNTERS(BIP_KABI_COUNTER_NAME)
#undef BIP_KABI_COUNTER_NAME
	};

	return c < BIP_CNT_N ? names[c] : "UNKNOWN";
}

/* BIP_IOC_STATS: this file's counters and the module's since it loaded
 * (slots from BIP_CNT_N on read 0). */
struct bip_kabi_stats {
	uint64_t file[BIP_KABI_NCOUNTERS];   /*   0 */
	uint64_t module[BIP_KABI_NCOUNTERS]; /* 128 */
};

/*
 * BIP_IOC_BIND: bind the file, once, to a network interface the
 * administrator allows (ifaces=), looked up in the caller's network
 * namespace, for frames of one EtherType. Frames of that EtherType whose
 * outer header carries the job's tag (and, for BIP_OUTER_MAGIC packets,
 * name node, unless BIP_KABI_NODE_ANY) are written into a ring of slots in
 * a registered region; ring 0 binds for sending only.
 *
 * The ring: slots slot_size bytes apart from ring_offset in the region,
 * each a struct bip_kabi_slot and the frame from its outer header on. The
 * kernel fills them in turn: it writes a slot only when its status is
 * BIP_SLOT_FREE and sets BIP_SLOT_FULL last (release); user space reads a
 * FULL slot (acquire), then stores FREE. A frame that finds its slot full,
 * or does not fit in one, is dropped and counted. BIND frees every slot;
 * the ring's region stays pinned until close (BIP_IOC_DEREG: EBUSY).
 */
#define BIP_KABI_NODE_ANY 0xffffffffu
#define BIP_KABI_IFNAMSIZ 16
#define BIP_KABI_ALIGN 64 /* of ring_offset's address and of slot_size */

struct bip_kabi_bind {
	char ifname[BIP_KABI_IFNAMSIZ]; /*  0: in, NUL-terminated */
	uint64_t ring;        /* 16: in: region handle of the ring, or 0 */
	uint64_t ring_offset; /* 24: in: the first slot's offset in it; its
			       *     address a multiple of BIP_KABI_ALIGN */
	uint32_t slot_size;   /* 32: in: a multiple of BIP_KABI_ALIGN */
	uint32_t slots;       /* 36: in: > 0 */
	uint32_t node;        /* 40: in: node filter, or BIP_KABI_NODE_ANY */
	uint16_t ethertype;   /* 44: in: BIP_ETHERTYPE or BIP_ETHERTYPE_LIVE */
	uint16_t pad;         /* 46: 0 */
	uint8_t mac[6];       /* 48: out: the interface's address */
	uint16_t pad2;        /* 54 */
	uint32_t mtu;         /* 56: out: bytes of frame after the Ethernet
			       *     header (the outer header counts) */
	uint32_t pad3;        /* 60 */
};

#define BIP_SLOT_FREE 0 /* user space's: the kernel may fill it */
#define BIP_SLOT_FULL 1 /* the kernel's: a frame is in it */

struct bip_kabi_slot {
	uint32_t status;    /* 0: BIP_SLOT_* */
	uint32_t len;       /* 4: bytes of frame that follow (a short frame
			     *    may bring the Ethernet padding along) */
	uint16_t ethertype; /* 8 */
	uint8_t src[6];     /* 10: the sender's MAC address */
};                          /* 16: the frame, from its outer header on */

/* BIP_IOC_SEND: frames out of the bound interface. The caller gives the
 * BIP packet behind the outer header; the kernel writes the Ethernet
 * header, the EtherType and the outer header with the job's tag itself.
 * Returns how many frames went (from the first on), or an error if none. */
struct bip_kabi_frame {
	uint64_t buf;       /*  0: the bytes after the outer header */
	uint32_t len;       /*  8: their number (with the outer header, at
			     *     most the bound interface's mtu) */
	uint32_t magic;     /* 12: BIP_OUTER_MAGIC, _PROBE or _ALIVE */
	uint32_t node;      /* 16: outer header's node */
	uint16_t ethertype; /* 20: BIP_ETHERTYPE or BIP_ETHERTYPE_LIVE */
	uint8_t dst[6];     /* 22: destination MAC address */
};

struct bip_kabi_send {
	uint64_t frames; /* 0: an array of struct bip_kabi_frame */
	uint32_t count;  /* 8: its length, at most send_max (BIP_IOC_INFO) */
	uint32_t pad;    /* 12: 0 */
};

#define BIP_IOC_INFO _IOR(BIP_KABI_IOC_TYPE, 0, struct bip_kabi_info)
#define BIP_IOC_JOB _IOWR(BIP_KABI_IOC_TYPE, 1, struct bip_kabi_job)
#define BIP_IOC_REG _IOWR(BIP_KABI_IOC_TYPE, 2, struct bip_kabi_reg)
#define BIP_IOC_DEREG _IOW(BIP_KABI_IOC_TYPE, 3, uint64_t)
#define BIP_IOC_COPY _IOW(BIP_KABI_IOC_TYPE, 4, struct bip_kabi_copy)
#define BIP_IOC_STATS _IOR(BIP_KABI_IOC_TYPE, 5, struct bip_kabi_stats)
#define BIP_IOC_BIND _IOWR(BIP_KABI_IOC_TYPE, 6, struct bip_kabi_bind)
#define BIP_IOC_SEND _IOW(BIP_KABI_IOC_TYPE, 7, struct bip_kabi_send)

_Static_assert(sizeof(struct bip_kabi_info) == 32, "info is 32 bytes");
_Static_assert(sizeof(struct bip_kabi_job) == 32, "job is 32 bytes");
_Static_assert(sizeof(struct bip_kabi_reg) == 32 &&
		       offsetof(struct bip_kabi_reg, handle) == 24,
	       "reg layout");
_Static_assert(sizeof(struct bip_kabi_copy) == 56 &&
		       offsetof(struct bip_kabi_copy, flags) == 48,
	       "copy layout");
_Static_assert(sizeof(struct bip_kabi_stats) == 256, "stats are 256 bytes");
_Static_assert(BIP_CNT_N <= BIP_KABI_NCOUNTERS, "counters fit in stats");
_Static_assert(sizeof(struct bip_kabi_bind) == 64 &&
		       offsetof(struct bip_kabi_bind, ethertype) == 44 &&
		       offsetof(struct bip_kabi_bind, mac) == 48 &&
		       offsetof(struct bip_kabi_bind, mtu) == 56,
	       "bind layout");
_Static_assert(sizeof(struct bip_kabi_slot) == 16, "slot header is 16 bytes");
_Static_assert(sizeof(struct bip_kabi_frame) == 32 &&
		       offsetof(struct bip_kabi_frame, dst) == 22,
	       "frame layout");
_Static_assert(sizeof(struct bip_kabi_send) == 16, "send is 16 bytes");

#endif
