/*
 * tune_stream.c - the streams bipmpi-tune measures: between ranks 0 and 1,
 * windows of 64 non-blocking messages of 8-64 KiB, one way (then a one-byte
 * answer) and both ways at once, each over REPS windows.
 *
 *   tune_stream [reps]     (default 100)
 *
 * Rank 0 prints one line per size: "bytes one_way_MB/s both_ways_MB/s".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define MAX (64 * 1024)

static int rank;
static char *sbuf, *rbuf;

/* One window of n-byte messages, rank 0 to rank 1 (both: each way, every
 * receive posted before the sends, as osu_bibw does); returns its seconds
 * as rank 0 saw them. Windows follow each other with no barrier between:
 * a stream. */
static double window(long n, int both)
{
	MPI_Request rq[2 * WINDOW];
	MPI_Status st[2 * WINDOW];
	int peer = 1 - rank, k = 0;
	double t0 = MPI_Wtime();
	char ack = 0;

	if (both || rank == 1)
		for (int i = 0; i < WINDOW; i++)
			MPI_Irecv(rbuf + (size_t)i * n, (int)n, MPI_CHAR, peer,
				  i, MPI_COMM_WORLD, &rq[k++]);
	if (both || rank == 0)
		for (int i = 0; i < WINDOW; i++)
			MPI_Isend(sbuf + (size_t)i * n, (int)n, MPI_CHAR, peer,
				  i, MPI_COMM_WORLD, &rq[k++]);
	MPI_Waitall(k, rq, st);
	if (rank == 1)
		MPI_Send(&ack, 1, MPI_CHAR, 0, WINDOW, MPI_COMM_WORLD);
	else
		MPI_Recv(&ack, 1, MPI_CHAR, 1, WINDOW, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	return MPI_Wtime() - t0;
}

/* MB/s over reps windows (after two to warm up): their mean, what a
 * program streaming for a while sees, not the luckiest window. */
static double rate(long n, int both, int reps)
{
	double t = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 0; r < reps + 2; r++) {
		double s = window(n, both);

		if (r >= 2)
			t += s;
	}
	return (both ? 2.0 : 1.0) * WINDOW * n * reps / t / 1e6;
}

int main(int argc, char **argv)
{
	int size, reps = argc > 1 ? atoi(argv[1]) : 100;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || reps < 1) {
		if (rank == 0)
			fprintf(stderr, "tune_stream: 2 ranks and reps >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	sbuf = malloc((size_t)WINDOW * MAX);
	rbuf = malloc((size_t)WINDOW * MAX);
	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(sbuf, 1, (size_t)WINDOW * MAX);
	memset(rbuf, 0, (size_t)WINDOW * MAX);
	for (long n = 8192; n <= MAX; n *= 2) {
		double one = rate(n, 0, reps), two = rate(n, 1, reps);

		if (rank == 0)
			printf("%ld %.0f %.0f\n", n, one, two);
	}
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
