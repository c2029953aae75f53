c     cpi_f.f - pi by integration in Fortran 77 (include 'mpif.h'),
c     as the NAS benchmarks use MPI.
      program cpi_f
      implicit none
      include 'mpif.h'
      integer n, rank, size, i, ierr
      double precision h, x, s, mypi, pi, pi25dt
      parameter (pi25dt = 3.141592653589793238462643d0)

      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
      n = 1000000
      call MPI_BCAST(n, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
      h = 1.0d0 / n
      s = 0.0d0
      do i = rank + 1, n, size
         x = h * (dble(i) - 0.5d0)
         s = s + 4.0d0 / (1.0d0 + x * x)
      end do
      mypi = h * s
      call MPI_REDUCE(mypi, pi, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0,
     &                MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         print 10, pi, abs(pi - pi25dt), size
 10      format('pi is approximately ', f18.16, ', error ', es9.2,
     &          ' (', i0, ' ranks, Fortran 77)')
      end if
      call MPI_FINALIZE(ierr)
      end
