/*
 * unit.h - for the unit tests that run in one process: CHECK(cond, fmt,
 * ...) prints where and why a check failed and counts it, and the test
 * goes on; unit_result() reports the count and gives the exit status.
 */
#ifndef TEST_UNIT_H
#define TEST_UNIT_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__,       \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			failures++;                                            \
		}                                                              \
	} while (0)

/* "WHAT: all checks passed", or how many failed; 0 or 1 for exit. */
static inline int unit_result(const char *what)
{
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	else
		printf("%s: all checks passed\n", what);
	return failures != 0;
}

#endif
