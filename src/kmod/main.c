// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - the misc device /dev/bip: open and close, the job a file belongs
 * to, the counters, and the table of ioctls. Every open file is one
 * endpoint of one job; nothing but the information ioctl works before the
 * job is set, so every other operation is confined to the job's files.
 */
#include <linux/hashtable.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <crypto/algapi.h>

#include "bipk.h"

atomic64_t bipk_cnt[BIP_CNT_N];

/* Joined files by endpoint: where BIP_IOC_COPY finds its peer. Readers
 * hold rcu_read_lock or the lock; files are freed after a grace period. */
static DEFINE_HASHTABLE(bipk_endpoints, 8);
static DEFINE_SPINLOCK(bipk_endpoints_lock);

static struct bipk_file *bipk_endpoint_find(u64 endpoint)
{
	struct bipk_file *f;

	hash_for_each_possible_rcu(bipk_endpoints, f, ep_node, endpoint,
				   lockdep_is_held(&bipk_endpoints_lock))
		if (f->endpoint == endpoint)
			return f;
	return NULL;
}

int bipk_peer_region_get(struct bipk_file *f, u64 endpoint, u64 handle,
			 struct bipk_region **r_p)
{
	struct bipk_file *peer;
	int ret = 0;

	rcu_read_lock();
	peer = bipk_endpoint_find(endpoint);
	if (!peer) {
		ret = -ESRCH;
	} else if (crypto_memneq(peer->key, f->key, sizeof(f->key))) {
		ret = -EPERM;
	} else {
		*r_p = bipk_region_get(peer, handle);
		if (!*r_p)
			ret = -ENOENT;
	}
	rcu_read_unlock();
	return ret;
}

static long bipk_info(struct bipk_file *f, void __user *arg)
{
	struct bip_kabi_info i = {
		.version = BIP_KABI_VERSION,
		.page_size = PAGE_SIZE,
		.max_pinned = READ_ONCE(bipk_max_pinned),
		.nicmem_max = READ_ONCE(bipk_nicmem_max),
		.send_max = BIPK_SEND_MAX,
	};

	return copy_to_user(arg, &i, sizeof(i)) ? -EFAULT : 0;
}

/*
 * The tag is the one the udp and eth wires compute in user space (their
 * bipfw_dgram_init): SipHash-2-4 keyed by {secret, job key} over the eight
 * bytes "udp-tag\0", one little-endian word. Deriving it here means a
 * process that only saw the tag on a wire cannot act as the job.
 */
#define BIPK_TAG_WORD 0x006761742d706475ull /* "udp-tag\0" */

static long bipk_job(struct bipk_file *f, void __user *arg)
{
	struct bip_kabi_job j;
	siphash_key_t key;

	if (copy_from_user(&j, arg, sizeof(j)))
		return -EFAULT;
	/* A zeroed structure would put every careless caller in one job. */
	if (!j.secret)
		return -EINVAL;
	mutex_lock(&f->lock);
	if (f->joined) {
		mutex_unlock(&f->lock);
		return -EBUSY;
	}
	f->key[0] = key.key[0] = j.secret;
	f->key[1] = key.key[1] = j.job_key;
	f->tag = siphash_1u64(BIPK_TAG_WORD, &key);
	memzero_explicit(&key, sizeof(key));
	spin_lock(&bipk_endpoints_lock);
	do {
		f->endpoint = get_random_u64();
	} while (!f->endpoint || bipk_endpoint_find(f->endpoint));
	hash_add_rcu(bipk_endpoints, &f->ep_node, f->endpoint);
	spin_unlock(&bipk_endpoints_lock);
	smp_store_release(&f->joined, true);
	mutex_unlock(&f->lock);

	j.endpoint = f->endpoint;
	j.tag = f->tag;
	j.secret = 0;
	return copy_to_user(arg, &j, sizeof(j)) ? -EFAULT : 0;
}

static long bipk_stats(struct bipk_file *f, void __user *arg)
{
	struct bip_kabi_stats s = {};
	int i;

	for (i = 0; i < BIP_CNT_N; i++) {
		s.file[i] = atomic64_read(&f->cnt[i]);
		s.module[i] = atomic64_read(&bipk_cnt[i]);
	}
	return copy_to_user(arg, &s, sizeof(s)) ? -EFAULT : 0;
}

#define BIPK_IOCTL(cmd, fn) [_IOC_NR(cmd)] = { cmd, fn }

/* By ioctl number; only the first two work before the job is set. */
static const struct {
	unsigned int cmd;
	long (*fn)(struct bipk_file *f, void __user *arg);
} bipk_ioctls[] = {
	BIPK_IOCTL(BIP_IOC_INFO, bipk_info),
	BIPK_IOCTL(BIP_IOC_JOB, bipk_job),
	BIPK_IOCTL(BIP_IOC_REG, bipk_reg),
	BIPK_IOCTL(BIP_IOC_DEREG, bipk_dereg),
	BIPK_IOCTL(BIP_IOC_COPY, bipk_copy),
	BIPK_IOCTL(BIP_IOC_STATS, bipk_stats),
	BIPK_IOCTL(BIP_IOC_BIND, bipk_bind),
	BIPK_IOCTL(BIP_IOC_SEND, bipk_send),
};

static long bipk_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct bipk_file *f = file->private_data;
	unsigned int nr = _IOC_NR(cmd);

	if (nr >= ARRAY_SIZE(bipk_ioctls) || bipk_ioctls[nr].cmd != cmd)
		return -ENOTTY;
	if (nr > _IOC_NR(BIP_IOC_JOB) && !bipk_joined(f))
		return -EBADFD;
	return bipk_ioctls[nr].fn(f, (void __user *)arg);
}

static int bipk_open(struct inode *inode, struct file *file)
{
	struct bipk_file *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	xa_init_flags(&f->regions, XA_FLAGS_ALLOC1);
	bipk_frame_open(f);
	file->private_data = f;
	return 0;
}

/* The last reference to the file: the process closed it or died. */
static int bipk_release(struct inode *inode, struct file *file)
{
	struct bipk_file *f = file->private_data;

	if (f->joined) {
		spin_lock(&bipk_endpoints_lock);
		hash_del_rcu(&f->ep_node);
		spin_unlock(&bipk_endpoints_lock);
	}
	bipk_frame_release(f);
	bipk_regions_release(f);
	bipk_nicmem_release(f);
	mutex_destroy(&f->lock);
	/* A peer's copy may still be looking at it under RCU. */
	kfree_rcu(f, rcu);
	return 0;
}

static const struct file_operations bipk_fops = {
	.owner = THIS_MODULE,
	.open = bipk_open,
	.release = bipk_release,
	.unlocked_ioctl = bipk_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = bipk_mmap,
	.poll = bipk_poll,
	.llseek = noop_llseek,
};

/* Any user may open it: a job only reaches its own files, and the frame
 * path only the interfaces the administrator listed. */
static struct miscdevice bipk_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "bip",
	.fops = &bipk_fops,
	.mode = 0666,
};

static int __init bipk_init(void)
{
	int ret = bipk_frame_init();

	if (ret)
		return ret;
	ret = misc_register(&bipk_dev);
	if (ret)
		bipk_frame_exit();
	return ret;
}

static void __exit bipk_exit(void)
{
	misc_deregister(&bipk_dev);
	bipk_frame_exit();
}

module_init(bipk_init);
module_exit(bipk_exit);
MODULE_DESCRIPTION("BIP: registered memory, copy between processes, NIC memory, frames");
MODULE_LICENSE("GPL");
