/*
 * hostile.c - an MPI job of two ranks where rank 1 may be made hostile (see
 * hostile_peer.c): rank 0 must survive its forged control messages and then
 * exchange messages of every protocol, and active messages (RMA), with it
 * as if nothing had happened.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank;

static void fill(char *b, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(seed * 7 + i * 13 + (i >> 9));
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 0, 8, 3000, 100000, 1 << 20 };
	size_t max = 1 << 20;
	char *out = malloc(max), *in = malloc(max), *want = malloc(max);
	int size, peer;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2, "run on 2 ranks");
	peer = 1 - rank;
	/* Rank 1's first message is what sets its forgeries off. */
	if (rank == 1)
		MPI_Send("hello", 6, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
	else {
		MPI_Recv(in, 6, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		CHECK(strcmp(in, "hello") == 0, "first message: %.6s", in);
	}
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];

		fill(out, n, rank + (int)k);
		fill(want, n, peer + (int)k);
		MPI_Sendrecv(out, (int)n, MPI_CHAR, peer, 2, in, (int)n,
			     MPI_CHAR, peer, 2, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		CHECK(memcmp(in, want, n) == 0, "%zu bytes differ", n);
	}
	/* Active messages: a put of each size class into the peer. */
	memset(in, 0, max);
	MPI_Win_create(in, (MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
		       &win);
	MPI_Win_fence(0, win);
	fill(out, 200000, rank);
	MPI_Put(out, 16, MPI_CHAR, peer, 0, 16, MPI_CHAR, win);
	MPI_Put(out, 200000, MPI_CHAR, peer, 100, 200000, MPI_CHAR, win);
	MPI_Win_fence(0, win);
	fill(want, 200000, peer);
	CHECK(memcmp(in, want, 16) == 0 && memcmp(in + 100, want, 200000) == 0,
	      "put data differ");
	MPI_Win_free(&win);
	if (rank == 0)
		printf("rank 0: every protocol still works with rank 1\n");
	free(out);
	free(in);
	free(want);
	MPI_Finalize();
	return 0;
}
