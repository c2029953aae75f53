/* cpi.c - pi by numerical integration, the classic MPICH example:
 * broadcast the interval count, sum the pieces with a reduction. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	const double PI25DT = 3.141592653589793238462643;
	int n = 1000000, rank, size;
	double h, sum = 0.0, mypi, pi;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
	h = 1.0 / n;
	for (int i = rank + 1; i <= n; i += size) {
		double x = h * (i - 0.5);

		sum += 4.0 / (1.0 + x * x);
	}
	mypi = h * sum;
	MPI_Reduce(&mypi, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("pi is approximately %.16f, error %.2e (%d ranks)\n", pi,
		       fabs(pi - PI25DT), size);
	MPI_Finalize();
	return fabs(pi - PI25DT) < 1e-9 || rank ? 0 : 1;
}
