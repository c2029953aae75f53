/*
 * wire/shm_mem.c - memory the processes of a host share, for one-sided
 * access by load and store (MPI windows): the shm wire's memory that peers
 * map, as a card's memory is mapped by the hosts on its bus.
 *
 * A region is an anonymous memory file (memfd) of its owner, sealed at its
 * size so that no process can shrink it under another's mapping (an access
 * past its end would be SIGBUS). A peer takes the owner's descriptor
 * through the owner's pidfd (pidfd_getfd: allowed exactly where
 * cross-memory attach is), checks it against the key, maps it and closes
 * it. No name ever appears in /dev/shm, so nothing can be squatted or left
 * behind: a region lives as long as its owner or a mapping holds it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bip_errno.h"
#include "log.h"
#include "shm.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438 /* Linux 5.6 */
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x8u /* Linux 6.3 */
#endif

/* A key is the owner's descriptor of the region and the low bits of the
 * region's inode: the key of a region since freed, whose descriptor number
 * went to another file, names nothing. */
#define KEY_FD_BITS 20
#define KEY_FD_MASK ((1u << KEY_FD_BITS) - 1)

static uint64_t region_key(int fd, ino_t ino)
{
	return (uint64_t)ino << KEY_FD_BITS | (uint64_t)fd;
}

static uintptr_t page_size(void)
{
	return (uintptr_t)sysconf(_SC_PAGESIZE);
}

static size_t page_round(size_t len)
{
	uintptr_t page = page_size();

	return (len + page - 1) & ~(page - 1);
}

/* An error of a system call as a BIP code, logged. */
static int sys_error(const char *what, size_t len, int err)
{
	bip_warn("shared memory of %zu bytes: %s: %s", len, what,
		 strerror(err));
	return err == ENOMEM || err == ENOSPC || err == EMFILE ||
			       err == ENFILE
		       ? -BIP_ENOMEM
		       : -BIP_ESYS;
}

/* A memory file, never executable where the kernel can say so (and does
 * not warn then). */
static int memory_file(void)
{
	const unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	int fd = memfd_create("bip-mem", flags | MFD_NOEXEC_SEAL);

	if (fd < 0 && errno == EINVAL) /* before Linux 6.3 */
		fd = memfd_create("bip-mem", flags);
	return fd;
}

int bipfw_shm_mem_alloc(size_t len, void **addr_p, uint64_t *key_p)
{
	struct stat st;
	void *addr;
	int fd, err;

	if (!len || len > SIZE_MAX / 2)
		return -BIP_EINVAL;
	fd = memory_file();
	if (fd < 0)
		return sys_error("memfd_create", len, errno);
	if (fd > (int)KEY_FD_MASK) {
		close(fd);
		return -BIP_EAGAIN; /* no key can name it */
	}
	/* Sealed before anyone can map it: its size is final. */
	if (ftruncate(fd, (off_t)page_round(len)) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ||
	    fstat(fd, &st))
		goto fail;
	addr = mmap(NULL, page_round(len), PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
	if (addr == MAP_FAILED)
		goto fail;
	*addr_p = addr;
	*key_p = region_key(fd, st.st_ino);
	return 0;
fail:
	err = errno;
	close(fd);
	return sys_error("setting up", len, err);
}

void bipfw_shm_mem_free(void *addr, size_t len, uint64_t key)
{
	if (addr)
		munmap(addr, page_round(len));
	close((int)(key & KEY_FD_MASK));
}

/* The peer's descriptor, if the key names a region of it at least end
 * bytes long: -1 and *rc set if not. */
static int region_fd(int pidfd, int peer, uint64_t key, uint64_t end,
		     int *rc)
{
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)(key & KEY_FD_MASK),
			      0);
	struct stat st;
	int seals;

	if (fd < 0) {
		int err = errno;

		/* EBADF: no such descriptor (a stale or forged key); the
		 * others: the kernel lets us have none of the peer's. */
		*rc = err == EBADF ? -BIP_EINVAL
		      : err == ESRCH ? -BIP_EPEERGONE
				     : -BIP_EAGAIN;
		bip_dbg("node %d's memory %#llx: pidfd_getfd: %s", peer,
			(unsigned long long)key, strerror(err));
		return -1;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || seals < 0 ||
	    !(seals & F_SEAL_SHRINK) ||
	    region_key((int)(key & KEY_FD_MASK), st.st_ino) != key ||
	    (uint64_t)st.st_size < end) {
		bip_warn("node %d's memory %#llx is not a region of %llu bytes",
			 peer, (unsigned long long)key,
			 (unsigned long long)end);
		close(fd);
		*rc = -BIP_EINVAL;
		return -1;
	}
	return fd;
}

int bipfw_shm_mem_map(int pidfd, int peer, uint64_t key, uint64_t off,
		      size_t len, void **addr_p)
{
	uint64_t lo = off & ~(uint64_t)(page_size() - 1);
	int fd, rc = 0, err;
	void *base;

	if (pidfd < 0)
		return -BIP_EAGAIN; /* no pidfd (kernels before 5.3) */
	if (!len || off > UINT64_MAX - len || off + len - lo > SIZE_MAX / 2)
		return -BIP_EINVAL;
	fd = region_fd(pidfd, peer, key, off + len, &rc);
	if (fd < 0)
		return rc;
	base = mmap(NULL, page_round((size_t)(off + len - lo)),
		    PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)lo);
	err = errno;
	close(fd);
	if (base == MAP_FAILED)
		return sys_error("mapping a peer's", len, err);
	*addr_p = (uint8_t *)base + (off - lo);
	return 0;
}

void bipfw_shm_mem_unmap(void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr & ~(page_size() - 1);

	munmap((void *)lo, page_round((uintptr_t)addr + len - lo));
}
