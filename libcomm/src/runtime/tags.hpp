// The tag registry: every tag libcomm's own messages carry on a Comm's internal
// communicator comes from here, so no two families can collide.
#pragma once

#include <cstdint>

#include "libcomm/program.hpp"

namespace libcomm::detail::tags {

// Step programs (runtime/executor.cpp): a base, then the call's sequence number on its Comm
// (Comm::next_sequence, the same on every rank because collectives on one communicator
// are started in one order) modulo kSequences, then the TagKind. Several non-blocking
// collectives in flight on one communicator therefore never match each other's messages.
constexpr int kProgramBase = 16384;
constexpr int kSequences = 4096;
// The third kind is the prelude's (plan_state.hpp: the count exchange a deferred
// program is built from).
constexpr int kKinds = 3;  // TagKind::Data, TagKind::Sync, prelude
static_assert(kProgramBase + kSequences * kKinds <= 32767, "MPI guarantees tags up to 32767");

inline int program_tag(std::uint64_t sequence, TagKind kind) {
  return kProgramBase + static_cast<int>(sequence % kSequences) * kKinds + static_cast<int>(kind);
}
// The prelude's kind is the one after TagKind's last.
static_assert(static_cast<int>(TagKind::Sync) + 2 == kKinds, "the prelude's tag follows TagKind's last kind");
inline int prelude_tag(std::uint64_t sequence) { return program_tag(sequence, TagKind::Sync) + 1; }

// The staged engine of the irregular all-to-all (alltoallv/staged_engine.cpp): one tag per
// stage, kStagedBase + stage (at most four stages).
constexpr int kStagedBase = 7400;

}  // namespace libcomm::detail::tags
