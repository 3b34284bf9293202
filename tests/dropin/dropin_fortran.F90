! The drop-in library from Fortran: every intercepted collective through the Fortran
! bindings (mpif.h / use mpi, or use mpi_f08 when built with -DUSE_F08), checked element by
! element against values computed locally, with MPI_IN_PLACE, a derived datatype and an
! error code; then the non-blocking forms completed by MPI_WAIT, MPI_WAITALL, MPI_TEST and
! MPI_WAITANY, and a persistent one (Open MPI's MPIX_ALLTOALL_INIT) started twice. Run preloaded with LIBCOMM_VERBOSE=1: the log must show that the calls reached
! libcomm (ctest checks it). Prints "dropin_fortran: PASS" on rank 0 when every check held.
program dropin_fortran
#ifdef USE_F08
  use mpi_f08
  use mpi_f08_ext
#else
  use mpi
  use mpi_ext
#endif
  implicit none
#ifdef USE_F08
  type(MPI_Datatype) :: pair
  type(MPI_Comm) :: comm
  type(MPI_Request) :: req, reqs(3)
#else
  integer :: pair, comm
  integer :: req, reqs(3)
#endif
  integer :: ierr, p, me, k, j, bad, total, round, index
  logical :: flag
  ! asynchronous: the non-blocking calls below write these after the call has returned
  integer, allocatable, asynchronous :: si(:), ri(:), sc(:), sd(:), rc(:), rd(:), ga(:), gb(:)
  double precision, allocatable, asynchronous :: sx(:), rx(:), sy(:)

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  bad = 0

  ! MPI_ALLTOALL: 3 integers to every rank, value 1000 * source + 10 * destination + k
  allocate(si(3 * p), ri(3 * p))
  do j = 0, p - 1
    do k = 1, 3
      si(3 * j + k) = 1000 * me + 10 * j + k
    end do
  end do
  ri = -1
  call MPI_Alltoall(si, 3, MPI_INTEGER, ri, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect(ierr == MPI_SUCCESS, 'alltoall ierror')
  do j = 0, p - 1
    do k = 1, 3
      call expect(ri(3 * j + k) == 1000 * j + 10 * me + k, 'alltoall value')
    end do
  end do
  ! MPI_IN_PLACE
  ri = si
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ri, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 0, p - 1
    do k = 1, 3
      call expect(ri(3 * j + k) == 1000 * j + 10 * me + k, 'alltoall MPI_IN_PLACE value')
    end do
  end do
  ! a contiguous derived type of 3 integers against plain integers
  call MPI_Type_contiguous(3, MPI_INTEGER, pair, ierr)
  call MPI_Type_commit(pair, ierr)
  ri = -1
  call MPI_Alltoall(si, 1, pair, ri, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 0, p - 1
    call expect(ri(3 * j + 2) == 1000 * j + 10 * me + 2, 'alltoall derived type value')
  end do
  call MPI_Type_free(pair, ierr)

  ! MPI_ALLTOALLV: j + 1 integers to rank j, packed
  allocate(sc(p), sd(p), rc(p), rd(p))
  do j = 0, p - 1
    sc(j + 1) = j + 1
    rc(j + 1) = me + 1
  end do
  sd(1) = 0
  rd(1) = 0
  do j = 2, p
    sd(j) = sd(j - 1) + sc(j - 1)
    rd(j) = rd(j - 1) + rc(j - 1)
  end do
  deallocate(si, ri)
  allocate(si(sd(p) + sc(p)), ri(rd(p) + rc(p)))
  do j = 0, p - 1
    do k = 1, sc(j + 1)
      si(sd(j + 1) + k) = 1000 * me + 10 * j + k
    end do
  end do
  ri = -1
  call MPI_Alltoallv(si, sc, sd, MPI_INTEGER, ri, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect(ierr == MPI_SUCCESS, 'alltoallv ierror')
  do j = 0, p - 1
    do k = 1, rc(j + 1)
      call expect(ri(rd(j + 1) + k) == 1000 * j + 10 * me + k, 'alltoallv value')
    end do
  end do

  ! MPI_ALLGATHER (and in place), MPI_ALLGATHERV
  deallocate(si, ri)
  allocate(si(2), ri(2 * p))
  si = (/ 7 * me, 7 * me + 1 /)
  call MPI_Allgather(si, 2, MPI_INTEGER, ri, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 0, p - 1
    call expect(ri(2 * j + 1) == 7 * j .and. ri(2 * j + 2) == 7 * j + 1, 'allgather value')
  end do
  ri = -1
  ri(2 * me + 1) = 7 * me
  ri(2 * me + 2) = 7 * me + 1
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ri, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 0, p - 1
    call expect(ri(2 * j + 1) == 7 * j, 'allgather MPI_IN_PLACE value')
  end do
  do j = 0, p - 1
    rc(j + 1) = 2
    rd(j + 1) = 2 * j
  end do
  ri = -1
  call MPI_Allgatherv(si, 2, MPI_INTEGER, ri, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 0, p - 1
    call expect(ri(2 * j + 2) == 7 * j + 1, 'allgatherv value')
  end do

  ! MPI_REDUCE_SCATTER and _BLOCK: 2 doubles per rank, sums over ranks of (rank + 1) * index
  allocate(sx(2 * p), rx(2))
  do k = 1, 2 * p
    sx(k) = dble((me + 1) * k)
  end do
  rc = 2
  call MPI_Reduce_scatter(sx, rx, rc, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect(ierr == MPI_SUCCESS, 'reduce_scatter ierror')
  call expect(rx(1) == dble(p * (p + 1) / 2 * (2 * me + 1)), 'reduce_scatter value')
  call MPI_Reduce_scatter_block(sx, rx, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect(rx(2) == dble(p * (p + 1) / 2 * (2 * me + 2)), 'reduce_scatter_block value')

  ! Non-blocking: MPI_IALLTOALL completed by MPI_WAIT
  deallocate(si, ri)
  allocate(si(3 * p), ri(3 * p))
  do j = 0, p - 1
    do k = 1, 3
      si(3 * j + k) = 1000 * me + 10 * j + k
    end do
  end do
  ri = -1
  call MPI_Ialltoall(si, 3, MPI_INTEGER, ri, 3, MPI_INTEGER, MPI_COMM_WORLD, req, ierr)
  call expect(ierr == MPI_SUCCESS, 'ialltoall ierror')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call expect(req == MPI_REQUEST_NULL, 'ialltoall: MPI_WAIT frees the request')
  do j = 0, p - 1
    do k = 1, 3
      call expect(ri(3 * j + k) == 1000 * j + 10 * me + k, 'ialltoall value')
    end do
  end do
  ! MPI_IALLGATHER, MPI_IALLGATHERV and MPI_IALLTOALLV at once, completed by MPI_WAITALL
  allocate(ga(2 * p), gb(2 * p))
  ga = -1
  gb = -1
  do j = 0, p - 1
    rc(j + 1) = 2
    rd(j + 1) = 2 * j
    sc(j + 1) = 3
    sd(j + 1) = 3 * j
  end do
  call MPI_Iallgather(si, 2, MPI_INTEGER, ga, 2, MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Iallgatherv(si, 2, MPI_INTEGER, gb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, reqs(2), ierr)
  ri = -1
  call MPI_Ialltoallv(si, sc, sd, MPI_INTEGER, ri, sc, sd, MPI_INTEGER, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
  call expect(ierr == MPI_SUCCESS, 'waitall ierror')
  do j = 0, p - 1
    call expect(ga(2 * j + 1) == 1000 * j + 1 .and. ga(2 * j + 2) == 1000 * j + 2, 'iallgather value')
    call expect(gb(2 * j + 1) == 1000 * j + 1 .and. gb(2 * j + 2) == 1000 * j + 2, 'iallgatherv value')
    call expect(ri(3 * j + 3) == 1000 * j + 10 * me + 3, 'ialltoallv value')
  end do
  ! MPI_IREDUCE_SCATTER_BLOCK polled with MPI_TEST, MPI_IREDUCE_SCATTER with MPI_WAITANY
  rx = -1
  call MPI_Ireduce_scatter_block(sx, rx, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
  end do
  call expect(rx(2) == dble(p * (p + 1) / 2 * (2 * me + 2)), 'ireduce_scatter_block value')
  allocate(sy(2))
  sy = -1
  rc = 2
  call MPI_Ireduce_scatter(sx, sy, rc, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, reqs(2), ierr)
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Waitany(2, reqs, index, MPI_STATUS_IGNORE, ierr)
  call expect(index == 2, 'waitany index (1-based)')
  call expect(reqs(2) == MPI_REQUEST_NULL, 'waitany frees the request')
  call expect(sy(1) == dble(p * (p + 1) / 2 * (2 * me + 1)), 'ireduce_scatter value')

  ! Persistent: MPIX_ALLTOALL_INIT, started twice with new input
  call MPIX_Alltoall_init(si, 3, MPI_INTEGER, ri, 3, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
  call expect(ierr == MPI_SUCCESS, 'mpix_alltoall_init ierror')
  do round = 1, 2
    do j = 0, p - 1
      do k = 1, 3
        si(3 * j + k) = 1000 * me + 10 * j + k + 100000 * round
      end do
    end do
    ri = -1
    call MPI_Start(req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    do j = 0, p - 1
      do k = 1, 3
        call expect(ri(3 * j + k) == 1000 * j + 10 * me + k + 100000 * round, 'persistent alltoall value')
      end do
    end do
  end do
  call expect(req /= MPI_REQUEST_NULL, 'a persistent request stays after MPI_WAIT')
  call MPI_Request_free(req, ierr)
  call expect(req == MPI_REQUEST_NULL, 'MPI_REQUEST_FREE')

  ! An error code comes back in IERROR (errors returned, not fatal, on a duplicate).
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN, ierr)
  deallocate(si, ri)
  allocate(si(4 * p), ri(4 * p))
  call MPI_Alltoall(si, -1, MPI_INTEGER, ri, -1, MPI_INTEGER, comm, ierr)
  call expect(ierr /= MPI_SUCCESS, 'a negative count returns an error code')
  call MPI_Comm_free(comm, ierr)

  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) then
    if (total == 0) then
      print '(a)', 'dropin_fortran: PASS'
    else
      print '(a, i0, a)', 'dropin_fortran: FAIL (', total, ' failed checks)'
    end if
  end if
  call MPI_Finalize(ierr)

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      bad = bad + 1
      print '(a, i0, 2a)', 'rank ', me, ': FAIL: ', what
    end if
  end subroutine expect

end program dropin_fortran
