// SPDX-License-Identifier: GPL-2.0
/*
 * frame.c - the eth wire's frame path for processes without CAP_NET_RAW. A
 * file bound to an interface the administrator allows (ifaces=) sends
 * frames whose Ethernet header, EtherType (one of BIP's two) and outer
 * header with the job's tag the kernel writes itself, and receives only
 * frames that carry its job's tag, into a ring in its registered memory.
 * So the device grants no more than a packet socket of BIP's EtherTypes
 * would, confined to the job.
 */
#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>

#include "bipk.h"

static char *bipk_ifaces = "";
module_param_named(ifaces, bipk_ifaces, charp, 0444);
MODULE_PARM_DESC(ifaces,
		 "Interfaces files may bind to, comma-separated (empty: none)");

static unsigned int bipk_drop_every;
module_param_named(drop_every, bipk_drop_every, uint, 0644);
MODULE_PARM_DESC(drop_every,
		 "Debug: drop every Nth frame each file would receive (0: none)");

/* Files bound to an interface, under RTNL: the notifier unbinds them when
 * their interface goes. */
static LIST_HEAD(bipk_bound);

static bool bipk_iface_allowed(const char *name)
{
	const char *p = bipk_ifaces;
	size_t n = strlen(name);

	while (p && *p) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == n && !strncmp(p, name, n))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

static bool bipk_ethertype_ok(u16 type)
{
	return type == BIP_ETHERTYPE || type == BIP_ETHERTYPE_LIVE;
}

void bipk_frame_open(struct bipk_file *f)
{
	INIT_LIST_HEAD(&f->bound);
	spin_lock_init(&f->rx_lock);
	init_waitqueue_head(&f->rx_wait);
}

/* The header of slot i, mapped (kunmap_local it): it never straddles a
 * page, its address being a multiple of BIP_KABI_ALIGN. */
static struct bip_kabi_slot *bipk_slot_map(const struct bipk_ring *rx, u32 i)
{
	unsigned int in;
	struct page *pg = bipk_region_page(rx->r, rx->offset +
						  (u64)i * rx->slot_size, &in);

	return kmap_local_page(pg) + in;
}

/*
 * A frame into the next slot, from its outer header on: only into a slot
 * user space gave back, and the status last, so user space sees a whole
 * frame or none. The data may cross pages of the region.
 */
static bool bipk_ring_put(struct bipk_ring *rx, const struct sk_buff *skb)
{
	u64 at = rx->offset + (u64)rx->next * rx->slot_size +
		 sizeof(struct bip_kabi_slot);
	struct bip_kabi_slot *s;
	unsigned int done, in, n;

	if (skb->len > rx->slot_size - sizeof(*s))
		return false;
	s = bipk_slot_map(rx, rx->next);
	if (smp_load_acquire(&s->status) != BIP_SLOT_FREE) {
		kunmap_local(s);
		return false;
	}
	for (done = 0; done < skb->len; done += n) {
		struct page *pg = bipk_region_page(rx->r, at + done, &in);
		char *p = kmap_local_page(pg);

		n = min_t(unsigned int, skb->len - done, PAGE_SIZE - in);
		skb_copy_bits(skb, done, p + in, n);
		kunmap_local(p);
	}
	s->len = skb->len;
	s->ethertype = ntohs(skb->protocol);
	ether_addr_copy(s->src, eth_hdr(skb)->h_source);
	smp_store_release(&s->status, BIP_SLOT_FULL);
	kunmap_local(s);
	rx->next = rx->next + 1 == rx->slots ? 0 : rx->next + 1;
	return true;
}

/* Receive handler for the file's EtherType on its interface (softirq). */
static int bipk_rcv(struct sk_buff *skb, struct net_device *dev,
		    struct packet_type *pt, struct net_device *orig_dev)
{
	struct bipk_file *f = container_of(pt, struct bipk_file, pt);
	unsigned int every = READ_ONCE(bipk_drop_every);
	struct bip_outer_hdr oh;
	bool put;

	/* Not for this host, or too short to be BIP's. */
	if (skb->pkt_type == PACKET_OTHERHOST ||
	    !skb_mac_header_was_set(skb) ||
	    skb_copy_bits(skb, 0, &oh, sizeof(oh)))
		goto drop;
	if (oh.tag != f->tag) {
		bipk_count(f, BIP_CNT_FRAMES_FOREIGN, 1);
		goto drop;
	}
	/* A packet for another process of the job on this host. */
	if (oh.magic == BIP_OUTER_MAGIC && f->node != BIP_KABI_NODE_ANY &&
	    oh.node != f->node)
		goto drop;
	spin_lock(&f->rx_lock);
	put = !(every && ++f->rx.seen % every == 0) &&
	      bipk_ring_put(&f->rx, skb);
	spin_unlock(&f->rx_lock);
	if (!put) {
		bipk_count(f, BIP_CNT_FRAMES_DROPPED, 1);
		goto drop;
	}
	bipk_count(f, BIP_CNT_FRAMES_RECEIVED, 1);
	bipk_count(f, BIP_CNT_BYTES_RECEIVED, skb->len);
	if (wq_has_sleeper(&f->rx_wait))
		wake_up_interruptible_poll(&f->rx_wait, EPOLLIN | EPOLLRDNORM);
	consume_skb(skb);
	return NET_RX_SUCCESS;
drop:
	kfree_skb(skb);
	return NET_RX_DROP;
}

/* The ring bind asks for in *rx (rx->r NULL: none), checked against its
 * region, every slot free. */
static int bipk_ring_get(struct bipk_file *f, const struct bip_kabi_bind *b,
			 struct bipk_ring *rx)
{
	u32 i;

	*rx = (struct bipk_ring){ .offset = b->ring_offset,
				  .slot_size = b->slot_size,
				  .slots = b->slots };
	if (!b->ring)
		return b->ring_offset || b->slot_size || b->slots ? -EINVAL : 0;
	if (!b->slots || !b->slot_size || b->slot_size % BIP_KABI_ALIGN)
		return -EINVAL;
	rx->r = bipk_region_get(f, b->ring);
	if (!rx->r)
		return -ENOENT;
	if (!bipk_in_region(rx->r, rx->offset, (u64)rx->slot_size * rx->slots) ||
	    (rx->r->first + rx->offset) % BIP_KABI_ALIGN) {
		bipk_region_put(rx->r);
		return -ERANGE;
	}
	for (i = 0; i < rx->slots; i++) {
		struct bip_kabi_slot *s = bipk_slot_map(rx, i);

		WRITE_ONCE(s->status, BIP_SLOT_FREE);
		kunmap_local(s);
		cond_resched();
	}
	return 0;
}

long bipk_bind(struct bipk_file *f, void __user *arg)
{
	struct bip_kabi_bind b;
	struct net_device *dev;
	struct bipk_ring rx;
	int ret;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (b.pad || !bipk_ethertype_ok(b.ethertype) ||
	    strnlen(b.ifname, sizeof(b.ifname)) == sizeof(b.ifname))
		return -EINVAL;
	if (!bipk_iface_allowed(b.ifname))
		return -EPERM;
	ret = bipk_ring_get(f, &b, &rx);
	if (ret)
		return ret;
	rtnl_lock();
	ret = -EBUSY;
	if (f->bound_once)
		goto unlock;
	ret = -ENODEV;
	dev = __dev_get_by_name(current->nsproxy->net_ns, b.ifname);
	if (!dev)
		goto unlock;
	ret = -EINVAL;
	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN)
		goto unlock;
	WRITE_ONCE(f->bound_once, true);
	f->node = b.node;
	spin_lock_bh(&f->rx_lock);
	f->rx = rx;
	spin_unlock_bh(&f->rx_lock);
	netdev_hold(dev, &f->dev_tracker, GFP_KERNEL);
	rcu_assign_pointer(f->dev, dev);
	list_add(&f->bound, &bipk_bound);
	if (rx.r) {
		f->pt.type = htons(b.ethertype);
		f->pt.dev = dev;
		f->pt.func = bipk_rcv;
		dev_add_pack(&f->pt);
	}
	ether_addr_copy(b.mac, dev->dev_addr);
	b.mtu = dev->mtu;
	rtnl_unlock();
	return copy_to_user(arg, &b, sizeof(b)) ? -EFAULT : 0;
unlock:
	rtnl_unlock();
	if (rx.r)
		bipk_region_put(rx.r);
	return ret;
}

/* Under RTNL. The ring stays until close: user space may still read it. */
static void bipk_unbind(struct bipk_file *f)
{
	struct net_device *dev = rtnl_dereference(f->dev);

	if (!dev)
		return;
	if (f->rx.r)
		__dev_remove_pack(&f->pt);
	RCU_INIT_POINTER(f->dev, NULL);
	list_del(&f->bound);
	/* No handler runs, and no sender is between reading f->dev and
	 * taking its own reference. */
	synchronize_net();
	netdev_put(dev, &f->dev_tracker);
	wake_up_interruptible_poll(&f->rx_wait, EPOLLHUP);
}

void bipk_frame_release(struct bipk_file *f)
{
	if (!f->bound_once)
		return;
	rtnl_lock();
	bipk_unbind(f);
	rtnl_unlock();
	if (f->rx.r)
		bipk_region_put(f->rx.r);
}

static int bipk_send_one(struct bipk_file *f, struct net_device *dev,
			 const struct bip_kabi_frame *fr)
{
	unsigned int hlen = LL_RESERVED_SPACE(dev);
	struct bip_outer_hdr *oh;
	struct sk_buff *skb;
	int ret;

	if ((fr->magic != BIP_OUTER_MAGIC && fr->magic != BIP_OUTER_PROBE &&
	     fr->magic != BIP_OUTER_ALIVE) || !bipk_ethertype_ok(fr->ethertype))
		return -EINVAL;
	if ((u64)fr->len + sizeof(*oh) > READ_ONCE(dev->mtu))
		return -EMSGSIZE;
	skb = alloc_skb(hlen + sizeof(*oh) + fr->len + dev->needed_tailroom,
			GFP_KERNEL);
	if (!skb)
		return -ENOBUFS;
	skb_reserve(skb, hlen);
	skb_reset_network_header(skb);
	oh = skb_put(skb, sizeof(*oh));
	oh->magic = fr->magic;
	oh->node = fr->node;
	oh->tag = f->tag;
	if (copy_from_user(skb_put(skb, fr->len), u64_to_user_ptr(fr->buf),
			   fr->len)) {
		kfree_skb(skb);
		return -EFAULT;
	}
	if (!(dev->flags & IFF_UP)) {
		kfree_skb(skb);
		return -ENETDOWN;
	}
	skb->dev = dev;
	skb->protocol = htons(fr->ethertype);
	if (dev_hard_header(skb, dev, fr->ethertype, fr->dst, NULL,
			    skb->len) < 0) {
		kfree_skb(skb);
		return -EINVAL;
	}
	ret = dev_queue_xmit(skb);
	if (ret > 0)
		ret = net_xmit_errno(ret);
	if (ret)
		return ret;
	bipk_count(f, BIP_CNT_FRAMES_SENT, 1);
	bipk_count(f, BIP_CNT_BYTES_SENT, sizeof(*oh) + fr->len);
	return 0;
}

long bipk_send(struct bipk_file *f, void __user *arg)
{
	struct bip_kabi_frame __user *frames;
	struct net_device *dev;
	struct bip_kabi_send s;
	u32 i;
	int ret = 0;

	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;
	if (s.pad || !s.count || s.count > BIPK_SEND_MAX)
		return -EINVAL;
	rcu_read_lock();
	dev = rcu_dereference(f->dev);
	if (dev)
		dev_hold(dev);
	rcu_read_unlock();
	if (!dev)
		return READ_ONCE(f->bound_once) ? -ENODEV : -ENOTCONN;
	frames = u64_to_user_ptr(s.frames);
	for (i = 0; i < s.count; i++) {
		struct bip_kabi_frame fr;

		ret = -EFAULT;
		if (copy_from_user(&fr, frames + i, sizeof(fr)))
			break;
		ret = bipk_send_one(f, dev, &fr);
		if (ret)
			break;
	}
	dev_put(dev);
	return i ? i : ret;
}

__poll_t bipk_poll(struct file *file, poll_table *wait)
{
	struct bipk_file *f = file->private_data;
	__poll_t mask = 0;

	if (!bipk_joined(f))
		return EPOLLERR;
	poll_wait(file, &f->rx_wait, wait);
	spin_lock_bh(&f->rx_lock);
	/* Slots fill and are freed in turn: the one filled last is full
	 * while any frame waits. */
	if (f->rx.r) {
		struct bip_kabi_slot *s =
			bipk_slot_map(&f->rx, (f->rx.next ?: f->rx.slots) - 1);

		if (READ_ONCE(s->status) == BIP_SLOT_FULL)
			mask |= EPOLLIN | EPOLLRDNORM;
		kunmap_local(s);
	}
	spin_unlock_bh(&f->rx_lock);
	if (rcu_access_pointer(f->dev))
		mask |= EPOLLOUT | EPOLLWRNORM;
	else if (READ_ONCE(f->bound_once))
		mask |= EPOLLHUP; /* the interface went */
	return mask;
}

static int bipk_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct bipk_file *f, *tmp;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;
	list_for_each_entry_safe(f, tmp, &bipk_bound, bound)
		if (rtnl_dereference(f->dev) == dev)
			bipk_unbind(f);
	return NOTIFY_DONE;
}

static struct notifier_block bipk_netdev_notifier = {
	.notifier_call = bipk_netdev_event,
};

int bipk_frame_init(void)
{
	return register_netdevice_notifier(&bipk_netdev_notifier);
}

void bipk_frame_exit(void)
{
	unregister_netdevice_notifier(&bipk_netdev_notifier);
}
