// SPDX-License-Identifier: GPL-2.0
/*
 * mem.c - memory registration and the kernel-assisted copy: user pages are
 * pinned once and named by a handle, then copied between page by page, the
 * work the DMA engine of the emulated NIC does. Pinned pages count against
 * the owner's RLIMIT_MEMLOCK (in mm->pinned_vm, as RDMA counts its
 * registrations) and against max_pinned= per file.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "bipk.h"

unsigned long bipk_max_pinned = 1UL << 30;
module_param_named(max_pinned, bipk_max_pinned, ulong, 0644);
MODULE_PARM_DESC(max_pinned,
		 "Bytes of pages one open file may pin (within RLIMIT_MEMLOCK)");

#define BIPK_PIN_BATCH 1024 /* pages per pin_user_pages_fast call */

struct bipk_region *bipk_region_get(struct bipk_file *f, u64 handle)
{
	struct bipk_region *r;

	rcu_read_lock();
	r = xa_load(&f->regions, (u32)handle);
	if (r && (READ_ONCE(r->handle) != handle ||
		  !refcount_inc_not_zero(&r->ref)))
		r = NULL;
	rcu_read_unlock();
	return r;
}

void bipk_region_put(struct bipk_region *r)
{
	if (!refcount_dec_and_test(&r->ref))
		return;
	/* The NIC may have written any of them. */
	unpin_user_pages_dirty_lock(r->pages, r->npages, true);
	bipk_unlock(r->mm, r->npages);
	kvfree(r->pages);
	/* A lookup may still hold the pointer under RCU. */
	kfree_rcu(r, rcu);
}

int bipk_lock(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	return 0;
}

void bipk_unlock(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
	mmdrop(mm);
}

/* The file's share of max_pinned=; its counter is what the file has
 * registered. */
static int bipk_charge(struct bipk_file *f, u64 bytes)
{
	atomic64_t *pinned = &f->cnt[BIP_CNT_PINNED_BYTES];

	if (atomic64_add_return(bytes, pinned) > READ_ONCE(bipk_max_pinned)) {
		atomic64_sub(bytes, pinned);
		return -ENOMEM;
	}
	atomic64_add(bytes, &bipk_cnt[BIP_CNT_PINNED_BYTES]);
	return 0;
}

static void bipk_uncharge(struct bipk_file *f, u64 bytes)
{
	atomic64_sub(bytes, &f->cnt[BIP_CNT_PINNED_BYTES]);
	atomic64_sub(bytes, &bipk_cnt[BIP_CNT_PINNED_BYTES]);
}

/* r left the file's table: the file no longer answers for its pages. */
static void bipk_region_drop(struct bipk_file *f, struct bipk_region *r)
{
	bipk_uncharge(f, (u64)r->npages << PAGE_SHIFT);
	bipk_region_put(r);
}

static int bipk_pin(struct bipk_region *r, unsigned long start)
{
	unsigned long done;
	int ret;

	for (done = 0; done < r->npages; done += ret) {
		ret = pin_user_pages_fast(start + (done << PAGE_SHIFT),
					  min_t(unsigned long, r->npages - done,
						BIPK_PIN_BATCH),
					  FOLL_WRITE | FOLL_LONGTERM,
					  r->pages + done);
		if (ret <= 0) {
			unpin_user_pages(r->pages, done);
			return ret ?: -EFAULT;
		}
	}
	return 0;
}

long bipk_reg(struct bipk_file *f, void __user *arg)
{
	struct bip_kabi_reg u;
	struct bipk_region *r;
	unsigned long npages;
	u32 id;
	int ret;

	if (copy_from_user(&u, arg, sizeof(u)))
		return -EFAULT;
	if (u.flags || u.pad || !u.len || u.addr + u.len < u.addr)
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(u.addr), u.len))
		return -EFAULT;
	/* access_ok bounds addr + len by the top of user space: no overflow. */
	npages = (PAGE_ALIGN(u.addr + u.len) - (u.addr & PAGE_MASK)) >>
		 PAGE_SHIFT;
	ret = bipk_charge(f, (u64)npages << PAGE_SHIFT);
	if (ret)
		return ret;
	ret = bipk_lock(current->mm, npages);
	if (ret)
		goto uncharge;
	ret = -ENOMEM;
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		goto unaccount;
	r->pages = kvmalloc_array(npages, sizeof(*r->pages), GFP_KERNEL_ACCOUNT);
	if (!r->pages)
		goto free;
	r->npages = npages;
	r->first = offset_in_page(u.addr);
	r->len = u.len;
	ret = bipk_pin(r, u.addr & PAGE_MASK);
	if (ret)
		goto free;
	refcount_set(&r->ref, 1);
	r->mm = current->mm;
	ret = xa_alloc_cyclic(&f->regions, &id, r, xa_limit_32b, &f->next_id,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		bipk_region_drop(f, r);
		return ret;
	}
	/* Until this store no handle matches: the random half guards
	 * against an index reused after a deregistration. */
	WRITE_ONCE(r->handle, (u64)get_random_u32() << 32 | id);
	u.handle = r->handle;
	if (copy_to_user(arg, &u, sizeof(u))) {
		if (xa_erase(&f->regions, id) == r)
			bipk_region_drop(f, r);
		return -EFAULT;
	}
	return 0;

free:
	kvfree(r->pages);
	kfree(r);
unaccount:
	bipk_unlock(current->mm, npages);
uncharge:
	bipk_uncharge(f, (u64)npages << PAGE_SHIFT);
	return ret;
}

long bipk_dereg(struct bipk_file *f, void __user *arg)
{
	struct bipk_region *r;
	u64 handle;
	int ret = 0;

	if (get_user(handle, (u64 __user *)arg))
		return -EFAULT;
	xa_lock(&f->regions);
	r = xa_load(&f->regions, (u32)handle);
	if (!r || r->handle != handle)
		ret = -ENOENT;
	else if (r == READ_ONCE(f->rx.r))
		ret = -EBUSY; /* the receive ring's, until close */
	else
		__xa_erase(&f->regions, (u32)handle);
	xa_unlock(&f->regions);
	if (!ret)
		bipk_region_drop(f, r);
	return ret;
}

void bipk_regions_release(struct bipk_file *f)
{
	struct bipk_region *r;
	unsigned long id;

	xa_for_each(&f->regions, id, r) {
		xa_erase(&f->regions, id);
		bipk_region_drop(f, r);
	}
	xa_destroy(&f->regions);
}

/* len bytes from src at soff to dst at doff, both ranges checked. */
static void bipk_copy_pages(struct bipk_region *dst, u64 doff,
			    struct bipk_region *src, u64 soff, u64 len)
{
	while (len) {
		unsigned int din, sin;
		struct page *dp = bipk_region_page(dst, doff, &din);
		struct page *sp = bipk_region_page(src, soff, &sin);
		size_t n = min3(len, (u64)(PAGE_SIZE - din),
				(u64)(PAGE_SIZE - sin));
		char *d = kmap_local_page(dp);
		char *s = kmap_local_page(sp);

		memcpy(d + din, s + sin, n);
		kunmap_local(s);
		kunmap_local(d);
		doff += n;
		soff += n;
		len -= n;
		cond_resched();
	}
}

long bipk_copy(struct bipk_file *f, void __user *arg)
{
	struct bipk_region *mine, *peer;
	struct bip_kabi_copy c;
	int ret;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	if ((c.flags != BIP_COPY_READ && c.flags != BIP_COPY_WRITE) || c.pad)
		return -EINVAL;
	mine = bipk_region_get(f, c.handle);
	if (!mine)
		return -ENOENT;
	ret = bipk_peer_region_get(f, c.peer, c.peer_handle, &peer);
	if (ret)
		goto put_mine;
	if (!bipk_in_region(mine, c.offset, c.len) ||
	    !bipk_in_region(peer, c.peer_offset, c.len)) {
		ret = -ERANGE;
		goto put_peer;
	}
	if (c.flags == BIP_COPY_READ)
		bipk_copy_pages(mine, c.offset, peer, c.peer_offset, c.len);
	else
		bipk_copy_pages(peer, c.peer_offset, mine, c.offset, c.len);
	if (c.len) {
		bipk_count(f, BIP_CNT_COPIES, 1);
		bipk_count(f, BIP_CNT_COPY_BYTES, c.len);
	}
put_peer:
	bipk_region_put(peer);
put_mine:
	bipk_region_put(mine);
	return ret;
}
