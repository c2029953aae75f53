/*
 * mpi_scale.c - what a job of N ranks on one host costs: every rank reads
 * its proportional set size (PSS, /proc/self/smaps_rollup: its private
 * pages plus its share of every shared page, so that the ranks' sum is
 * what the whole job holds, shared memory counted once) after MPI_Init, a
 * barrier and an all-to-all of 1 KiB with every other rank (every pair's
 * path in use), and the time MPI_Init took.
 *
 *   mpi_scale
 *
 * Rank 0 prints "ranks N pss_kib_per_rank P init_s I" (P: the job's sum
 * over N; I: the slowest rank's MPI_Init).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* This process's PSS in KiB, or -1. */
static long pss_kib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Pss: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	double t0 = now(), init, slowest;
	long pss, sum;
	int rank, size;
	char *out, *in;

	MPI_Init(&argc, &argv);
	init = now() - t0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	out = calloc((size_t)size, 1024);
	in = calloc((size_t)size, 1024);
	if (!out || !in)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Alltoall(out, 1024, MPI_CHAR, in, 1024, MPI_CHAR, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	pss = pss_kib();
	if (pss < 0) {
		fprintf(stderr, "mpi_scale: no /proc/self/smaps_rollup\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Reduce(&pss, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&init, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("ranks %d pss_kib_per_rank %ld init_s %.3f\n", size,
		       sum / size, slowest);
	free(out);
	free(in);
	MPI_Finalize();
	return 0;
}
