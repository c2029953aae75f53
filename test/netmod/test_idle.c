/*
 * test_idle.c - the netmod's idle policy, both ways:
 *  - a rank blocked in MPI_Recv, MPI_Probe, MPI_Waitany or MPI_Waitsome
 *    while its peer sleeps must give its core away (sleep on BIP's
 *    doorbell): it may use at most MAX_CPU of it;
 *  - a rank that computes while it waits, testing its receive between
 *    chunks of work (MPI_Test in a compute loop), is not idle and must not
 *    be slowed: a chunk may take at most MAX_SLOWDOWN times its time alone;
 *  - a nonblocking call never sleeps: a rank polling MPI_Iprobe in a tight
 *    loop may yield its core but never blocks in the kernel (it may be
 *    waiting for something that is not a message, a flag in memory). A
 *    sleep is a voluntary context switch, a yield an involuntary one: at
 *    most MAX_SLEEPS of the first (a sleeping poller makes one a ms).
 * Usage: mpiexec -n 2 test_idle [seconds]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_CPU 0.25
#define MAX_SLOWDOWN 1.5
#define CHUNK_US 20.0
#define MAX_SLEEPS 20
#define PARTS 6

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Work without system calls, `spins` turns of it. */
static volatile double sink;
static void work(long spins)
{
	double x = 1.0;

	for (long i = 0; i < spins; i++)
		x = x * 1.0000001 + 1e-9;
	sink = x;
}

static long sleeps(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw;
}

/* Rank 0: sleep, then send one message, once per part. */
static void late_sender(double secs)
{
	struct timespec ts = { (time_t)secs,
			       (long)((secs - (time_t)secs) * 1e9) };
	int x = 0;

	for (int part = 0; part < PARTS; part++) {
		MPI_Barrier(MPI_COMM_WORLD);
		nanosleep(&ts, NULL);
		MPI_Send(&x, 1, MPI_INT, 1, part, MPI_COMM_WORLD);
	}
}

static int blocked_receiver(int tag, int probe)
{
	double c0, w0, frac;
	int x;

	MPI_Barrier(MPI_COMM_WORLD);
	c0 = cpu_s();
	w0 = wall_s();
	if (probe)
		MPI_Probe(0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Recv(&x, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	frac = (cpu_s() - c0) / (wall_s() - w0);
	printf("blocked in %s: %.1f%% of a core (limit %.0f%%)\n",
	       probe ? "MPI_Probe" : "MPI_Recv", frac * 100, MAX_CPU * 100);
	return frac <= MAX_CPU;
}

/* Blocked in MPI_Waitany or MPI_Waitsome (which MPICH builds from a loop
 * of its own) on the message with this tag and one that never comes. */
static int blocked_in_some(int tag, int some)
{
	double c0, w0, frac;
	int x[2], index[2], n;
	MPI_Request rq[2];
	MPI_Status st[2];

	MPI_Irecv(&x[0], 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &rq[0]);
	MPI_Irecv(&x[1], 1, MPI_INT, 0, 99, MPI_COMM_WORLD, &rq[1]);
	MPI_Barrier(MPI_COMM_WORLD);
	c0 = cpu_s();
	w0 = wall_s();
	if (some)
		MPI_Waitsome(2, rq, &n, index, st);
	else
		MPI_Waitany(2, rq, index, st);
	frac = (cpu_s() - c0) / (wall_s() - w0);
	MPI_Cancel(&rq[1]);
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	printf("blocked in %s: %.1f%% of a core (limit %.0f%%)\n",
	       some ? "MPI_Waitsome" : "MPI_Waitany", frac * 100,
	       MAX_CPU * 100);
	return index[0] == 0 && frac <= MAX_CPU;
}

static int computing_receiver(void)
{
	long spins = 1000, n = 0;
	double t0, alone, with;
	int x, flag = 0;
	MPI_Request rq;

	/* A chunk of about CHUNK_US, timed alone. */
	for (t0 = wall_s(); wall_s() - t0 < 0.05; n++)
		work(spins);
	spins = (long)(spins * CHUNK_US * 1e-6 * n / 0.05);
	t0 = wall_s();
	for (int i = 0; i < 2000; i++)
		work(spins);
	alone = (wall_s() - t0) / 2000;

	MPI_Irecv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &rq);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = wall_s();
	for (n = 0; !flag; n++) {
		work(spins);
		MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
	}
	with = (wall_s() - t0) / n;
	printf("computing with MPI_Test: %.1f us a chunk, %.1f us alone: "
	       "%.2f x (limit %.1f x)\n",
	       with * 1e6, alone * 1e6, with / alone, MAX_SLOWDOWN);
	return with / alone <= MAX_SLOWDOWN;
}

static int polling_receiver(void)
{
	long s0, n;
	double t0;
	int x, flag = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	s0 = sleeps();
	t0 = wall_s();
	for (n = 0; !flag; n++)
		MPI_Iprobe(0, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	t0 = wall_s() - t0;
	s0 = sleeps() - s0;
	MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	printf("polling MPI_Iprobe: %ld calls, %.2f us each, %ld sleeps "
	       "(limit %d)\n", n, t0 * 1e6 / n, s0, MAX_SLEEPS);
	return s0 <= MAX_SLEEPS;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	int rank, ok = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		late_sender(secs);
	} else if (rank == 1) {
		ok = blocked_receiver(0, 0);
		ok &= blocked_receiver(1, 1);
		ok &= computing_receiver();
		ok &= polling_receiver();
		ok &= blocked_in_some(4, 0);
		ok &= blocked_in_some(5, 1);
		printf("idle policy: %s\n", ok ? "passed" : "FAILED");
	}
	MPI_Finalize();
	return !ok;
}
