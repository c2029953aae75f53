/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bipk.h - what the parts of bip.ko share: the state of an open /dev/bip,
 * its registered regions, and the functions each part offers the others
 * (main.c: the device and the job; mem.c: registration and copy; nicmem.c:
 * the mapped NIC memory; frame.c: the frame path).
 */
#ifndef BIPK_H
#define BIPK_H

#include <linux/atomic.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/poll.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "bip_kabi.h"
#include "bip_wire.h"

/*
 * A registered region: pinned pages of one process, named by a handle on
 * one file. Lookups take a reference under RCU; the last reference unpins,
 * so a copy in flight keeps its pages even if the owner deregisters them.
 */
struct bipk_region {
	refcount_t ref;
	u64 handle;           /* random high half, the xarray index below */
	u64 len;              /* bytes registered */
	unsigned int first;   /* offset of the first byte in pages[0] */
	unsigned long npages;
	struct page **pages;
	struct mm_struct *mm; /* its pinned_vm counts the pages */
	struct rcu_head rcu;
};

/* A receive ring in a registered region (bip_kabi.h says how it works). */
struct bipk_ring {
	struct bipk_region *r; /* NULL: no ring */
	u64 offset;
	u32 slot_size, slots;
	u32 next;              /* the slot the next frame goes to */
	u32 seen;              /* frames seen, for drop_every= */
};

struct bipk_file {
	/* The job: set once under lock, then read-only (joined is set last,
	 * with release). */
	struct mutex lock;
	bool joined;
	u64 key[2];               /* secret, job key: the job's identity */
	u64 tag;                  /* the outer header's tag, from key */
	u64 endpoint;             /* random id peers name this file by */
	struct hlist_node ep_node; /* in main.c's table, once joined */

	struct xarray regions;    /* handle's low half -> bipk_region */
	u32 next_id;

	/* NIC memory (under lock): sized by the first mmap, locked memory of
	 * the process that made it. */
	void *nicmem;
	unsigned long nicmem_pages;
	struct mm_struct *nicmem_mm;

	/* Frame path: bind state changes under RTNL. */
	bool bound_once;
	struct net_device __rcu *dev;   /* NULL once the interface went */
	netdevice_tracker dev_tracker;
	struct list_head bound;         /* frame.c's list, while dev is set */
	struct packet_type pt;          /* receive handler, if a ring */
	u32 node;                       /* BIP_KABI_NODE_ANY or the filter */
	spinlock_t rx_lock;             /* handlers run on any CPU */
	struct bipk_ring rx;            /* under rx_lock */
	wait_queue_head_t rx_wait;

	atomic64_t cnt[BIP_CNT_N];
	struct rcu_head rcu;
};

extern atomic64_t bipk_cnt[BIP_CNT_N]; /* the module's counters */

static inline void bipk_count(struct bipk_file *f, enum bip_kabi_counter c,
			      u64 n)
{
	atomic64_add(n, &f->cnt[c]);
	atomic64_add(n, &bipk_cnt[c]);
}

/* Once true, the job fields stay as they are. */
static inline bool bipk_joined(struct bipk_file *f)
{
	return smp_load_acquire(&f->joined);
}

/* main.c */
int bipk_peer_region_get(struct bipk_file *f, u64 endpoint, u64 handle,
			 struct bipk_region **r_p);

/* mem.c */
extern unsigned long bipk_max_pinned;
/* npages more of mm's memory held by the device, within RLIMIT_MEMLOCK as
 * every long-term pin is (CAP_IPC_LOCK lifts it): 0 or -ENOMEM. mm is kept
 * until bipk_unlock, which may come from another process. */
int bipk_lock(struct mm_struct *mm, unsigned long npages);
void bipk_unlock(struct mm_struct *mm, unsigned long npages);
long bipk_reg(struct bipk_file *f, void __user *arg);
long bipk_dereg(struct bipk_file *f, void __user *arg);
long bipk_copy(struct bipk_file *f, void __user *arg);
struct bipk_region *bipk_region_get(struct bipk_file *f, u64 handle);
void bipk_region_put(struct bipk_region *r);
void bipk_regions_release(struct bipk_file *f);

/* Whether [off, off + len) lies in r. */
static inline bool bipk_in_region(const struct bipk_region *r, u64 off,
				  u64 len)
{
	return off <= r->len && len <= r->len - off;
}

/* The page holding byte off of r (inside it), and where in the page. */
static inline struct page *bipk_region_page(const struct bipk_region *r,
					    u64 off, unsigned int *in_page)
{
	u64 at = r->first + off;

	*in_page = offset_in_page(at);
	return r->pages[at >> PAGE_SHIFT];
}

/* nicmem.c */
extern unsigned long bipk_nicmem_max;
int bipk_mmap(struct file *file, struct vm_area_struct *vma);
void bipk_nicmem_release(struct bipk_file *f);

/* frame.c */
#define BIPK_SEND_MAX 64 /* frames per BIP_IOC_SEND */
void bipk_frame_open(struct bipk_file *f);
long bipk_bind(struct bipk_file *f, void __user *arg);
long bipk_send(struct bipk_file *f, void __user *arg);
__poll_t bipk_poll(struct file *file, poll_table *wait);
void bipk_frame_release(struct bipk_file *f);
int bipk_frame_init(void);
void bipk_frame_exit(void);

#endif
