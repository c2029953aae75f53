/*
 * hostile_coll.c - an MPI job of two ranks where rank 1 lies in the memory
 * the ranks share for their collectives (hostile_coll_peer.c, preloaded):
 * in each case, on a communicator of its own, it forges its arrival at
 * the next collective with a word where the data's offset or address
 * goes. Rank 0 must fail that collective with the error that says why,
 * never read outside the shared memory or dereference the word, and go on
 * working with rank 1 over other communicators.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int hostile_coll_forge(int rank, uint64_t word) __attribute__((weak));

static int rank;

enum kind { ALLREDUCE, SPLIT, BCAST, BCAST_READ, ALLGATHER, ALLTOALL };

struct forgery {
	const char *name;
	enum kind kind;
	int count;     /* ints a rank sends */
	uint64_t word; /* where the offset (or address) goes */
	const char *says; /* in rank 0's error string */
};

/* One collective of kind on comm; buffers of 2 * count ints at least. */
static int collective(enum kind kind, int count, int *out, int *in,
		      MPI_Comm comm)
{
	switch (kind) {
	case ALLREDUCE:
	case SPLIT:
		return MPI_Allreduce(out, in, count, MPI_INT, MPI_SUM, comm);
	case BCAST:
	case BCAST_READ:
		return MPI_Bcast(in, count, MPI_INT, 1, comm);
	case ALLGATHER:
		return MPI_Allgather(out, count, MPI_INT, in, count, MPI_INT,
				     comm);
	case ALLTOALL:
		return MPI_Alltoall(out, count / 2, MPI_INT, in, count / 2,
				    MPI_INT, comm);
	}
	return MPI_ERR_OTHER;
}

static void one(const struct forgery *f, int *out, int *in)
{
	char msg[MPI_MAX_ERROR_STRING];
	int err, cls, len;
	MPI_Comm comm;

	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	/* Past the first collectives, which go by messages: then the
	 * shared memory is set up, and these go through it. */
	for (int i = 0; i < 12; i++)
		CHECK(collective(f->kind, f->count, out, in, comm) ==
			      MPI_SUCCESS,
		      "%s: collective %d before the forgery failed", f->name,
		      i);
	if (rank == 1) {
		CHECK(hostile_coll_forge(1, f->word) == 0,
		      "%s: nothing to forge in", f->name);
	} else {
		err = collective(f->kind, f->count, out, in, comm);
		CHECK(err != MPI_SUCCESS, "%s: a forged %#llx was taken",
		      f->name, (unsigned long long)f->word);
		MPI_Error_class(err, &cls);
		MPI_Error_string(err, msg, &len);
		CHECK(cls == MPI_ERR_OTHER && strstr(msg, f->says),
		      "%s: class %d, '%s' does not say '%s'", f->name, cls,
		      msg, f->says);
		printf("rank 0: %s with %#llx failed: %s\n", f->name,
		       (unsigned long long)f->word, msg);
	}
	/* Rank 1 forges nothing more until rank 0 is done. */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
	static const char bad[] = "malformed record";
	const struct forgery cases[] = {
		{ "allreduce", ALLREDUCE, 256, ~0ull - 100, bad },
		{ "allreduce", ALLREDUCE, 256, 1ull << 40, bad },
		{ "split allreduce", SPLIT, 16384, ~0ull, bad },
		{ "bcast", BCAST, 1024, 1ull << 62, bad },
		{ "bcast read in place", BCAST_READ, 16384, ~0ull - 8, bad },
		{ "bcast read in place", BCAST_READ, 16384, 4096,
		  "reading the data" },
		{ "allgather", ALLGATHER, 256, ~0ull >> 1, bad },
		{ "alltoall", ALLTOALL, 512, ~0ull - 4096, bad },
	};
	int max = 2 * 16384, size;
	int *out = calloc((size_t)max, sizeof(int));
	int *in = calloc((size_t)max, sizeof(int));

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2, "run on 2 ranks");
	CHECK(rank == 0 || hostile_coll_forge,
	      "rank 1 runs with hostile_coll_peer.so preloaded");
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		one(&cases[k], out, in);
	/* Other communicators still work. */
	for (int i = 0; i < max; i++)
		out[i] = rank + i;
	MPI_Allreduce(out, in, 1000, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < 1000; i++)
		CHECK(in[i] == 1 + 2 * i, "allreduce over WORLD: [%d] = %d", i,
		      in[i]);
	MPI_Sendrecv(out, max, MPI_INT, 1 - rank, 0, in, max, MPI_INT,
		     1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	CHECK(in[max - 1] == 1 - rank + max - 1, "sendrecv after the forgeries");
	if (rank == 0)
		printf("rank 0: every forgery failed its collective, the rest "
		       "still works\n");
	free(out);
	free(in);
	MPI_Finalize();
	return 0;
}
