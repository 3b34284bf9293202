// Check mode (libcomm/check.hpp): cross-rank agreement of the arguments of a collective.
// Every rank ends up with the same findings (they are exchanged), so every rank throws the
// same message and none is left waiting in the collective that would have followed.
#include "check.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <vector>

#include "libcomm/check.hpp"
#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"
#include "messages.hpp"
#include "mpi_bytes.hpp"

namespace libcomm {

namespace {

// -1: LIBCOMM_CHECK's (libcomm/settings.hpp); 0 / 1: set_check_mode's.
std::atomic<int> g_check_mode{-1};

}  // namespace

bool check_mode() {
  const int m = g_check_mode.load(std::memory_order_relaxed);
  return m < 0 ? setting_flag(Setting::Check) : m != 0;
}

void set_check_mode(bool on) { g_check_mode.store(on ? 1 : 0, std::memory_order_relaxed); }

namespace detail {

namespace {

std::string text_of(const SameField& f, std::uint64_t v) {
  return f.to_text != nullptr ? f.to_text(v) : std::to_string(v);
}

std::string entry(CountsName n, std::int64_t index) {
  return std::string(n.name) + (n.indexed ? "[" + std::to_string(index) + "]" : "");
}

// One collective of the argument check of `op`, bounded by LIBCOMM_TIMEOUT (run_agreement).
void in_check(MPI_Comm comm, std::string_view op, const char* name, const std::function<int()>& blocking,
              const std::function<int(MPI_Request*)>& start) {
  run_agreement(comm, op, "the argument check", name, blocking, start);
}

// MPI_Allreduce of `n` values of `type` at `v`, in place, as in_check runs it.
void allreduce_in_check(MPI_Comm c, std::string_view op, void* v, int n, MPI_Datatype type, MPI_Op reduce) {
  in_check(
      c, op, "MPI_Allreduce", [&] { return MPI_Allreduce(MPI_IN_PLACE, v, n, type, reduce, c); },
      [&](MPI_Request* r) { return MPI_Iallreduce(MPI_IN_PLACE, v, n, type, reduce, c, r); });
}

// MPI_Allgather of `n` values of `type` from every rank, as in_check runs it.
void allgather_in_check(MPI_Comm c, std::string_view op, const void* mine, void* all, int n, MPI_Datatype type) {
  in_check(
      c, op, "MPI_Allgather", [&] { return MPI_Allgather(mine, n, type, all, n, type, c); },
      [&](MPI_Request* r) { return MPI_Iallgather(mine, n, type, all, n, type, c, r); });
}

// Whether every rank passed the same values: one reduction of each value and its
// complement (their minima are the least and, complemented, the greatest), O(log P) where
// gathering every rank's values to name the one that differs costs O(P); that is done only
// once a difference is known.
bool agree_everywhere(const Comm& comm, std::string_view op, const std::vector<std::uint64_t>& mine) {
  std::vector<std::uint64_t> both(2 * mine.size());
  for (std::size_t k = 0; k < mine.size(); ++k) both[k] = mine[k], both[mine.size() + k] = ~mine[k];
  allreduce_in_check(comm.internal(), op, both.data(), static_cast<int>(both.size()), MPI_UINT64_T, MPI_MIN);
  for (std::size_t k = 0; k < mine.size(); ++k)
    if (both[k] != ~both[mine.size() + k]) return false;
  return true;
}

}  // namespace

void check_same_on_all_ranks(const Comm& comm, std::string_view op,
                             std::span<const SameField> fields, std::string_view vec_name,
                             std::span<const std::uint64_t> vec) {
  const int p = comm.size();
  const auto up = static_cast<std::size_t>(p);
  // Per rank: the fields, then (with a vector) its length and the first index where it
  // differs from rank 0's vector together with both values (or ~0 when none differs).
  const bool with_vec = !vec_name.empty();
  const std::size_t width = fields.size() + (with_vec ? 4 : 0);
  std::vector<std::uint64_t> mine(width), all(width * up);
  for (std::size_t f = 0; f < fields.size(); ++f) mine[f] = fields[f].value;
  const MPI_Comm c = comm.internal();
  if (with_vec) {
    // Rank 0's vector, as long as this communicator has ranks (zero-padded).
    std::vector<std::uint64_t> root(up, 0);
    if (comm.rank() == 0) std::copy_n(vec.begin(), std::min(vec.size(), up), root.begin());
    in_check(
        c, op, "MPI_Bcast", [&] { return MPI_Bcast(root.data(), p, MPI_UINT64_T, 0, c); },
        [&](MPI_Request* r) { return MPI_Ibcast(root.data(), p, MPI_UINT64_T, 0, c, r); });
    std::uint64_t* v = &mine[fields.size()];
    v[0] = vec.size();
    v[1] = ~std::uint64_t{0};
    for (std::size_t k = 0; k < std::min(vec.size(), up); ++k)
      if (vec[k] != root[k]) {
        v[1] = k;
        v[2] = root[k];
        v[3] = vec[k];
        break;
      }
  }
  if (agree_everywhere(comm, op, mine)) return;
  allgather_in_check(c, op, mine.data(), all.data(), static_cast<int>(width), MPI_UINT64_T);
  const std::string head(op);
  for (int r = 1; r < p; ++r) {
    const std::uint64_t* theirs = &all[static_cast<std::size_t>(r) * width];
    const std::string pair = head + ": ranks 0 and " + std::to_string(r) + " disagree on ";
    for (std::size_t f = 0; f < fields.size(); ++f)
      if (theirs[f] != all[f])
        throw Error(pair + std::string(fields[f].name) + ": rank 0 passed " +
                    text_of(fields[f], all[f]) + ", rank " + std::to_string(r) + " passed " +
                    text_of(fields[f], theirs[f]));
    if (!with_vec) continue;
    const std::uint64_t* v = theirs + fields.size();
    if (v[0] != all[fields.size()])
      throw Error(pair + "the length of " + std::string(vec_name) + ": rank 0 passed " +
                  std::to_string(all[fields.size()]) + " entries, rank " + std::to_string(r) +
                  " passed " + std::to_string(v[0]));
    if (v[1] != ~std::uint64_t{0})
      throw Error(pair + std::string(vec_name) + "[" + std::to_string(v[1]) + "]: rank 0 passed " +
                  std::to_string(v[2]) + ", rank " + std::to_string(r) + " passed " +
                  std::to_string(v[3]));
  }
}

void check_counts_match(const Comm& comm, std::string_view op, std::string_view unit,
                        std::span<const std::int64_t> sendcounts, CountsName send_name,
                        std::span<const std::int64_t> recvcounts, CountsName recv_name) {
  const int p = comm.size();
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::int64_t> sent(up, 0), theirs(up, 0);
  std::copy_n(sendcounts.begin(), std::min(sendcounts.size(), up), sent.begin());
  const MPI_Comm c = comm.internal();
  in_check(
      c, op, "MPI_Alltoall", [&] { return MPI_Alltoall(sent.data(), 1, MPI_INT64_T, theirs.data(), 1, MPI_INT64_T, c); },
      [&](MPI_Request* r) { return MPI_Ialltoall(sent.data(), 1, MPI_INT64_T, theirs.data(), 1, MPI_INT64_T, c, r); });
  // This rank's first finding: {kind, a, b, c}. Kind 1: the arrays have the wrong length
  // (a = sendcounts entries, b = recvcounts entries). Kind 2: rank a sends b but this rank
  // expects c.
  std::array<std::int64_t, 4> finding = {0, 0, 0, 0};
  if (sendcounts.size() != up || recvcounts.size() != up) {
    finding = {1, static_cast<std::int64_t>(sendcounts.size()),
               static_cast<std::int64_t>(recvcounts.size()), 0};
  } else {
    for (std::size_t k = 0; k < up; ++k)
      if (theirs[k] != recvcounts[k]) {
        finding = {2, static_cast<std::int64_t>(k), theirs[k], recvcounts[k]};
        break;
      }
  }
  if (agree_everywhere(comm, op, {static_cast<std::uint64_t>(finding[0])}) && finding[0] == 0) return;  // none found
  std::vector<std::int64_t> all(4 * up);
  allgather_in_check(c, op, finding.data(), all.data(), 4, MPI_INT64_T);
  const std::string head(op);
  for (int r = 0; r < p; ++r) {
    const std::int64_t* f = &all[4 * static_cast<std::size_t>(r)];
    const std::string rs = std::to_string(r);
    if (f[0] == 1)
      throw Error(head + ": rank " + rs + " passes " + std::to_string(f[1]) + " " +
                  std::string(send_name.name) + " and " + std::to_string(f[2]) + " " +
                  std::string(recv_name.name) + " entries, need P = " + std::to_string(p));
    if (f[0] == 2) {
      const std::string sender = std::to_string(f[1]);
      throw Error(head + ": rank " + sender + " sends " + std::to_string(f[2]) + " " +
                  std::string(unit) + " to rank " + rs + " (its " + entry(send_name, r) +
                  ") but rank " + rs + " expects " + std::to_string(f[3]) + " (its " +
                  entry(recv_name, f[1]) + ")");
    }
  }
}

std::uint64_t check_arguments(const Comm& comm, const ArgumentCheck& c,
                              const std::function<std::string(std::uint64_t, std::uint64_t)>& sizes_differ,
                              const std::function<std::string()>& modes_differ) {
  const int p = comm.size(), me = comm.rank();
  // max over ranks of: [rank marker of a local problem, sizes, ~sizes, mode, ~mode, extra]
  std::array<std::uint64_t, 6> v = {c.local.empty() ? 0 : static_cast<std::uint64_t>(p - me), c.sizes, ~c.sizes,
                                    c.mode, ~c.mode, c.extra};
  allreduce_in_check(comm.internal(), c.op, v.data(), 6, MPI_UINT64_T, MPI_MAX);
  const std::string where = std::string(c.op) + ": rank " + std::to_string(me) + ": ";
  if (!c.local.empty()) throw Error(where + c.local);
  if (v[0] != 0)
    throw Error(where + "rank " + std::to_string(p - static_cast<int>(v[0])) +
                " reported an invalid argument (see its message)");
  if (v[1] != ~v[2]) throw Error(where + sizes_differ(v[1], ~v[2]));
  if (v[3] != ~v[4]) throw Error(where + modes_differ());
  return v[5];
}

}  // namespace detail

}  // namespace libcomm
