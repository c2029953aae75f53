/*
 * mpi_bench.c - OSU-style point-to-point benchmark between ranks 0 and 1:
 * latency (ping-pong, one-way time = round trip / 2, averaged over many
 * iterations after a warm-up), bandwidth (a window of non-blocking sends,
 * then a one-byte answer) and bidirectional bandwidth (both ranks send a
 * window to each other at once), for sizes 0 B .. MAX (default 4 MiB).
 *
 *   mpi_bench [max-bytes]
 *
 * Prints first "# first FIRST round trips after MPI_Init: 8 B US us one way"
 * (what a program sees of its first messages, before any warm-up), then
 * one line per size: "bytes latency_us bandwidth_MB/s bibw_MB/s".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define FIRST 200

static int rank;

static int iterations(long n)
{
	return n <= 8192 ? 10000 : n <= 262144 ? 1000 : 100;
}

static double latency(char *buf, long n)
{
	int iters = iterations(n), warm = iters / 10;
	double t0 = 0;

	for (int i = 0; i < warm + iters; i++) {
		if (i == warm) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank == 0) {
			MPI_Send(buf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

static double bandwidth(char *buf, long n)
{
	int iters = iterations(n) / 10 + 2, warm = 2;
	MPI_Request rq[WINDOW];
	MPI_Status st[WINDOW];
	double t0 = 0;

	for (int i = 0; i < warm + iters; i++) {
		if (i == warm) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank == 0) {
			for (int w = 0; w < WINDOW; w++)
				MPI_Isend(buf, (int)n, MPI_CHAR, 1, 2,
					  MPI_COMM_WORLD, &rq[w]);
			MPI_Waitall(WINDOW, rq, st);
			MPI_Recv(buf, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			for (int w = 0; w < WINDOW; w++)
				MPI_Irecv(buf, (int)n, MPI_CHAR, 0, 2,
					  MPI_COMM_WORLD, &rq[w]);
			MPI_Waitall(WINDOW, rq, st);
			MPI_Send(buf, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
		}
	}
	return (double)n * WINDOW * iters / (MPI_Wtime() - t0) / 1e6;
}

static double bibandwidth(char *buf, char *rbuf, long n)
{
	int iters = iterations(n) / 10 + 2, warm = 2, peer = 1 - rank;
	MPI_Request rq[2 * WINDOW];
	MPI_Status st[2 * WINDOW];
	double t0 = 0;

	for (int i = 0; i < warm + iters; i++) {
		if (i == warm) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank > 1)
			continue;
		for (int w = 0; w < WINDOW; w++)
			MPI_Irecv(rbuf, (int)n, MPI_CHAR, peer, 5, MPI_COMM_WORLD,
				  &rq[w]);
		for (int w = 0; w < WINDOW; w++)
			MPI_Isend(buf, (int)n, MPI_CHAR, peer, 5, MPI_COMM_WORLD,
				  &rq[WINDOW + w]);
		MPI_Waitall(2 * WINDOW, rq, st);
	}
	return 2.0 * (double)n * WINDOW * iters / (MPI_Wtime() - t0) / 1e6;
}

/* Ping-pong FIRST times at once, as a program does after MPI_Init: before
 * the benchmark's own set-up (its buffers' first touch takes each rank its
 * own time, which the first messages would wait out). */
static void first_messages(void)
{
	char buf[8] = { 0 };
	double t0 = MPI_Wtime();

	for (int i = 0; i < FIRST; i++) {
		if (rank == 0) {
			MPI_Send(buf, 8, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_CHAR, 1, 4, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, 8, MPI_CHAR, 0, 4, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, 8, MPI_CHAR, 0, 4, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("# first %d round trips after MPI_Init: 8 B %.3f us one "
		       "way\n", FIRST, (MPI_Wtime() - t0) * 1e6 / (2.0 * FIRST));
}

int main(int argc, char **argv)
{
	long max = argc > 1 ? atol(argv[1]) : 4L << 20;
	char *buf, *rbuf;
	int size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		fprintf(stderr, "mpi_bench: needs 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	first_messages();
	buf = malloc(max > 8 ? max : 8);
	rbuf = malloc(max > 8 ? max : 8);
	if (!buf || !rbuf) {
		fprintf(stderr, "mpi_bench: no memory for %ld bytes\n", max);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(buf, 1, max > 8 ? max : 8);
	memset(rbuf, 0, max > 8 ? max : 8);
	/* Let the scheduler settle both ranks on their cores first. */
	for (int i = 0; i < 20; i++)
		latency(buf, 0);
	for (long n = 0; n <= max; n = n ? 2 * n : 1) {
		double lat = latency(buf, n), bw = bandwidth(buf, n);
		double bibw = bibandwidth(buf, rbuf, n);

		if (rank == 0)
			printf("%ld %.3f %.1f %.1f\n", n, lat, bw, bibw);
	}
	free(rbuf);
	free(buf);
	MPI_Finalize();
	return 0;
}
