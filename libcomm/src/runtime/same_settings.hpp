// Internal: the ranks of a communicator must steer their collectives alike. Everything a
// choice depends on besides the call's arguments (the LIBCOMM_* variables, the tuning
// table and cost model files) is compared across the ranks when libcomm makes its state
// for a communicator: a rank with other settings would run another algorithm (a hang or
// MPI_ERR_TRUNCATE), or another number of collectives (a hang).
#pragma once

#include <mpi.h>

namespace libcomm::detail {

// Collective over comm: one MPI_Allreduce when every rank agrees; otherwise a few more to
// name the first setting that differs and a rank that has another value, then
// SettingsDiffer with the same message on every rank.
void require_same_settings(MPI_Comm comm);

}  // namespace libcomm::detail
