/* ring.c - a message of N bytes around the ring of ranks, ROUNDS times,
 * checked each time it comes back to rank 0, which prints how long the
 * rounds took. Usage: ring [bytes [rounds]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, bad = 0, rounds;
	double t0;
	long n;
	unsigned char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	n = argc > 1 ? atol(argv[1]) : 1 << 20;
	rounds = argc > 2 ? atoi(argv[2]) : 1;
	buf = malloc(n ? n : 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int r = 0; r < rounds; r++) {
		if (rank != 0) {
			MPI_Recv(buf, (int)n, MPI_BYTE, rank - 1, 0,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)n, MPI_BYTE, (rank + 1) % size, 0,
				 MPI_COMM_WORLD);
			continue;
		}
		for (long i = 0; i < n; i++)
			buf[i] = (unsigned char)(i * 13 + r);
		if (size > 1) {
			MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)n, MPI_BYTE, size - 1, 0,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		for (long i = 0; i < n; i++)
			bad += buf[i] != (unsigned char)(i * 13 + r);
	}
	if (rank == 0)
		printf("ring of %d ranks: %ld bytes x %d, %s, %.1f ms\n", size,
		       n, rounds, bad ? "CORRUPTED" : "intact",
		       (MPI_Wtime() - t0) * 1e3);
	free(buf);
	MPI_Finalize();
	return bad != 0;
}
