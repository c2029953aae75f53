/* pingpong.c - MPI ping-pong between ranks 0 and 1, the MPI-BIP way: for
 * each size, one-way time = median of 100 round trips / 2. Prints a '#'
 * header, then "<bytes> <one-way usec> <MB/s>". Usage: pingpong [max] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	enum { REPS = 100, WARM = 10 };
	long max;
	int rank, size;
	double t[REPS];
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	max = argc > 1 ? atol(argv[1]) : 4L << 20;
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "pingpong needs 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	buf = calloc(1, max ? max : 1);
	if (rank == 0)
		printf("# bytes one-way-usec MB/s   (median of %d round trips "
		       "/ 2)\n", REPS);
	for (long len = 0; len <= max; len = len ? len * 2 : 1) {
		for (int i = 0; i < WARM + REPS && rank < 2; i++) {
			double t0 = MPI_Wtime();

			if (rank == 0) {
				MPI_Send(buf, (int)len, MPI_BYTE, 1, 0,
					 MPI_COMM_WORLD);
				MPI_Recv(buf, (int)len, MPI_BYTE, 1, 0,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(buf, (int)len, MPI_BYTE, 0, 0,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)len, MPI_BYTE, 0, 0,
					 MPI_COMM_WORLD);
			}
			if (i >= WARM)
				t[i - WARM] = (MPI_Wtime() - t0) * 1e6;
		}
		if (rank == 0) {
			double one_way;

			qsort(t, REPS, sizeof(t[0]), cmp);
			one_way = t[REPS / 2] / 2;
			printf("%ld %.3f %.1f\n", len, one_way, len / one_way);
		}
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
