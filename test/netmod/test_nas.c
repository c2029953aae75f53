/*
 * test_nas.c - the communication patterns of the NAS Parallel Benchmarks,
 * with the data checked: CG (pairwise exchanges along hypercube dimensions
 * plus small allreduces), MG (halo exchanges, large and small faces, with
 * irecv/send), LU (a pipelined wavefront of small messages, both
 * directions), FT (all-to-all of large blocks), IS (all-to-all of counts,
 * then all-to-allv of keys), EP (a final allreduce). Prints the time of
 * each pattern.
 *
 *   test_nas [scale]     (default 1; iterations grow with it)
 */
#include "check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, scale;

static double value(int from, int it, long i)
{
	return from * 1e6 + it * 1e3 + (double)(i % 997);
}

static void fillv(double *v, long n, int from, int it)
{
	for (long i = 0; i < n; i++)
		v[i] = value(from, it, i);
}

static void checkv(const double *v, long n, int from, int it, const char *p)
{
	for (long i = 0; i < n; i++)
		CHECK(v[i] == value(from, it, i), "%s: element %ld from %d", p,
		      i, from);
}

static void allreduce_check(int it)
{
	double in[2] = { rank, it }, out[2];

	MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	CHECK(out[0] == size * (size - 1) / 2.0 && out[1] == (double)it * size,
	      "allreduce");
}

static void cg(void)
{
	long n = 14000;
	double *s = malloc(n * sizeof(double)), *r = malloc(n * sizeof(double));

	for (int it = 0; it < 75 * scale; it++) {
		for (int bit = 1; bit < size; bit <<= 1) {
			int peer = rank ^ bit;

			if (peer >= size)
				continue;
			fillv(s, n, rank, it);
			MPI_Sendrecv(s, (int)n, MPI_DOUBLE, peer, it, r, (int)n,
				     MPI_DOUBLE, peer, it, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE);
			checkv(r, n, peer, it, "cg");
		}
		allreduce_check(it);
		allreduce_check(it);
	}
	free(s);
	free(r);
}

static void mg(void)
{
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	long faces[] = { 66 * 66, 34 * 34, 18 * 18, 10 * 10, 6 * 6, 4 * 4 };
	double *s = malloc(2 * faces[0] * sizeof(double));
	double *r = malloc(2 * faces[0] * sizeof(double));

	for (int it = 0; it < 20 * scale; it++) {
		for (int lv = 0; lv < 6; lv++) {
			long n = faces[lv];
			MPI_Request rq[2];

			MPI_Irecv(r, (int)n, MPI_DOUBLE, left, lv, MPI_COMM_WORLD,
				  &rq[0]);
			MPI_Irecv(r + n, (int)n, MPI_DOUBLE, right, lv,
				  MPI_COMM_WORLD, &rq[1]);
			fillv(s, n, rank, it + lv);
			MPI_Send(s, (int)n, MPI_DOUBLE, right, lv,
				 MPI_COMM_WORLD);
			MPI_Send(s, (int)n, MPI_DOUBLE, left, lv,
				 MPI_COMM_WORLD);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
			checkv(r, n, left, it + lv, "mg");
			checkv(r + n, n, right, it + lv, "mg");
		}
		allreduce_check(it);
	}
	free(s);
	free(r);
}

static void lu(void)
{
	double s[5 * 12], r[5 * 12];

	for (int it = 0; it < 250 * scale; it++) {
		/* lower sweep: 0 -> size-1, then upper: size-1 -> 0 */
		for (int dir = 0; dir < 2; dir++) {
			int from = dir ? rank + 1 : rank - 1;
			int to = dir ? rank - 1 : rank + 1;

			for (int k = 0; k < 8; k++) {
				if (from >= 0 && from < size) {
					MPI_Recv(r, 60, MPI_DOUBLE, from, k,
						 MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
					checkv(r, 60, from, it + k, "lu");
				}
				if (to >= 0 && to < size) {
					fillv(s, 60, rank, it + k);
					MPI_Send(s, 60, MPI_DOUBLE, to, k,
						 MPI_COMM_WORLD);
				}
			}
		}
	}
	allreduce_check(0);
}

static void ft(void)
{
	long blk = (1L << 20) / size; /* doubles per destination */
	double *s = malloc(blk * size * sizeof(double));
	double *r = malloc(blk * size * sizeof(double));

	for (int it = 0; it < 6 * scale; it++) {
		for (int p = 0; p < size; p++)
			fillv(s + p * blk, blk, rank * 100 + p, it);
		MPI_Alltoall(s, (int)blk, MPI_DOUBLE, r, (int)blk, MPI_DOUBLE,
			     MPI_COMM_WORLD);
		for (int p = 0; p < size; p++)
			checkv(r + p * blk, blk, p * 100 + rank, it, "ft");
	}
	free(s);
	free(r);
}

static void is(void)
{
	int *sc = malloc(4 * size * sizeof(int)), *rc = sc + size,
	    *sd = rc + size, *rd = sd + size;
	double *s = malloc((size_t)size * 70000 * sizeof(double));
	double *r = malloc((size_t)size * 70000 * sizeof(double));

	for (int it = 0; it < 10 * scale; it++) {
		int st = 0, rt = 0;

		for (int p = 0; p < size; p++)
			sc[p] = 20000 + ((rank * 7 + p * 13 + it) % 50000);
		MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
		for (int p = 0; p < size; p++) {
			CHECK(rc[p] == 20000 + (p * 7 + rank * 13 + it) % 50000,
			      "is counts");
			sd[p] = st;
			rd[p] = rt;
			st += sc[p];
			rt += rc[p];
			fillv(s + sd[p], sc[p], rank * 100 + p, it);
		}
		MPI_Alltoallv(s, sc, sd, MPI_DOUBLE, r, rc, rd, MPI_DOUBLE,
			      MPI_COMM_WORLD);
		for (int p = 0; p < size; p++)
			checkv(r + rd[p], rc[p], p * 100 + rank, it, "is");
		allreduce_check(it);
	}
	free(sc);
	free(s);
	free(r);
}

int main(int argc, char **argv)
{
	struct {
		const char *name;
		void (*run)(void);
	} pat[] = { { "CG", cg }, { "MG", mg }, { "LU", lu },
		    { "FT", ft }, { "IS", is } };
	double total = 0;

	scale = argc > 1 ? atoi(argv[1]) : 1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (unsigned i = 0; i < sizeof(pat) / sizeof(pat[0]); i++) {
		double t;

		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		pat[i].run();
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime() - t;
		total += t;
		if (rank == 0)
			printf("%s pattern on %d ranks: %.4f s\n", pat[i].name,
			       size, t);
	}
	allreduce_check(1); /* EP: just the final reduction */
	if (rank == 0)
		printf("NAS patterns on %d ranks: total %.4f s\n", size, total);
	MPI_Finalize();
	return 0;
}
