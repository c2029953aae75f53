/*
 * mpi_coll.c - OSU-style collective timings on MPI_COMM_WORLD, and a
 * pipelined stream between ranks 0 and 1.
 *
 *   mpi_coll [max-bytes]     (default 1 MiB)
 *
 * allreduce (MPI_SUM of doubles) and bcast of 8 B .. MAX, alltoall of 8 B
 * .. min(MAX, 64 KiB) per rank pair (the sizes in sizes[]): the time of one call
 * averaged over the iterations, then over the ranks (as osu_allreduce
 * reports it). The stream: rank 0 sends STREAM messages of a size with
 * blocking sends, back to back, to rank 1, which starts receiving only
 * after a short computation (as NAS LU's neighbour does), then answers
 * with one byte; the time per message.
 *
 * Prints one line per measurement: "NAME BYTES USEC".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM 256

static const long sizes[] = { 8, 64, 512, 4096, 32768, 65536, 262144,
			      1048576 };
static int rank, size;

static int iterations(long n)
{
	return n <= 4096 ? 2000 : n <= 65536 ? 400 : 50;
}

/* The average over the ranks of one rank's time per call, in us. */
static double per_call(double t0, int iters)
{
	double t = (MPI_Wtime() - t0) * 1e6 / iters, sum;

	MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	return sum / size;
}

static double allreduce(double *s, double *r, long n)
{
	int count = (int)(n / sizeof(double)), iters = iterations(n);
	double t0 = 0;

	for (int i = -iters / 10; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		MPI_Allreduce(s, r, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	return per_call(t0, iters);
}

static double bcast(double *s, long n)
{
	int iters = iterations(n);
	double t0 = 0;

	for (int i = -iters / 10; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		MPI_Bcast(s, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
	}
	return per_call(t0, iters);
}

static double alltoall(double *s, double *r, long n)
{
	int iters = iterations(n * size);
	double t0 = 0;

	for (int i = -iters / 10; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		MPI_Alltoall(s, (int)n, MPI_CHAR, r, (int)n, MPI_CHAR,
			     MPI_COMM_WORLD);
	}
	return per_call(t0, iters);
}

/* Spin about US microseconds without calling MPI. */
static void compute(double us)
{
	double t0 = MPI_Wtime();

	while ((MPI_Wtime() - t0) * 1e6 < us)
		;
}

static double stream(char *buf, long n)
{
	int iters = 50;
	double t0 = 0;

	for (int i = -5; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank == 0) {
			for (int m = 0; m < STREAM; m++)
				MPI_Send(buf, (int)n, MPI_CHAR, 1, 7,
					 MPI_COMM_WORLD);
			MPI_Recv(buf, 1, MPI_CHAR, 1, 8, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			compute(20);
			for (int m = 0; m < STREAM; m++)
				MPI_Recv(buf, (int)n, MPI_CHAR, 0, 7,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 1, MPI_CHAR, 0, 8, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / ((double)iters * STREAM);
}

int main(int argc, char **argv)
{
	long max = argc > 1 ? atol(argv[1]) : 1L << 20, a2a, bytes;
	double *s, *r, t, t0;

	MPI_Init(&argc, &argv);
	t0 = MPI_Wtime();
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2 || max < 8) {
		fprintf(stderr, "mpi_coll: needs 2 ranks and 8 bytes\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	a2a = max < 65536 ? max : 65536;
	bytes = max > a2a * size ? max : a2a * size;
	s = malloc(bytes);
	r = malloc(bytes);
	if (!s || !r) {
		fprintf(stderr, "mpi_coll: no memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(s, 0, bytes);
	memset(r, 0, bytes);
	/* Let the scheduler settle the ranks on their cores first (200 ms by
	 * rank 0's clock). */
	for (int go = 1; go;) {
		allreduce(s, r, 8);
		go = MPI_Wtime() - t0 < 0.2;
		MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		long n = sizes[i];

		if (n > max)
			break;
		t = allreduce(s, r, n);
		if (rank == 0)
			printf("allreduce %ld %.3f\n", n, t);
		t = bcast(s, n);
		if (rank == 0)
			printf("bcast %ld %.3f\n", n, t);
		if (n <= a2a) {
			t = alltoall(s, r, n);
			if (rank == 0)
				printf("alltoall %ld %.3f\n", n, t);
		}
		if (n <= 4096) {
			t = stream((char *)s, n);
			if (rank == 0)
				printf("stream %ld %.3f\n", n, t);
		}
	}
	free(r);
	free(s);
	MPI_Finalize();
	return 0;
}
