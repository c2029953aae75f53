/*
 * kdev.c - /dev/bip for the NIC program: open the device, check that it
 * speaks our ABI, join the job (the kernel confines the file to the job's
 * other files), and map NIC memory. Every failure leaves the file closed
 * and says why: the NIC program then does as it does without the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bip_errno.h"
#include "kdev.h"
#include "log.h"

/* Open path and read what the module is; fd or -1 with why set. */
static int open_checked(const char *path, struct bip_kabi_info *info,
			char *why, size_t len)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		snprintf(why, len, "absent (%s: %s)", path, strerror(errno));
		return -1;
	}
	if (ioctl(fd, BIP_IOC_INFO, info) < 0) {
		snprintf(why, len, "%s does not answer BIP_IOC_INFO (%s)", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	if (info->version != BIP_KABI_VERSION) {
		snprintf(why, len, "%s speaks ABI %u, this library %d", path,
			 info->version, BIP_KABI_VERSION);
		close(fd);
		return -1;
	}
	return fd;
}

int bipfw_kdev_open(struct bipfw_kdev *k, const char *path, uint64_t secret,
		    uint64_t job_key)
{
	struct bip_kabi_job job = { .secret = secret, .job_key = job_key };

	memset(k, 0, sizeof(*k));
	k->fd = open_checked(path, &k->info, k->why, sizeof(k->why));
	if (k->fd < 0)
		return -BIP_ESYS;
	if (ioctl(k->fd, BIP_IOC_JOB, &job) < 0) {
		snprintf(k->why, sizeof(k->why), "%s refused the job (%s)",
			 path, strerror(errno));
		close(k->fd);
		k->fd = -1;
		return -BIP_ESYS;
	}
	k->endpoint = job.endpoint;
	snprintf(k->why, sizeof(k->why), "%s, ABI %u", path, k->info.version);
	return 0;
}

void bipfw_kdev_why_add(struct bipfw_kdev *k, const char *fmt, ...)
{
	size_t at = strlen(k->why);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->why + at, sizeof(k->why) - at, fmt, ap);
	va_end(ap);
}

void *bipfw_kdev_nicmem(struct bipfw_kdev *k, size_t len)
{
	void *p;

	if (k->fd < 0 || k->nicmem)
		return NULL;
	if (len > k->info.nicmem_max) {
		bipfw_kdev_why_add(k, "; NIC memory unused: %zu KiB needed, nicmem_max is "
			"%llu KiB", len >> 10,
			(unsigned long long)k->info.nicmem_max >> 10);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, k->fd, 0);
	if (p == MAP_FAILED) {
		bipfw_kdev_why_add(k, "; NIC memory unused: mmap of %zu KiB: %s",
			len >> 10, strerror(errno));
		return NULL;
	}
	k->nicmem = p;
	k->nicmem_len = len;
	bipfw_kdev_why_add(k, "; host interface in %zu KiB of NIC memory", len >> 10);
	return p;
}

int bipfw_kdev_reg(struct bipfw_kdev *k, const void *addr, size_t len,
		   uint64_t *handle)
{
	struct bip_kabi_reg r = { .addr = (uint64_t)(uintptr_t)addr,
				  .len = len };

	if (ioctl(k->fd, BIP_IOC_REG, &r) < 0)
		return errno == ENOMEM ? -BIP_ENOMEM : -BIP_ESYS;
	*handle = r.handle;
	return 0;
}

void bipfw_kdev_dereg(struct bipfw_kdev *k, uint64_t handle)
{
	if (ioctl(k->fd, BIP_IOC_DEREG, &handle) < 0)
		bip_warn("/dev/bip: deregistering region %#" PRIx64 ": %s",
			 handle, strerror(errno));
}

int bipfw_kdev_copy(struct bipfw_kdev *k, const struct bip_kabi_copy *c)
{
	if (ioctl(k->fd, BIP_IOC_COPY, c) == 0)
		return 0;
	bip_warn("/dev/bip: %s %" PRIu64 " bytes %s endpoint %#" PRIx64
		 " failed: %s", c->flags == BIP_COPY_READ ? "reading" : "writing",
		 c->len, c->flags == BIP_COPY_READ ? "from" : "to", c->peer,
		 strerror(errno));
	return -BIP_ESYS;
}

void bipfw_kdev_close(struct bipfw_kdev *k)
{
	if (k->nicmem)
		munmap(k->nicmem, k->nicmem_len);
	if (k->fd >= 0)
		close(k->fd);
	k->nicmem = NULL;
	k->fd = -1;
}

int bipfw_kdev_probe(const char *path, char *why, size_t len)
{
	struct bip_kabi_info info;
	int fd = open_checked(path, &info, why, len);

	if (fd < 0)
		return -BIP_ESYS;
	snprintf(why, len, "%s, ABI %u: pins up to %llu MiB a file, NIC memory "
		 "up to %llu KiB", path, info.version,
		 (unsigned long long)info.max_pinned >> 20,
		 (unsigned long long)info.nicmem_max >> 10);
	close(fd);
	return 0;
}
