/*
 * no_populate.c - an LD_PRELOAD shim for the tests: madvise() with
 * MADV_POPULATE_WRITE fails with EINVAL, as on kernels before 5.14, so the
 * shm wire's path for those kernels (whole rings reserved at connect) runs
 * here too. Every other advice goes to the kernel unchanged.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#define POPULATE_WRITE 23 /* MADV_POPULATE_WRITE, Linux 5.14 */

int madvise(void *addr, size_t len, int advice)
{
	if (advice == POPULATE_WRITE) {
		errno = EINVAL;
		return -1;
	}
	return (int)syscall(SYS_madvise, addr, len, advice);
}
