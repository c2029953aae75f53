/*
 * test_idle.c - the netmod's idle policy, both ways:
 *  - a rank blocked in MPI_Recv while its peer sleeps must give its core
 *    away (sleep on BIP's doorbell): it may use at most MAX_CPU of it;
 *  - a rank that computes while it waits, testing its receive between
 *    chunks of work (MPI_Test in a compute loop), is not idle and must not
 *    be slowed: a chunk may take at most MAX_SLOWDOWN times its time alone.
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

/* Rank 0: sleep, then send one message, twice (one per part). */
static void late_sender(double secs)
{
	struct timespec ts = { (time_t)secs,
			       (long)((secs - (time_t)secs) * 1e9) };
	int x = 0;

	for (int part = 0; part < 2; part++) {
		MPI_Barrier(MPI_COMM_WORLD);
		nanosleep(&ts, NULL);
		MPI_Send(&x, 1, MPI_INT, 1, part, MPI_COMM_WORLD);
	}
}

static int blocked_receiver(void)
{
	double c0, w0, frac;
	int x;

	MPI_Barrier(MPI_COMM_WORLD);
	c0 = cpu_s();
	w0 = wall_s();
	MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	frac = (cpu_s() - c0) / (wall_s() - w0);
	printf("blocked in MPI_Recv: %.1f%% of a core (limit %.0f%%)\n",
	       frac * 100, MAX_CPU * 100);
	return frac <= MAX_CPU;
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

	MPI_Irecv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &rq);
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

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	int rank, ok = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		late_sender(secs);
	} else if (rank == 1) {
		ok = blocked_receiver();
		ok &= computing_receiver();
		printf("idle policy: %s\n", ok ? "passed" : "FAILED");
	}
	MPI_Finalize();
	return !ok;
}
