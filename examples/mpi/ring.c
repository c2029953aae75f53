/* ring.c - a message of N bytes around the ring of ranks, checked when it
 * comes back to rank 0. Usage: ring [bytes] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, bad = 0;
	long n;
	unsigned char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	n = argc > 1 ? atol(argv[1]) : 1 << 20;
	buf = malloc(n ? n : 1);
	if (rank == 0) {
		for (long i = 0; i < n; i++)
			buf[i] = (unsigned char)(i * 13);
		if (size > 1) {
			MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)n, MPI_BYTE, size - 1, 0,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		for (long i = 0; i < n; i++)
			bad += buf[i] != (unsigned char)(i * 13);
		printf("ring of %d ranks: %ld bytes, %s\n", size, n,
		       bad ? "CORRUPTED" : "intact");
	} else {
		MPI_Recv(buf, (int)n, MPI_BYTE, rank - 1, 0, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Send(buf, (int)n, MPI_BYTE, (rank + 1) % size, 0,
			 MPI_COMM_WORLD);
	}
	free(buf);
	MPI_Finalize();
	return bad != 0;
}
