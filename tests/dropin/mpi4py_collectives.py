#!/usr/bin/python3
"""A Python program through the drop-in: mpi4py's collectives, run under LD_PRELOAD.

mpi4py builds the count and displacement arrays of MPI_Iallgatherv / MPI_Ialltoallv itself
and may free them before MPI_Wait (a crash of libcomm_mpi, issue 38). Every call here is
checked against the values each rank must receive; the non-blocking ones are completed
after other Python work has churned the heap. Every call must have been taken by the
drop-in (libcomm_mpi_last_route, not "pmpi"); with --forced every call must report the
algorithm its operation's LIBCOMM_<OP> variable names, which must be one of libcomm's own:
a run where libcomm is bypassed (not preloaded, or native) fails.

  mpirun -n 3 env LD_PRELOAD=libcomm_mpi.so /usr/bin/python3 mpi4py_collectives.py [--forced]
"""
import argparse
import array
import ctypes
import os
import sys

from mpi4py import MPI


def last_route():
    try:
        fn = ctypes.CDLL(None).libcomm_mpi_last_route
    except AttributeError:
        return "(libcomm_mpi not loaded)"
    fn.restype = ctypes.c_char_p
    return fn().decode()


def churn():
    """Python work between the start and the wait: the freed arrays get new contents."""
    junk = [list(range(k, k + 50)) for k in range(200)]
    return sum(len(j) for j in junk)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forced", action="store_true",
                        help="every call must run the algorithm LIBCOMM_<OP> names (not native)")
    parser.add_argument("--rounds", type=int, default=3, help="repetitions of every case")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    p, me = comm.Get_size(), comm.Get_rank()
    failures = []
    calls = 0

    def check(what, got, want):
        if list(got) != list(want):
            failures.append(f"rank {me}: {what}: got {list(got)[:12]}, want {list(want)[:12]}")

    def route(what, var):
        r = last_route()
        if not args.forced:
            # The defaults: online runs native (through the drop-in's staging) until it has
            # measured; the MPI library itself (pmpi) or no library at all is a failure.
            if r == "pmpi" or r.startswith("("):
                failures.append(f"rank {me}: {what}: ran '{r}': the drop-in did not take the call")
            return
        want = os.environ.get(var, "")
        if want in ("", "native", "auto"):
            failures.append(f"rank {me}: {what}: --forced needs {var} set to one of libcomm's algorithms, not '{want}'")
        elif r != want:
            failures.append(f"rank {me}: {what}: ran '{r}', expected {want} ({var})")

    for rnd in range(args.rounds):
        for count in (0, 1, 3):
            # Iallgatherv into blocks p elements apart (not packed: libcomm stages them).
            stride = max(count, 1) * 2
            sbuf = array.array("i", [me * 100 + rnd * 10 + k for k in range(count)])
            rbuf = array.array("i", [-1] * (p * stride))
            req = comm.Iallgatherv([sbuf, MPI.INT], [rbuf, ([count] * p, [r * stride for r in range(p)]), MPI.INT])
            churn()
            req.Wait()
            calls += 1
            route(f"Iallgatherv count {count}", "LIBCOMM_ALLGATHER")
            want = [-1] * (p * stride)
            for r in range(p):
                for k in range(count):
                    want[r * stride + k] = r * 100 + rnd * 10 + k
            check(f"Iallgatherv count {count}", rbuf, want)

            # Ialltoallv with reversed displacements on both sides.
            sc = [count] * p
            sd = [(p - 1 - r) * count for r in range(p)]
            sbuf = array.array("i", [0] * (p * count))
            for r in range(p):
                for k in range(count):
                    sbuf[sd[r] + k] = me * 1000 + r * 10 + k
            rbuf = array.array("i", [-1] * (p * count))
            req = comm.Ialltoallv([sbuf, (sc, sd), MPI.INT], [rbuf, (sc, sd), MPI.INT])
            churn()
            req.Wait()
            calls += 1
            route(f"Ialltoallv count {count}", "LIBCOMM_ALLTOALLV")
            want = [-1] * (p * count)
            for r in range(p):
                for k in range(count):
                    want[sd[r] + k] = r * 1000 + me * 10 + k
            check(f"Ialltoallv count {count}", rbuf, want)

            # The blocking forms and Alltoall / Allgather through mpi4py's buffer interface.
            sbuf = array.array("d", [me + 0.5 * k for k in range(count * p)])
            rbuf = array.array("d", [-1.0] * (count * p))
            comm.Alltoall([sbuf, MPI.DOUBLE], [rbuf, MPI.DOUBLE])
            calls += 1
            route(f"Alltoall count {count}", "LIBCOMM_ALLTOALL")
            check(f"Alltoall count {count}", rbuf,
                  [float(r) + 0.5 * (me * count + k) for r in range(p) for k in range(count)])
            rbuf = array.array("d", [-1.0] * (count * p))
            comm.Allgather([sbuf[:count], MPI.DOUBLE], [rbuf, MPI.DOUBLE])
            calls += 1
            route(f"Allgather count {count}", "LIBCOMM_ALLGATHER")
            check(f"Allgather count {count}", rbuf, [float(r) + 0.5 * k for r in range(p) for k in range(count)])

    everyone = comm.allgather(failures)
    if me == 0:
        bad = [f for fs in everyone for f in fs]
        for f in bad:
            print("FAIL:", f)
        verdict = "PASS" if not bad else f"FAIL ({len(bad)} failed checks)"
        print(f"mpi4py_collectives: {verdict} ({calls} calls per rank on {p} ranks)")
    sys.exit(1 if any(everyone) else 0)


if __name__ == "__main__":
    main()
