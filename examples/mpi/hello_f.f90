! hello_f.f90 - Fortran 90 (use mpi): every rank reports to rank 0.
program hello_f
  use mpi
  implicit none
  integer :: ierr, rank, size, i, r
  integer :: status(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (rank == 0) then
     print '(a,i0,a)', 'hello from rank 0 of ', size, ' (Fortran 90)'
     do i = 1, size - 1
        call MPI_Recv(r, 1, MPI_INTEGER, i, 0, MPI_COMM_WORLD, status, ierr)
        print '(a,i0)', 'hello from rank ', r
     end do
  else
     call MPI_Send(rank, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Finalize(ierr)
end program hello_f
