/*
 * mpi_rma.c - OSU-style one-sided benchmark between ranks 0 and 1 on a
 * window from MPI_Win_allocate (OSU's default), rank 0 the origin, rank 1
 * a target that takes no part but waits in a barrier: put and get latency
 * (one operation then MPI_Win_flush, averaged over many after a warm-up,
 * inside one lock_all epoch, as osu_put_latency -s flush) and put and get
 * bandwidth (a window of 64 operations, then a flush), for sizes 1 B ..
 * MAX (default 4 MiB); and the floor of that bandwidth, the same window
 * of copies done by memcpy into the origin's own memory, timed the same
 * way: no one-sided put or get moves the bytes faster than a copy does.
 *
 *   mpi_rma [max-bytes]
 *
 * Prints first "# first put: US us" (the first 8-byte put and flush after
 * the window was made, what a program sees before any warm-up), then one
 * line per size: "bytes put_us get_us put_MB/s get_MB/s copy_MB/s".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static int iterations(long n)
{
	return n <= 8192 ? 10000 : n <= 262144 ? 1000 : 100;
}

/* One operation of n bytes to rank 1's window, then a flush, many
 * times: the time of one, in us. */
static double latency(MPI_Win win, char *buf, long n, int put)
{
	int iters = iterations(n), warm = iters / 10;
	double t0 = 0;

	for (int i = 0; i < warm + iters; i++) {
		if (i == warm)
			t0 = MPI_Wtime();
		if (put)
			MPI_Put(buf, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR,
				win);
		else
			MPI_Get(buf, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR,
				win);
		MPI_Win_flush(1, win);
	}
	return (MPI_Wtime() - t0) * 1e6 / iters;
}

/* What a window of bandwidth() does: puts, gets, or the floor, memcpy
 * into the origin's own memory (no one-sided operation moves the bytes
 * faster than a copy does). */
enum op { PUT, GET, COPY };

/* WINDOW operations of n bytes each to successive places (the same one
 * above 64 KiB), then a flush: MB/s. COPY copies buf into dst instead. */
static double bandwidth(MPI_Win win, char *buf, char *dst, long n, enum op op)
{
	int iters = iterations(n) / 10 + 2, warm = 2;
	double t0 = 0;

	for (int i = 0; i < warm + iters; i++) {
		if (i == warm)
			t0 = MPI_Wtime();
		for (int w = 0; w < WINDOW; w++) {
			MPI_Aint disp = (MPI_Aint)(n <= 65536 ? w * n : 0);

			if (op == PUT)
				MPI_Put(buf, (int)n, MPI_CHAR, 1, disp, (int)n,
					MPI_CHAR, win);
			else if (op == GET)
				MPI_Get(buf, (int)n, MPI_CHAR, 1, disp, (int)n,
					MPI_CHAR, win);
			else
				memcpy(dst + disp, buf, (size_t)n);
			/* Each copy is made: none is a dead store. */
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		if (op != COPY)
			MPI_Win_flush(1, win);
	}
	return (double)n * WINDOW * iters / (MPI_Wtime() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	long max = argc > 1 ? atol(argv[1]) : 4L << 20;
	long win_bytes = max > (long)WINDOW * 65536 ? max : WINDOW * 65536L;
	int rank, size;
	char *buf, *base, *dst;
	MPI_Win win;
	double t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || max < 1 || max > (1L << 30)) {
		if (rank == 0)
			fprintf(stderr, "mpi_rma: 2 ranks, max-bytes 1..1 GiB\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	buf = malloc((size_t)max);
	dst = malloc((size_t)win_bytes);
	if (!buf || !dst)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, 1, (size_t)max);
	memset(dst, 0, (size_t)win_bytes);
	MPI_Win_allocate(win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
			 &win);
	memset(base, 0, (size_t)win_bytes);
	MPI_Barrier(MPI_COMM_WORLD);

	MPI_Win_lock_all(0, win);
	if (rank == 0) {
		t0 = MPI_Wtime();
		MPI_Put(buf, 8, MPI_CHAR, 1, 0, 8, MPI_CHAR, win);
		MPI_Win_flush(1, win);
		printf("# first put: %.3f us\n", (MPI_Wtime() - t0) * 1e6);
		printf("# bytes put_us get_us put_MB/s get_MB/s copy_MB/s\n");
		for (long n = 1; n <= max; n *= 2) {
			double pl = latency(win, buf, n, 1);
			double gl = latency(win, buf, n, 0);
			double pb = bandwidth(win, buf, dst, n, PUT);
			double gb = bandwidth(win, buf, dst, n, GET);
			double cb = bandwidth(win, buf, dst, n, COPY);

			printf("%ld %.3f %.3f %.1f %.1f %.1f\n", n, pl, gl, pb,
			       gb, cb);
			fflush(stdout);
		}
	}
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	free(buf);
	free(dst);
	MPI_Finalize();
	return 0;
}
