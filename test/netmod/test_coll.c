/*
 * test_coll.c - collectives on MPI_COMM_WORLD with their results checked,
 * for coll.sh, which counts the messages each algorithm sends.
 *
 *   test_coll ITERS ALLREDUCE_BYTES BCAST_BYTES ALLTOALL_BYTES REDUCE_BYTES
 *             BARRIERS
 *
 * Each size is a message size (alltoall: per pair of ranks); 0 leaves that
 * collective out; BARRIERS barriers follow each iteration's calls. Every
 * call's result is checked: the allreduce and reduce sums of values that
 * depend on the rank, the iteration and the element, the broadcast pattern
 * of the iteration's root, and every block of the alltoall. Prints
 * "test_coll: passed" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;

static double value(int r, int iter, long i)
{
	return (double)((r + 1) * 1000 + iter * 7 + i % 13);
}

/* root < 0: allreduce; else reduce to root. */
static void reduce(int iter, long bytes, double *s, double *r, int root)
{
	long n = bytes / (long)sizeof(double);

	for (long i = 0; i < n; i++)
		s[i] = value(rank, iter, i);
	if (root < 0)
		MPI_Allreduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	else
		MPI_Reduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
	if (root >= 0 && rank != root)
		return;
	for (long i = 0; i < n; i++) {
		double want = 0;

		for (int p = 0; p < size; p++)
			want += value(p, iter, i);
		CHECK(r[i] == want, "%s wrong at iteration %d, element %ld",
		      root < 0 ? "allreduce" : "reduce", iter, i);
	}
}

static unsigned char pattern(int who, int iter, long i)
{
	return (unsigned char)(who * 31 + iter * 17 + i * 7);
}

static void bcast(int iter, long bytes, unsigned char *b)
{
	int root = iter % size;

	for (long i = 0; i < bytes; i++)
		b[i] = rank == root ? pattern(root, iter, i) : 0;
	MPI_Bcast(b, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
	for (long i = 0; i < bytes; i++)
		CHECK(b[i] == pattern(root, iter, i),
		      "bcast wrong at iteration %d, byte %ld", iter, i);
}

static void alltoall(int iter, long bytes, unsigned char *s, unsigned char *r)
{
	/* block p of rank q's send buffer: pattern(q * size + p) */
	for (int p = 0; p < size; p++)
		for (long i = 0; i < bytes; i++)
			s[p * bytes + i] = pattern(rank * size + p, iter, i);
	memset(r, 0, (size_t)(size * bytes));
	MPI_Alltoall(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
	for (int p = 0; p < size; p++)
		for (long i = 0; i < bytes; i++)
			CHECK(r[p * bytes + i] == pattern(p * size + rank, iter, i),
			      "alltoall wrong at iteration %d, block %d, byte %ld",
			      iter, p, i);
}

int main(int argc, char **argv)
{
	int iters;
	long ar, bc, a2a, red, most;
	int barriers;
	unsigned char *s, *r;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 7) {
		if (!rank)
			fprintf(stderr, "usage: test_coll ITERS ALLREDUCE_BYTES BCAST_BYTES "
				"ALLTOALL_BYTES REDUCE_BYTES BARRIERS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	iters = atoi(argv[1]);
	ar = atol(argv[2]);
	bc = atol(argv[3]);
	a2a = atol(argv[4]);
	red = atol(argv[5]);
	barriers = atoi(argv[6]);
	most = ar > bc ? ar : bc;
	most = most > red ? most : red;
	most = most > a2a * size ? most : a2a * size;
	s = malloc((size_t)most + 1);
	r = malloc((size_t)most + 1);
	CHECK(s && r, "no memory for %ld bytes", most);
	for (int it = 0; it < iters; it++) {
		if (ar)
			reduce(it, ar, (double *)s, (double *)r, -1);
		if (red)
			reduce(it, red, (double *)s, (double *)r, it % size);
		if (bc)
			bcast(it, bc, s);
		if (a2a)
			alltoall(it, a2a, s, r);
		for (int b = 0; b < barriers; b++)
			MPI_Barrier(MPI_COMM_WORLD);
	}
	free(s);
	free(r);
	if (!rank)
		printf("test_coll: passed\n");
	MPI_Finalize();
	return 0;
}
