/*
 * faults.c - MPI programs for the netmod's fault cases, one per mode:
 *   burst      rank 0 sends 100 short messages to rank 1 before rank 1
 *              receives any (run with settings that differ between the
 *              ranks: credits must be agreed, not assumed).
 *   cancel     rank 0 cancels a synchronous (rendezvous) send while rank 1
 *              computes: MPI_Wait after MPI_Cancel must return at once. If
 *              the send could not be cancelled, rank 1 must still receive
 *              the data as it was when it was sent.
 *   truncate   rank 1 receives 3 GiB (rendezvous) and 1.5 GiB (three-way,
 *              run with a raised threshold) messages into a 1 MiB buffer:
 *              MPI_ERR_TRUNCATE, without ever holding the whole message.
 *   dead-long  3 ranks: rank 2 answers a three-way send from rank 0 and
 *              dies; rank 0's send fails with MPIX_ERR_PROC_FAILED and its
 *              traffic with rank 1 goes on.
 *   dead-recv  rank 1 ends without closing anything (_exit; Hydra takes
 *              a death by signal on one host for the job's end) while
 *              rank 0 only waits to receive from it: the receive fails with MPIX_ERR_PROC_FAILED and a
 *              message that names rank 1, its pid and its host; a
 *              receive from rank 1 posted then fails at once.
 *   dead-coll  the same, with rank 0 waiting for rank 1 in a small
 *              allreduce (through shared memory): it fails the same way.
 *   dead-bcast 3 ranks: rank 2 dies; rank 0 broadcasts small messages to
 *              the others until a call fails (through shared memory, it
 *              soon has to wait for rank 2 to free a line). Rank 1, which
 *              only waits for rank 0, must fail too, not wait for ever.
 *   dead-bcast-pieces  the same with bcasts of 2 pieces (320000 bytes):
 *              the root fails in the middle of one, and rank 1 with it.
 *   dead-alltoall  3 ranks: rank 2 dies; the others run alltoalls of
 *              64 KiB blocks, read where they lie (bip_coll.c), until one
 *              fails: both must fail naming rank 2, not wait for ever.
 *   dead-eager rank 1 dies after the first piece of an eager message
 *              left (run with every rank on a host of its own and 2
 *              credits: the other pieces wait for credits): rank 0's
 *              receive, matched by that piece, fails with
 *              MPIX_ERR_PROC_FAILED instead of waiting for the rest.
 *   fifo-full  3 ranks, 2 credits, one BIP tag, a receive FIFO of one: rank
 *              2 keeps the tag busy (its rendezvous is matched, then it
 *              sleeps); rank 1's second three-way announcement finds the
 *              FIFO full: the message fails at both ends, and its credit
 *              comes back (rank 1's next message gets through).
 *   refused    rank 1's BIP refuses its second and later long receives
 *              (no_lrecv.c, one BIP tag): rank 0 sends three three-way
 *              messages; the second waits for the tag and is refused when
 *              it frees, the third at once. The first arrives; the other
 *              two fail at both ends, and a short message still gets
 *              through.
 *   refused-rndv  the same for a rendezvous message of 1 MiB in fragments
 *              of 256 KiB: the first is posted, the second refused (its
 *              answer may come while the first is still leaving): both
 *              ends fail, and a short message still gets through.
 *   refused-am the same for an active message (an accumulate of 64 KiB,
 *              announced): rank 1's BIP refuses its receive. MPICH's
 *              generic RMA drops a request's error, and the accumulate
 *              would be lost without a word: rank 0's fence must fail,
 *              and rank 1 must fail with the refusal.
 *   nomem      rank 1 (no_malloc.c preloaded) has no memory for the data
 *              of a three-way message that came first, of a three-way and
 *              a rendezvous message into a non-contiguous receive, and of
 *              an eager one: each receive fails, each send whose sender
 *              waits for the receiver fails too, and a short message
 *              still gets through.
 *   nomem-am   the same for a put of 200000 bytes into a non-contiguous
 *              target datatype: rank 0's fence fails, and rank 1 fails
 *              with the error, as in refused-am.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int rank, size;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void burst(int unused)
{
	int v[100];

	if (rank == 0) {
		MPI_Request r[100];

		for (int i = 0; i < 100; i++) {
			v[i] = i * 3;
			MPI_Isend(&v[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &r[i]);
		}
		MPI_Waitall(100, r, MPI_STATUSES_IGNORE);
	} else if (rank == 1) {
		usleep(300000);
		for (int i = 0; i < 100; i++) {
			MPI_Recv(&v[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			CHECK(v[i] == i * 3, "message %d: %d", i, v[i]);
		}
		printf("rank 1: 100 messages of a burst received\n");
	}
}

static void cancel(int unused)
{
	enum { N = 100000 };
	static char buf[N];
	int cancelled = 0, one = 1;
	MPI_Request r;
	MPI_Status st;

	for (int i = 0; i < N; i++)
		buf[i] = (char)(i * 5);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		double t;

		/* A short message first: with two credits, it takes the
		 * last ordinary one, and the announcement then waits. */
		MPI_Send(&one, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
		MPI_Issend(buf, N, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &r);
		usleep(100000);
		t = now();
		MPI_Cancel(&r);
		MPI_Wait(&r, &st);
		t = now() - t;
		MPI_Test_cancelled(&st, &cancelled);
		CHECK(t < 1.0, "MPI_Wait after MPI_Cancel took %.2f s", t);
		/* Not cancelled: rank 1 must get the data as sent. */
		memset(buf, 0, N);
		MPI_Send(&cancelled, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
		printf("rank 0: MPI_Wait after MPI_Cancel: %.3f s, %s\n", t,
		       cancelled ? "cancelled" : "not cancelled (delivered)");
	} else if (rank == 1) {
		sleep(3); /* computing: no MPI call */
		MPI_Recv(&one, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
		MPI_Recv(&cancelled, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &st);
		if (!cancelled) {
			static char in[N];

			MPI_Recv(in, N, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &st);
			CHECK(memcmp(in, buf, N) == 0,
			      "the uncancelled message's data changed");
		}
	}
}

static long peak_rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

static void truncate_recv(int unused)
{
	/* 3 GiB and 1.5 GiB of doubles; the sender's pages are never
	 * written, so they cost it no memory either. */
	const int counts[2] = { 402653184, 201326592 };
	const int cap = 131072; /* 1 MiB */
	double *big = malloc((size_t)counts[0] * sizeof(double));

	CHECK(big, "no 3 GiB of address space");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int k = 0; k < 2; k++) {
		if (rank == 0) {
			int rc = MPI_Send(big, counts[k], MPI_DOUBLE, 1, k,
					  MPI_COMM_WORLD);

			CHECK(rc == MPI_SUCCESS, "send %d failed", k);
		} else if (rank == 1) {
			MPI_Status st;
			int rc, cls, n;

			rc = MPI_Recv(big, cap, MPI_DOUBLE, 0, k,
				      MPI_COMM_WORLD, &st);
			MPI_Error_class(rc, &cls);
			MPI_Get_count(&st, MPI_DOUBLE, &n);
			CHECK(cls == MPI_ERR_TRUNCATE,
			      "message %d: error class %d, not MPI_ERR_TRUNCATE",
			      k, cls);
			CHECK(n == cap, "message %d: %d doubles received", k,
			      n);
		}
	}
	if (rank == 1) {
		long mb = peak_rss_mb();

		CHECK(mb < 512, "the receiver held %ld MB at its peak", mb);
		printf("rank 1: truncated 3 GiB and 1.5 GiB messages, peak "
		       "memory %ld MB\n",
		       mb);
	}
	free(big);
}

static void dead_long(int unused)
{
	/* Far more than a ring holds: whatever rank 2's last progress call
	 * takes in after the announcement's answer, it cannot be the whole
	 * message (100 KB could be, and then the send rightly succeeded). */
	enum { N = 16 << 20 };
	static char buf[N], in[N];
	int cls, x = 7, rc;
	MPI_Request r;

	CHECK(size == 3, "run on 3 ranks");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 2) {
		/* Answer the announcement (the receive is posted), then die
		 * before the data comes. */
		MPI_Irecv(in, N, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &r);
		MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		_exit(0);
	}
	if (rank == 0) {
		MPI_Isend(buf, N, MPI_CHAR, 2, 1, MPI_COMM_WORLD, &r);
		MPI_Send(&x, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
		rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPIX_ERR_PROC_FAILED,
		      "send to the dead rank: class %d, not "
		      "MPIX_ERR_PROC_FAILED",
		      cls);
	}
	/* Ranks 0 and 1 go on. */
	for (int i = 0; i < 10; i++) {
		int peer = 1 - rank;

		rc = MPI_Sendrecv(buf, N, MPI_CHAR, peer, 3, in, N, MPI_CHAR,
				  peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		CHECK(rc == MPI_SUCCESS, "traffic with a live rank failed");
	}
	printf("rank %d: a dead rank's failed send did not stop the others\n",
	       rank);
	/* The dead rank cannot take part in MPI_Finalize's exchanges. */
	fflush(stdout);
	_exit(0);
}

/* Rank 1 dies; rank 0 waits for it in a receive or (coll) a small
 * allreduce, which must fail naming it. */
static void dead_peer(int coll)
{
	char msg[MPI_MAX_ERROR_STRING];
	int x = 1, y, rc, cls, len;

	CHECK(size == 2, "run on 2 ranks");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	/* A communicator's first few small collectives go by messages. */
	for (int i = 0; i < 10; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		printf("rank 1: pid %d dies\n", (int)getpid());
		fflush(stdout);
		_exit(0);
	}
	if (coll)
		rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	else
		rc = MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD,
			      MPI_STATUS_IGNORE);
	MPI_Error_class(rc, &cls);
	MPI_Error_string(rc, msg, &len);
	printf("rank 0: %s with the dead rank: %s\n",
	       coll ? "allreduce" : "receive", msg);
	CHECK(cls == MPIX_ERR_PROC_FAILED, "error class %d", cls);
	/* A receive posted after the death, that only rank 1 could match,
	 * fails at once; one from any source stays posted. */
	MPI_Request rq[2];
	int done = 0;

	MPI_Irecv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &rq[0]);
	MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &rq[1]);
	rc = MPI_Test(&rq[0], &done, MPI_STATUS_IGNORE);
	MPI_Error_class(rc, &cls);
	CHECK(done && cls == MPIX_ERR_PROC_FAILED,
	      "a receive posted after the death: done %d, class %d", done,
	      cls);
	rc = MPI_Test(&rq[1], &done, MPI_STATUS_IGNORE);
	CHECK(rc == MPI_SUCCESS && !done,
	      "a wildcard receive after the death: done %d, rc %d", done, rc);
	fflush(stdout);
	_exit(0);
}

static int bcast_of(int *x, int *y, int n)
{
	(void)y;
	return MPI_Bcast(x, n, MPI_INT, 0, MPI_COMM_WORLD);
}

static int alltoall_of(int *x, int *y, int n)
{
	return MPI_Alltoall(x, n, MPI_INT, y, n, MPI_INT, MPI_COMM_WORLD);
}

/* 3 ranks: rank 2 dies; the others call coll (n ints, n a block for an
 * alltoall) until one fails, and say how. */
static void dead_in(const char *name, int (*coll)(int *, int *, int), int n)
{
	char msg[MPI_MAX_ERROR_STRING];
	int *x = calloc((size_t)n * 3, sizeof(int));
	int *y = calloc((size_t)n * 3, sizeof(int)), rc = MPI_SUCCESS, len, i;

	CHECK(size == 3 && x && y, "run on 3 ranks");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	/* A communicator's first few small collectives go by messages. */
	for (i = 0; i < 10; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 2)
		_exit(0);
	for (i = 0; i < 100000 && rc == MPI_SUCCESS; i++)
		rc = coll(x, y, n);
	CHECK(rc != MPI_SUCCESS, "100000 %ss with a dead rank went through",
	      name);
	MPI_Error_string(rc, msg, &len);
	printf("rank %d: %s %d failed: %s\n", rank, name, i, msg);
	fflush(stdout);
	_exit(0);
}

static void dead_bcast(int n)
{
	dead_in("bcast", bcast_of, n);
}

static void dead_alltoall(int n)
{
	dead_in("alltoall", alltoall_of, n);
}

static void dead_eager(int unused)
{
	enum { N = 10000 };
	static char buf[N];
	MPI_Request req;
	int rc, cls;

	CHECK(size == 2, "run on 2 ranks");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 0)
		MPI_Irecv(buf, N, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &req);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		MPI_Isend(buf, N, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &req);
		printf("rank 1: sent the first piece, dies\n");
		fflush(stdout);
		_exit(0);
	}
	rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Error_class(rc, &cls);
	printf("rank 0: eager receive from the dead rank: class %d\n", cls);
	CHECK(cls == MPIX_ERR_PROC_FAILED, "error class %d", cls);
	fflush(stdout);
	_exit(0);
}

static void fifo_full(int unused)
{
	enum { BIG = 300000, MID = 10000 };
	static char big[BIG], mid[2][MID];
	MPI_Request r[2];
	int x = 0, rc, cls;

	CHECK(size == 3, "run on 3 ranks");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 2) {
		MPI_Isend(big, BIG, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &r[0]);
		sleep(4); /* the receiver's answer waits: its tag stays busy */
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		sleep(1);
		MPI_Isend(mid[0], MID, MPI_CHAR, 0, 6, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(mid[1], MID, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &r[1]);
		MPI_Send(&x, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		/* The second announcement met the full FIFO: it fails here
		 * too, rather than wait for ever. */
		rc = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_OTHER,
		      "the send the full FIFO refused: class %d", cls);
		printf("rank 1: the send the full FIFO refused failed\n");
	} else {
		double t;

		/* Both announcements come meanwhile (the second finds the
		 * FIFO full). */
		MPI_Irecv(big, BIG, MPI_CHAR, 2, 5, MPI_COMM_WORLD, &r[0]);
		for (t = now(); now() - t < 2;)
			MPI_Test(&r[0], &x, MPI_STATUS_IGNORE);
		/* rank 1's message needs the credit of the announcement
		 * that failed: 2 s to get here, or it was lost. */
		alarm(2);
		rc = MPI_Recv(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD,
			      MPI_STATUS_IGNORE);
		alarm(0);
		CHECK(rc == MPI_SUCCESS, "rank 1's message after the error");
		MPI_Recv(mid[0], MID, MPI_CHAR, 1, 6, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		printf("rank 0: a refused announcement gave its credit back\n");
		/* And its receive fails with the FIFO's error. */
		rc = MPI_Recv(mid[1], MID, MPI_CHAR, 1, 7, MPI_COMM_WORLD,
			      MPI_STATUS_IGNORE);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_OTHER,
		      "the receive the full FIFO refused: class %d", cls);
		printf("rank 0: the receive the full FIFO refused failed\n");
	}
}

static void refused(int unused)
{
	enum { MID = 100000 };
	static char buf[3][MID];
	MPI_Request r[2];
	int rc[3], x = 0;

	CHECK(size == 2, "run on 2 ranks");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 0) {
		for (int i = 0; i < MID; i++)
			buf[0][i] = (char)(i * 7);
		MPI_Isend(buf[0], MID, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(buf[1], MID, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &r[1]);
		rc[0] = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		rc[1] = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		rc[2] = MPI_Send(buf[2], MID, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
		x = 42;
		CHECK(MPI_Send(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD) ==
			      MPI_SUCCESS, "the short message after");
	} else {
		MPI_Irecv(buf[0], MID, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(buf[1], MID, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &r[1]);
		rc[0] = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		rc[1] = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		rc[2] = MPI_Recv(buf[2], MID, MPI_CHAR, 0, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		CHECK(MPI_Recv(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD,
			       MPI_STATUS_IGNORE) == MPI_SUCCESS && x == 42,
		      "the short message after");
		for (int i = 0; i < MID; i++)
			CHECK(buf[0][i] == (char)(i * 7), "byte %d", i);
	}
	CHECK(rc[0] == MPI_SUCCESS, "rank %d: the first message failed", rank);
	CHECK(rc[1] != MPI_SUCCESS && rc[2] != MPI_SUCCESS,
	      "rank %d: a refused receive did not fail (%d, %d)", rank, rc[1],
	      rc[2]);
	printf("rank %d: refused receives failed at both ends\n", rank);
}

static void refused_rndv(int unused)
{
	enum { BIG = 1 << 20 };
	static char buf[BIG];
	int rc, x = 0;

	CHECK(size == 2, "run on 2 ranks");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 0) {
		rc = MPI_Send(buf, BIG, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
		x = 42;
		CHECK(MPI_Send(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD) ==
			      MPI_SUCCESS, "the short message after");
	} else {
		rc = MPI_Recv(buf, BIG, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
			      MPI_STATUS_IGNORE);
		CHECK(MPI_Recv(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD,
			       MPI_STATUS_IGNORE) == MPI_SUCCESS && x == 42,
		      "the short message after");
	}
	CHECK(rc != MPI_SUCCESS, "rank %d: a refused fragment did not fail",
	      rank);
	printf("rank %d: a refused fragment failed\n", rank);
}

static void refused_am(int unused)
{
	enum { N = 8192 };
	static double a[N], w[N];
	MPI_Win win;
	int rc;

	CHECK(size == 2, "run on 2 ranks");
	MPI_Win_create(w, sizeof(w), sizeof(double), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	MPI_Win_fence(0, win);
	if (rank == 0)
		MPI_Accumulate(a, N, MPI_DOUBLE, 1, 0, N, MPI_DOUBLE, MPI_SUM,
			       win);
	rc = MPI_Win_fence(0, win);
	printf("rank %d: fence after the accumulate %s\n", rank,
	       rc ? "failed" : "succeeded");
	fflush(stdout);
	MPI_Win_free(&win);
}

/* Arm the preloaded no_malloc.c, in the rank that has it. */
static void no_malloc(size_t size)
{
	void (*arm)(size_t);

	*(void **)&arm = dlsym(RTLD_DEFAULT, "no_malloc_arm");
	if (arm)
		arm(size);
}

/* The class of rc, MPI_SUCCESS's own when it is one. */
static int class_of(int rc)
{
	int cls = MPI_SUCCESS;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	return cls;
}

/* Wait up to 5 s for req, whatever errors progress reports meanwhile (a
 * blocking call would return the first): its own error class, or -1 if it
 * never completed. */
static int wait_class(MPI_Request *req)
{
	double t = now();
	int flag = 0, rc;

	while (now() - t < 5) {
		rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
		if (flag)
			return class_of(rc);
	}
	return -1;
}

static void nomem(int unused)
{
	/* Three-way (between the eager limit and the rendezvous threshold)
	 * and eager sizes (eager behind the others since the sender received
	 * in between: a message right behind another above the stream limit
	 * goes three-way); a temporary buffer of either takes malloc of 64
	 * bytes more than the next power of two (bip_buf.c). */
	enum { MID = 200000, MID_BUF = 64 + 262144 };
	enum { EAGER = 6000, EAGER_BUF = 64 + 8192 };
	static char buf[2 * MID];
	MPI_Datatype mid_odd, eager_odd;
	MPI_Request req;
	int rc[4], x = 0;

	CHECK(size == 2, "run on 2 ranks");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	/* Every other byte: data that lands through a temporary buffer. */
	MPI_Type_vector(MID, 1, 2, MPI_CHAR, &mid_odd);
	MPI_Type_vector(EAGER, 1, 2, MPI_CHAR, &eager_odd);
	MPI_Type_commit(&mid_odd);
	MPI_Type_commit(&eager_odd);
	if (rank == 0) {
		rc[0] = MPI_Send(buf, MID, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
		rc[1] = MPI_Send(buf, MID, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
		rc[2] = MPI_Ssend(buf, MID, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
		CHECK(MPI_Recv(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD,
			       MPI_STATUS_IGNORE) == MPI_SUCCESS,
		      "the short message between");
		rc[3] = MPI_Send(buf, EAGER, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
		x = 42;
		CHECK(MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD) ==
			      MPI_SUCCESS, "the short message after");
		/* The eager send is over before the receiver looks. */
		CHECK(class_of(rc[0]) == MPI_ERR_OTHER &&
			      class_of(rc[1]) == MPI_ERR_OTHER &&
			      class_of(rc[2]) == MPI_ERR_OTHER &&
			      rc[3] == MPI_SUCCESS,
		      "sends: classes %d %d %d %d", class_of(rc[0]),
		      class_of(rc[1]), class_of(rc[2]), class_of(rc[3]));
	} else {
		MPI_Request early;
		double t;

		no_malloc(MID_BUF);
		no_malloc(EAGER_BUF);
		/* The second three-way message finds its receive posted;
		 * the first comes before its own: held, then fetched, which
		 * fails; so do the rendezvous and the eager message that
		 * come meanwhile, once their receives are posted. */
		MPI_Irecv(buf + 1, 1, mid_odd, 0, 2, MPI_COMM_WORLD, &early);
		for (t = now(); now() - t < 1;)
			MPI_Iprobe(0, 9, MPI_COMM_WORLD, &x, MPI_STATUS_IGNORE);
		MPI_Irecv(buf, MID, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req);
		rc[0] = wait_class(&req);
		rc[1] = wait_class(&early);
		MPI_Irecv(buf, 1, mid_odd, 0, 3, MPI_COMM_WORLD, &req);
		rc[2] = wait_class(&req);
		CHECK(MPI_Send(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD) ==
			      MPI_SUCCESS, "the short message between");
		MPI_Irecv(buf, 1, eager_odd, 0, 4, MPI_COMM_WORLD, &req);
		rc[3] = wait_class(&req);
		no_malloc(0);
		CHECK(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD,
			       MPI_STATUS_IGNORE) == MPI_SUCCESS && x == 42,
		      "the short message after");
		for (int i = 0; i < 4; i++)
			CHECK(rc[i] == MPI_ERR_OTHER, "receive %d: class %d",
			      i, rc[i]);
	}
	printf("rank %d: messages without memory failed\n", rank);
	MPI_Type_free(&mid_odd);
	MPI_Type_free(&eager_odd);
}

static void nomem_am(int unused)
{
	enum { MID = 200000 };
	static char a[MID], w[2 * MID];
	MPI_Datatype odd;
	MPI_Win win;
	int rc;

	CHECK(size == 2, "run on 2 ranks");
	MPI_Type_vector(MID, 1, 2, MPI_CHAR, &odd);
	MPI_Type_commit(&odd);
	MPI_Win_create(w, sizeof(w), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	MPI_Win_fence(0, win);
	/* The data lands in a buffer of its size, to be unpacked. */
	no_malloc(MID);
	if (rank == 0)
		MPI_Put(a, MID, MPI_CHAR, 1, 0, 1, odd, win);
	rc = MPI_Win_fence(0, win);
	no_malloc(0);
	printf("rank %d: fence after the put %s\n", rank,
	       rc ? "failed" : "succeeded");
	fflush(stdout);
	MPI_Win_free(&win);
	MPI_Type_free(&odd);
}

/* The modes, by the name faults.sh gives. */
static const struct {
	const char *name;
	void (*run)(int);
	int arg;
} modes[] = {
	{ "burst", burst, 0 },
	{ "cancel", cancel, 0 },
	{ "truncate", truncate_recv, 0 },
	{ "dead-long", dead_long, 0 },
	{ "dead-recv", dead_peer, 0 },
	{ "dead-coll", dead_peer, 1 },
	{ "dead-bcast", dead_bcast, 1 },
	{ "dead-bcast-pieces", dead_bcast, 80000 },
	{ "dead-alltoall", dead_alltoall, 16384 },
	{ "dead-eager", dead_eager, 0 },
	{ "fifo-full", fifo_full, 0 },
	{ "refused", refused, 0 },
	{ "refused-rndv", refused_rndv, 0 },
	{ "refused-am", refused_am, 0 },
	{ "nomem", nomem, 0 },
	{ "nomem-am", nomem_am, 0 },
	{ NULL, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (i = 0; modes[i].name && strcmp(mode, modes[i].name); i++)
		;
	CHECK(modes[i].name, "unknown mode '%s'", mode);
	modes[i].run(modes[i].arg);
	MPI_Finalize();
	return 0;
}
