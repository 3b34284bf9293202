// How `auto` chooses an algorithm (every operation, every form): the policy.
//   online  times the candidate algorithms in place on a call site's first calls
//           (STAR-MPI: Faraj, Yuan, Lowenthal, ICS 2006), agrees on the winner on every
//           rank, then runs it; starts from a tuning table's row where one fits.
//   model   predicts each applicable algorithm's time with its alpha-beta(-gamma) cost
//           formula (docs/algorithms.md) and runs the cheapest.
//   table   the active tuning table's row (libcomm/tuning.hpp); where the table has no
//           row, the model.
// Chosen by set_auto_policy, else LIBCOMM_AUTO=online|model|table, else the default,
// online (README, "Tuning: what auto runs"). An operation's environment variable
// (LIBCOMM_ALLTOALL=bruck, ...) names what Auto runs instead, under any policy.
#pragma once

#include <string_view>

namespace libcomm {

enum class AutoPolicy { Online, Model, Table };

std::string_view auto_policy_name(AutoPolicy p);
// Throws Error naming the bad value and listing the valid ones.
AutoPolicy auto_policy_from_name(std::string_view name);

// The policy in force: set_auto_policy's, else LIBCOMM_AUTO (read once; a bad value is an
// Error at the first call that asks), else the default.
AutoPolicy auto_policy();
// Replaces the policy for every later Auto decision (decisions already remembered on a
// Comm under another policy are not reused). Every rank must make the same call.
void set_auto_policy(AutoPolicy p);
// Forgets set_auto_policy: LIBCOMM_AUTO or the default again.
void reset_auto_policy();

// Reads the environment's choices again: LIBCOMM_AUTO and each operation's algorithm
// (LIBCOMM_ALLTOALL, LIBCOMM_ALLTOALLV, LIBCOMM_ALLGATHER, LIBCOMM_REDUCE_SCATTER: what
// an Auto call runs instead, read once otherwise). Every rank must call it alike, between
// collectives.
void reload_environment();

}  // namespace libcomm
