/*
 * check.h - for the MPI test programs: CHECK(cond, fmt, ...) prints the
 * rank (an int `rank` in scope), the line and the message, then aborts the
 * job, when cond is false.
 */
#ifndef TEST_NETMOD_CHECK_H
#define TEST_NETMOD_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "rank %d: FAILED line %d: ", rank,     \
				__LINE__);                                     \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			MPI_Abort(MPI_COMM_WORLD, 1);                          \
		}                                                              \
	} while (0)

#endif
