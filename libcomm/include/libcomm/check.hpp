// Debug check mode: before every collective, verify that the arguments of all ranks fit
// together, and throw the same libcomm::Error on every rank, naming the two ranks and the
// two values that disagree, instead of hanging or corrupting memory.
//
// What is verified (one small MPI exchange per call, on the communicator's private
// duplicate):
//   alltoall        block_bytes equal on every rank
//   alltoallv       rank i's sendcounts[j] == rank j's recvcounts[i] (an all-to-all of
//                   the counts) and element_bytes equal on every rank
//   allgather(v)    the counts vector equal on every rank, rank i's send_bytes ==
//                   counts[i], element_bytes equal
//   reduce_scatter  the counts vector, element type and operation equal on every rank
//
// Off by default. Turned on by LIBCOMM_CHECK=1 in the environment (0 turns it off), by
// building with -DLIBCOMM_CHECK=ON (the default becomes on), or by set_check_mode(). Every
// rank must have the same setting (mpiexec passes the environment to every rank): a rank
// that checks while another does not waits in the check's exchange.
//
// Independent of the per-call `check_args` options, which are on by default and catch bad
// arguments of one rank (negative counts, null or overlapping buffers) with one
// MPI_Allreduce; check mode also runs when a caller switched check_args off.
#pragma once

namespace libcomm {

// Whether check mode is on: set_check_mode() if it was called, else LIBCOMM_CHECK from the
// environment (read once; "1"/"on"/"true" or "0"/"off"/"false", anything else throws
// Error naming the value), else the build default.
bool check_mode();
// Overrides the environment for the rest of the program (tests, applications that want
// the checks always on). Call it alike on every rank.
void set_check_mode(bool on);

}  // namespace libcomm
