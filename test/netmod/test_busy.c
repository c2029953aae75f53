/*
 * test_busy.c - a rank that computes (polls nothing) for longer than
 * BIP_PEER_TIMEOUT_MS while a peer waits for its acks is busy, not dead:
 * rank 1 sleeps SECONDS before receiving what rank 0 sent at once.
 * Usage: mpiexec -n 2 test_busy [SECONDS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N (1 << 20)

int main(int argc, char **argv)
{
	static unsigned char buf[N];
	unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 3;
	int rank, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		for (int i = 0; i < N; i++)
			buf[i] = (unsigned char)(i * 7);
		MPI_Send(buf, N, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
		MPI_Send(buf, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
	} else if (rank == 1) {
		sleep(secs); /* no MPI call: nothing polls */
		MPI_Recv(buf, N, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		for (int i = 0; i < N; i++)
			bad += buf[i] != (unsigned char)(i * 7);
		MPI_Recv(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		printf("busy peer: %u s without polling, %s\n", secs,
		       bad ? "data differs" : "data intact");
	}
	MPI_Finalize();
	return bad != 0;
}
