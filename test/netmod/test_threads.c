/*
 * test_threads.c - MPI_THREAD_MULTIPLE through the bip netmod: several
 * threads per rank exchange messages of every protocol at once, each on its
 * own tag and its own communicator, with the data checked.
 *
 *   test_threads [threads] [iterations]
 */
#include "check.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, iters;
static MPI_Comm comms[16];

/* short, three-way and rendezvous sizes with the default CVARs */
static const int lens[] = { 8, 1000, 20000, 300000 };

static void *worker(void *arg)
{
	int t = (int)(long)arg, peer = rank ^ 1;
	MPI_Comm comm = comms[t];
	unsigned char *s = malloc(300000), *r = malloc(300000);

	for (int i = 0; i < iters; i++) {
		int len = lens[(i + t) % 4], cnt;
		MPI_Request rq[2];
		MPI_Status st;

		for (int k = 0; k < len; k++)
			s[k] = (unsigned char)(rank + t + i + k);
		/* both directions at once, one on a wildcard source */
		MPI_Irecv(r, len, MPI_BYTE, i % 2 ? MPI_ANY_SOURCE : peer, t,
			  comm, &rq[0]);
		MPI_Isend(s, len, MPI_BYTE, peer, t, comm, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		for (int k = 0; k < len; k++)
			CHECK(r[k] == (unsigned char)(peer + t + i + k),
			      "thread %d iteration %d byte %d", t, i, k);
		/* and a synchronous one each way */
		if (rank % 2 == 0) {
			MPI_Ssend(s, len, MPI_BYTE, peer, t, comm);
			MPI_Recv(r, len, MPI_BYTE, peer, t, comm, &st);
		} else {
			MPI_Recv(r, len, MPI_BYTE, peer, t, comm, &st);
			MPI_Ssend(s, len, MPI_BYTE, peer, t, comm);
		}
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		CHECK(cnt == len && st.MPI_SOURCE == peer, "thread %d ssend",
		      t);
	}
	free(s);
	free(r);
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, nthreads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[16];

	iters = argc > 2 ? atoi(argv[2]) : 200;
	if (nthreads > 16)
		nthreads = 16;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d",
	      provided);
	CHECK(size % 2 == 0, "needs an even number of ranks");
	for (int t = 0; t < nthreads; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	for (int t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, worker, (void *)(long)t);
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < nthreads; t++)
		MPI_Comm_free(&comms[t]);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0)
		printf("%d threads x %d iterations per rank: ok\n", nthreads,
		       iters);
	return 0;
}
