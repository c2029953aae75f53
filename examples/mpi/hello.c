/* hello.c - every rank reports; rank 0 gathers the names over MPI. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, len;
	char name[MPI_MAX_PROCESSOR_NAME];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(name, &len);
	if (rank == 0) {
		printf("hello from rank 0 of %d on %s\n", size, name);
		for (int i = 1; i < size; i++) {
			int r;

			MPI_Recv(&r, 1, MPI_INT, i, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			printf("hello from rank %d of %d\n", r, size);
		}
	} else {
		MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
