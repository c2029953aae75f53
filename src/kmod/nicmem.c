// SPDX-License-Identifier: GPL-2.0
/*
 * nicmem.c - the emulated NIC's memory: a kernel buffer per open file that
 * user space maps. libbip keeps there the host-interface rings it shares
 * with the NIC program, so that program can later move into the kernel or
 * a daemon while the rings stay where they are. Like a registration, it
 * is memory the process cannot swap: it counts against RLIMIT_MEMLOCK.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

#include "bipk.h"

unsigned long bipk_nicmem_max = 4UL << 20;
module_param_named(nicmem_max, bipk_nicmem_max, ulong, 0644);
MODULE_PARM_DESC(nicmem_max, "Bytes of NIC memory one open file may map");

/*
 * The first mapping (at offset 0) sizes the area; later ones, in this
 * process or in another that holds the file, map the same pages. The
 * mappings hold the file, so release frees an area nobody maps.
 */
int bipk_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct bipk_file *f = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret;

	if (!bipk_joined(f))
		return -EBADFD;
	/* A private copy would no longer be the NIC's memory. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	mutex_lock(&f->lock);
	if (!f->nicmem) {
		ret = -EINVAL;
		if (vma->vm_pgoff || len > READ_ONCE(bipk_nicmem_max))
			goto unlock;
		ret = bipk_lock(current->mm, len >> PAGE_SHIFT);
		if (ret)
			goto unlock;
		f->nicmem = vmalloc_user(len);
		if (!f->nicmem) {
			bipk_unlock(current->mm, len >> PAGE_SHIFT);
			ret = -ENOMEM;
			goto unlock;
		}
		f->nicmem_pages = len >> PAGE_SHIFT;
		f->nicmem_mm = current->mm;
	}
	/* It refuses a range beyond the area. */
	ret = remap_vmalloc_range(vma, f->nicmem, vma->vm_pgoff);
unlock:
	mutex_unlock(&f->lock);
	return ret;
}

void bipk_nicmem_release(struct bipk_file *f)
{
	if (!f->nicmem)
		return;
	vfree(f->nicmem);
	bipk_unlock(f->nicmem_mm, f->nicmem_pages);
}
