/*
 * tune_coll.c - the collectives bipmpi-tune measures: on 2 ranks, back to
 * back, bcasts from rank 0 and alltoalls of 8-128 KiB (a rank's block),
 * each size over enough calls to take a few milliseconds.
 *
 *   tune_coll [scale]     (default 1: the calls at each size)
 *
 * Rank 0 prints one line per size: "bytes bcast_us alltoall_us", the
 * time of one call averaged over both ranks (as osu_bcast reports it).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN (8 * 1024)
#define MAX (128 * 1024)

static int rank;
static char *sbuf, *rbuf;

/* One call of the collective at n bytes. */
static void once(int alltoall, long n)
{
	if (alltoall)
		MPI_Alltoall(sbuf, (int)n, MPI_CHAR, rbuf, (int)n, MPI_CHAR,
			     MPI_COMM_WORLD);
	else
		MPI_Bcast(sbuf, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* us per call over iters calls, after a tenth as many to warm up (the
 * first of a communicator's collectives go by messages). */
static double per_call(int alltoall, long n, int iters)
{
	double t0 = 0, t, sum;

	for (int i = -iters / 10 - 10; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		once(alltoall, n);
	}
	t = (MPI_Wtime() - t0) * 1e6 / iters;
	MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	return sum / 2;
}

int main(int argc, char **argv)
{
	int size, scale = argc > 1 ? atoi(argv[1]) : 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || scale < 1) {
		if (rank == 0)
			fprintf(stderr, "tune_coll: 2 ranks and scale >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	sbuf = malloc(2 * MAX);
	rbuf = malloc(2 * MAX);
	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(sbuf, 1, 2 * MAX);
	memset(rbuf, 0, 2 * MAX);
	for (long n = MIN; n <= MAX; n *= 2) {
		int iters = scale * (int)(400 * MIN / n + 50);
		double bcast = per_call(0, n, iters);
		double alltoall = per_call(1, n, iters);

		if (rank == 0)
			printf("%ld %.3f %.3f\n", n, bcast, alltoall);
	}
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
