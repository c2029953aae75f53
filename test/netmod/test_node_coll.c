/*
 * test_node_coll.c - the small collectives that go through shared memory
 * within a host (src/netmod/bip_coll.c), with every result checked, for
 * node_coll.sh:
 *
 *   - allreduce and reduce of ints, doubles and MPI_2INT (MINLOC) with
 *     several ops, at sizes on both sides of each layout's edge (120
 *     bytes in a line, then a chunk of the data ring, then past
 *     MPIR_CVAR_CH4_BIP_NODE_COLL_MAX: point-to-point), MPI_IN_PLACE too;
 *     every rank's floating-point sum must have the same bits, those of
 *     the sum in rank order (also of three chunks and more: split into
 *     shares, MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT);
 *   - bcast from every root, the receivers with a strided datatype of the
 *     same signature as the root's contiguous one; also larger than
 *     MPIR_CVAR_CH4_BIP_NODE_COLL_MAX (in pieces above 2 ranks, a last
 *     partial one among them), of MPI_DOUBLE_INT too, whose 12-byte
 *     elements the pieces' edges cut;
 *   - alltoall and allgather, the receivers with a strided datatype too,
 *     and in place; an alltoall larger than a chunk, in rounds;
 *   - barrier: no rank leaves before the last one came (rank 0 comes late);
 *   - run-ahead: bcast roots and the ranks of a reduce run far ahead of a
 *     rank that sleeps (more than each ring holds: lines and chunks are
 *     reused, chunks of several sizes wrap), and a root of bcasts in
 *     pieces;
 *   - the same on a split communicator with the ranks in reverse order,
 *     on a dup, and with point-to-point traffic interleaved.
 *
 *   test_node_coll [ITERS [threads|exit [INTS]|alltoall INTS|wake|stream|late]]
 *
 * With "threads": MPI_THREAD_MULTIPLE, and THREADS threads per rank at
 * once, each with allreduces and bcasts on a communicator of its own, one
 * of them sleeping now and then (the others' waits must let it in). With
 * "exit": 2 ITERS allreduces (of INTS ints, default 1), then MPI_Finalize
 * at once; "alltoall": the same with ITERS times 2 alltoalls of INTS ints a
 * block, and allgathers (a rank that saw
 * all arrive leaves while the others may still be looking: they must not
 * take it for dead). With "wake": ITERS barriers that the last rank
 * reaches LATE_US late, so that the others sleep (under 30 % of a core
 * used while they wait); they must leave within
 * WOKEN_US of its arrival in most of them (a sleep that nothing wakes
 * ends after up to 1 ms: about 1 in 5 would). With "stream": ITERS times,
 * rank 0 sends rank 1 a stream of STREAM_MSGS messages of 8 bytes that
 * rank 1 receives and checks, while the other ranks wait for both in an
 * allreduce (with more ranks than cores they should sleep there, not
 * take the streaming ranks' cores: node_coll.sh counts their sleeps).
 * With "late": ITERS times, 50 allreduces (short waits), then a barrier
 * that rank 0 reaches LONG_WAIT_US late: with more ranks than cores the
 * others must sleep through most of that one long wait (under 30 % of a
 * core used), not yield throughout.
 * Prints "test_node_coll: passed" on rank 0.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int rank, size;

static int ival(int r, int it, int i)
{
	return (r + 1) * 100 + it * 3 + i % 7;
}

/* Values of very different magnitudes: a sum that depends on the order. */
static double dval(int r, int it, int i)
{
	return (r % 2 ? 1e16 : 1.0) * (r + 1) + it + i * 0.1;
}

static void allreduce_ints(MPI_Comm comm, int it, int n, int in_place)
{
	int crank, csize, *s = malloc(sizeof(int) * (size_t)n * 2), *r = s + n;

	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	for (int i = 0; i < n; i++)
		s[i] = r[i] = ival(crank, it, i);
	MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_SUM, comm);
	for (int i = 0; i < n; i++) {
		int want = 0;

		for (int p = 0; p < csize; p++)
			want += ival(p, it, i);
		CHECK(r[i] == want, "allreduce of %d ints%s, iteration %d: "
		      "[%d] %d, want %d", n, in_place ? " in place" : "", it,
		      i, r[i], want);
	}
	for (int i = 0; i < n; i++)
		s[i] = ival(crank, it, i);
	MPI_Allreduce(s, r, n, MPI_INT, MPI_MAX, comm);
	for (int i = 0; i < n; i++)
		CHECK(r[i] == ival(csize - 1, it, i), "max of %d ints", n);
	free(s);
}

/* The same bits on every rank, and the sum in rank order. */
static void allreduce_doubles(MPI_Comm comm, int it, int n)
{
	int crank, csize;
	double *s = malloc(sizeof(double) * (size_t)n * 3), *r = s + n,
	       *all = malloc(sizeof(double) * (size_t)n * (size_t)size);

	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	for (int i = 0; i < n; i++)
		s[i] = dval(crank, it, i);
	MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, comm);
	for (int i = 0; i < n; i++) {
		double want = dval(0, it, i);

		for (int p = 1; p < csize; p++)
			want = dval(p, it, i) + want;
		CHECK(r[i] == want, "sum of doubles [%d]: %.17g, want %.17g",
		      i, r[i], want);
	}
	MPI_Allgather(r, n, MPI_DOUBLE, all, n, MPI_DOUBLE, comm);
	for (int p = 0; p < csize; p++)
		CHECK(!memcmp(all + (size_t)p * n, r, sizeof(double) * n),
		      "rank %d got other bits", p);
	free(all);
	free(s);
}

static void minloc(MPI_Comm comm, int it)
{
	int crank, csize, s[2], r[2];

	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	s[0] = (crank + it) % csize == 0 ? -5 : crank;
	s[1] = crank;
	MPI_Allreduce(s, r, 1, MPI_2INT, MPI_MINLOC, comm);
	CHECK(r[0] == -5 && r[1] == (csize - it % csize) % csize,
	      "minloc: %d at %d", r[0], r[1]);
}

static void reduce_each_root(MPI_Comm comm, int it, int n)
{
	int crank, csize;
	long *s = malloc(sizeof(long) * (size_t)n * 2), *r = s + n;

	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	for (int root = 0; root < csize; root++) {
		for (int i = 0; i < n; i++)
			s[i] = r[i] = ival(crank, it + root, i);
		MPI_Reduce(crank == root ? MPI_IN_PLACE : s, r, n, MPI_LONG,
			   MPI_SUM, root, comm);
		if (crank != root)
			continue;
		for (int i = 0; i < n; i++) {
			long want = 0;

			for (int p = 0; p < csize; p++)
				want += ival(p, it + root, i);
			CHECK(r[i] == want, "reduce of %d longs to %d", n,
			      root);
		}
	}
	free(s);
}

/* The root sends n contiguous ints; the others take them every other int
 * of a larger buffer (a vector: the same signature). */
static void bcast_each_root(MPI_Comm comm, int it, int n)
{
	int crank, csize, *b = malloc(sizeof(int) * (size_t)n * 2);
	MPI_Datatype strided;

	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
	MPI_Type_commit(&strided);
	for (int root = 0; root < csize; root++) {
		memset(b, 0xff, sizeof(int) * (size_t)n * 2);
		if (crank == root) {
			for (int i = 0; i < n; i++)
				b[i] = ival(root, it, i);
			MPI_Bcast(b, n, MPI_INT, root, comm);
			continue;
		}
		MPI_Bcast(b, 1, strided, root, comm);
		for (int i = 0; i < n; i++) {
			CHECK(b[2 * i] == ival(root, it, i),
			      "bcast of %d ints from %d: [%d] %d", n, root, i,
			      b[2 * i]);
			CHECK(b[2 * i + 1] == -1, "bcast wrote a gap");
		}
	}
	MPI_Type_free(&strided);
	free(b);
}

/* n MPI_DOUBLE_INT pairs from root 0 (not contiguous: padding), the
 * receivers taking them into every other pair of a larger buffer. */
static void bcast_pairs(MPI_Comm comm, int it, int n)
{
	struct pair {
		double d;
		int i;
	} *b = malloc(sizeof(*b) * (size_t)n * 2);
	int crank;
	MPI_Datatype strided;

	MPI_Comm_rank(comm, &crank);
	MPI_Type_vector(n, 1, 2, MPI_DOUBLE_INT, &strided);
	MPI_Type_commit(&strided);
	for (int i = 0; i < 2 * n; i++)
		b[i] = (struct pair){ -1.0, -1 };
	if (crank == 0) {
		for (int i = 0; i < n; i++)
			b[i] = (struct pair){ dval(0, it, i), ival(0, it, i) };
		MPI_Bcast(b, n, MPI_DOUBLE_INT, 0, comm);
	} else {
		MPI_Bcast(b, 1, strided, 0, comm);
		for (int i = 0; i < n; i++) {
			CHECK(b[2 * i].d == dval(0, it, i) &&
				      b[2 * i].i == ival(0, it, i),
			      "bcast of %d double-int pairs: [%d] %g %d", n, i,
			      b[2 * i].d, b[2 * i].i);
			CHECK(b[2 * i + 1].i == -1, "bcast wrote a gap");
		}
	}
	MPI_Type_free(&strided);
	free(b);
}

/* n ints per block: alltoall (rank r sends block d the values ival(r,
 * it, d * n + i)) and allgather, each once in place; the receivers take
 * the blocks every other int of a larger buffer (a vector). */
static void exchanges(MPI_Comm comm, int it, int n)
{
	int crank, csize, *s, *r;
	size_t per;
	MPI_Datatype strided, resized;

	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	per = (size_t)n * (size_t)csize;
	s = malloc(sizeof(int) * per * 3);
	r = s + per;
	MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
	MPI_Type_create_resized(strided, 0, (MPI_Aint)sizeof(int) * 2 * n,
				&resized);
	MPI_Type_commit(&resized);
	for (size_t i = 0; i < per; i++)
		s[i] = r[i] = ival(crank, it, (int)i);
	memset(r, 0xff, sizeof(int) * per * 2);
	MPI_Alltoall(s, n, MPI_INT, r, 1, resized, comm);
	for (int p = 0; p < csize; p++)
		for (int i = 0; i < n; i++)
			CHECK(r[2 * (p * n + i)] == ival(p, it, crank * n + i) &&
				      r[2 * (p * n + i) + 1] == -1,
			      "alltoall of %d ints: from %d [%d] %d", n, p, i,
			      r[2 * (p * n + i)]);
	for (size_t i = 0; i < per; i++)
		r[i] = ival(crank, it, (int)i);
	MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, comm);
	for (int p = 0; p < csize; p++)
		for (int i = 0; i < n; i++)
			CHECK(r[p * n + i] == ival(p, it, crank * n + i),
			      "alltoall in place of %d ints", n);
	memset(r, 0xff, sizeof(int) * per * 2);
	MPI_Allgather(s, n, MPI_INT, r, 1, resized, comm);
	for (int p = 0; p < csize; p++)
		for (int i = 0; i < n; i++)
			CHECK(r[2 * (p * n + i)] == ival(p, it, i) &&
				      r[2 * (p * n + i) + 1] == -1,
			      "allgather of %d ints: from %d [%d] %d", n, p, i,
			      r[2 * (p * n + i)]);
	for (int i = 0; i < n; i++)
		r[crank * n + i] = ival(crank, it, i) + 1;
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, comm);
	for (int p = 0; p < csize; p++)
		for (int i = 0; i < n; i++)
			CHECK(r[p * n + i] == ival(p, it, i) + 1,
			      "allgather in place of %d ints", n);
	MPI_Type_free(&resized);
	MPI_Type_free(&strided);
	free(s);
}

/* Rank 0 comes 200 ms late: nobody may leave before. */
static void barrier_waits(MPI_Comm comm)
{
	int crank;
	double t0, t;

	MPI_Comm_rank(comm, &crank);
	t0 = MPI_Wtime();
	MPI_Barrier(comm);
	if (crank == 0)
		usleep(200000);
	MPI_Barrier(comm);
	t = MPI_Wtime() - t0;
	CHECK(t >= 0.2, "left the barrier after %.3f s, before rank 0 came",
	      t);
}

#define LATE_US 20000
#define WOKEN_US 200

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* Waiters in a barrier sleep (they give their core away: little CPU time)
 * and are woken by the late rank's arrival (one clock for the host's
 * processes: CLOCK_MONOTONIC). */
static void woken(int iters)
{
	int late = size - 1, quick = 0;
	double arrived, left, wall, cpu;

	/* Past the first collectives, which go by messages. */
	for (int i = 0; i < 10; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	wall = now_us();
	cpu = cpu_us();
	for (int it = 0; it < iters; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == late)
			usleep(LATE_US);
		arrived = now_us();
		MPI_Barrier(MPI_COMM_WORLD);
		left = now_us();
		MPI_Bcast(&arrived, 1, MPI_DOUBLE, late, MPI_COMM_WORLD);
		quick += left - arrived < WOKEN_US;
	}
	wall = now_us() - wall;
	cpu = cpu_us() - cpu;
	CHECK(rank == late || cpu < 0.3 * wall,
	      "rank %d used %.0f of %.0f us waiting: it did not sleep", rank,
	      cpu, wall);
	CHECK(rank == late || 3 * quick >= 2 * iters,
	      "rank %d left a barrier within %d us of the last arrival in "
	      "%d of %d",
	      rank, WOKEN_US, quick, iters);
}

/* One rank sleeps while the others run iters bcasts and (with reduce)
 * reduces of n ints ahead. */
static void run_ahead(MPI_Comm comm, int n, int iters, bool reduce)
{
	int crank, csize, *v = malloc(sizeof(int) * (size_t)n * 2),
			  *sum = v + n;

	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	if (crank == csize - 1)
		usleep(100000);
	for (int it = 0; it < iters; it++) {
		for (int i = 0; i < n; i++)
			v[i] = crank == 0 ? it * 11 + i : -1;
		MPI_Bcast(v, n, MPI_INT, 0, comm);
		for (int i = 0; i < n; i++)
			CHECK(v[i] == it * 11 + i, "bcast %d of %d ints ahead: "
			      "[%d] %d", it, n, i, v[i]);
		if (!reduce)
			continue;
		for (int i = 0; i < n; i++)
			v[i] = crank + it + i;
		MPI_Reduce(v, sum, n, MPI_INT, MPI_SUM, csize - 1, comm);
		for (int i = 0; i < n && crank == csize - 1; i++)
			CHECK(sum[i] == csize * (csize - 1) / 2 +
						csize * (it + i),
			      "reduce %d of %d ints ahead: [%d] %d", it, n, i,
			      sum[i]);
	}
	free(v);
}

/* Point-to-point between the collectives: a ring. */
static void ring(MPI_Comm comm, int it)
{
	int crank, csize, got;

	MPI_Comm_rank(comm, &crank);
	MPI_Comm_size(comm, &csize);
	MPI_Sendrecv(&it, 1, MPI_INT, (crank + 1) % csize, 7, &got, 1, MPI_INT,
		     (crank + csize - 1) % csize, 7, comm, MPI_STATUS_IGNORE);
	CHECK(got == it, "ring %d", got);
}

/* MPIR_CVAR_CH4_BIP_NODE_COLL_MAX in force (MPI_T), in ints: the largest
 * collective through shared memory; 1024 when the path is off. */
static int edge_ints(void)
{
	static int max = -2;
	int provided, idx, count;
	MPI_T_cvar_handle h;

	/* Once: after an MPI_T_finalize, MPICH 4.0.2 finds no variable by
	 * name, and then crashes reading one. */
	if (max != -2)
		return max > 0 ? max / (int)sizeof(int) : 1024;
	MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
	CHECK(MPI_T_cvar_get_index("MPIR_CVAR_CH4_BIP_NODE_COLL_MAX", &idx) ==
			      MPI_SUCCESS &&
		      MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) ==
			      MPI_SUCCESS &&
		      MPI_T_cvar_read(h, &max) == MPI_SUCCESS,
	      "MPIR_CVAR_CH4_BIP_NODE_COLL_MAX read through MPI_T");
	MPI_T_cvar_handle_free(&h);
	MPI_T_finalize();
	return max > 0 ? max / (int)sizeof(int) : 1024;
}

static void all(MPI_Comm comm, int iters)
{
	/* Ints: in a line (30), a chunk (31 .. the edge), then
	 * point-to-point. */
	const int edge = edge_ints();
	int csize;
	const int sizes[] = { 1, 30, 31, 128, 129, 1024, edge, edge + 1 };
	const int pieces = 3 * edge + 5;

	MPI_Comm_size(comm, &csize);
	for (int it = 0; it < iters; it++) {
		/* An alltoall of three chunks and a bit a rank: in rounds
		 * above 2 ranks, the last of a part of a slice. */
		exchanges(comm, it, (3 * edge + 5) / csize + 1);
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			allreduce_ints(comm, it, sizes[k], (int)(it + k) % 2);
			bcast_each_root(comm, it, sizes[k]);
			reduce_each_root(comm, it, sizes[k] / 2 + 1);
			exchanges(comm, it, sizes[k] / 4 + 1);
		}
		bcast_each_root(comm, it, pieces);
		bcast_pairs(comm, it, pieces / 2);
		allreduce_doubles(comm, it, 3);
		allreduce_doubles(comm, it, 100);
		allreduce_doubles(comm, it, pieces);
		minloc(comm, it);
		ring(comm, it);
	}
	barrier_waits(comm);
	run_ahead(comm, 1, 500, true);
	run_ahead(comm, 100, 500, true);
	run_ahead(comm, 1000, 500, true);
	run_ahead(comm, pieces, 20, false);
}

#define THREADS 3

struct thread_arg {
	MPI_Comm comm;
	int iters, id;
};

static void *thread_main(void *p)
{
	const struct thread_arg *a = p;

	for (int it = 0; it < a->iters; it++) {
		if (a->id == 0 && it % 50 == 0)
			usleep(2000);
		allreduce_ints(a->comm, it, 1 + it % 20, it % 2);
		bcast_each_root(a->comm, it, 1 + it % 300);
	}
	return NULL;
}

static void threads(int iters)
{
	struct thread_arg a[THREADS];
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++) {
		a[i] = (struct thread_arg){ .iters = iters, .id = i };
		MPI_Comm_dup(MPI_COMM_WORLD, &a[i].comm);
	}
	for (int i = 0; i < THREADS; i++)
		CHECK(!pthread_create(&t[i], NULL, thread_main, &a[i]),
		      "pthread_create");
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		MPI_Comm_free(&a[i].comm);
	}
}

/* The end of every mode: passed once every rank got here (the "exit"
 * mode leaves without a last barrier, right after its collectives). */
/* See "stream" above. */
#define STREAM_MSGS 20000
static void stream(int iters)
{
	/* The communicator's shared memory is set up at its ninth. */
	for (int i = 0; i < 10; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	for (int it = 0; it < iters; it++) {
		double x = 1, y = 0;

		for (int m = 0; m < STREAM_MSGS && rank < 2 && size > 1; m++) {
			long v = (long)it * STREAM_MSGS + m, got = -1;

			if (rank == 0)
				MPI_Send(&v, 1, MPI_LONG, 1, 9, MPI_COMM_WORLD);
			else
				MPI_Recv(&got, 1, MPI_LONG, 0, 9,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			CHECK(rank == 0 || got == v, "stream message %ld: %ld",
			      v, got);
		}
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		CHECK(y == size, "allreduce after a stream: %g", y);
	}
}

/* See "late" above. */
#define LONG_WAIT_US 8000
static void late(int iters)
{
	double used = 0, wall = 0;

	for (int it = 0; it < iters; it++) {
		double c0, w0;
		int x = 1, y;

		for (int k = 0; k < 50; k++) {
			MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM,
				      MPI_COMM_WORLD);
			CHECK(y == size, "allreduce before a late rank: %d", y);
		}
		if (rank == 0)
			usleep(LONG_WAIT_US);
		c0 = cpu_us();
		w0 = now_us();
		MPI_Barrier(MPI_COMM_WORLD);
		used += cpu_us() - c0;
		wall += now_us() - w0;
	}
	CHECK(rank == 0 || used < 0.3 * wall,
	      "rank %d used %.0f us of CPU in %.0f us of waits for a late "
	      "rank after short ones: it did not sleep",
	      rank, used, wall);
}

static int passed(int barrier)
{
	if (barrier)
		MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("test_node_coll: passed\n");
	MPI_Finalize();
	return 0;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 20, provided;
	const char *mode = argc > 2 ? argv[2] : "";
	MPI_Comm rev, dup;

	if (!strcmp(mode, "threads")) {
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		MPI_Comm_size(MPI_COMM_WORLD, &size);
		CHECK(provided == MPI_THREAD_MULTIPLE, "no MPI_THREAD_MULTIPLE");
		threads(iters);
		return passed(1);
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(mode, "wake")) {
		woken(iters);
		return passed(1);
	}
	if (!strcmp(mode, "stream")) {
		stream(iters);
		return passed(1);
	}
	if (!strcmp(mode, "late")) {
		late(iters);
		return passed(1);
	}
	if (!strcmp(mode, "exit") || !strcmp(mode, "alltoall")) {
		int ints = argc > 3 ? atoi(argv[3]) : 1;

		for (int it = 0; it < iters; it++)
			if (mode[0] == 'e')
				allreduce_ints(MPI_COMM_WORLD, it, ints, 0);
			else
				exchanges(MPI_COMM_WORLD, it, ints);
		return passed(0);
	}
	all(MPI_COMM_WORLD, iters);
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
	all(rev, iters);
	MPI_Comm_dup(rev, &dup);
	MPI_Comm_free(&rev);
	all(dup, iters);
	MPI_Comm_free(&dup);
	return passed(1);
}
