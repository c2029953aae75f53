/*
 * no_malloc.c - preloaded (LD_PRELOAD) into a rank: once the program arms
 * it (no_malloc_arm, which faults.c finds with dlsym), malloc of exactly
 * one of the armed sizes fails as it does in a process out of memory;
 * every other malloc goes through. A receive without memory for its data
 * must fail, at both ends where its sender waits, rather than hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>

#define SIZES 4

extern void *__libc_malloc(size_t size);

static size_t armed[SIZES];

/* Fail malloc(size) from now on (up to SIZES sizes); 0 disarms them all. */
void no_malloc_arm(size_t size)
{
	for (int i = 0; i < SIZES; i++) {
		if (!size) {
			armed[i] = 0;
		} else if (!armed[i]) {
			armed[i] = size;
			return;
		}
	}
}

void *malloc(size_t size)
{
	for (int i = 0; i < SIZES && armed[i]; i++) {
		if (armed[i] == size) {
			errno = ENOMEM;
			return NULL;
		}
	}
	return __libc_malloc(size);
}
