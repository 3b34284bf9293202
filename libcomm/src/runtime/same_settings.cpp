#include "same_settings.hpp"

#include <cstdint>
#include <numeric>
#include <string_view>

#include "mpi_bytes.hpp"
#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"

namespace libcomm::detail {

namespace {

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace

void require_same_settings(MPI_Comm comm) {
  const auto mine = steering_settings();
  const std::size_t n = mine.size();  // the same list on every rank
  // One all-reduce: the maximum of each hash and of its complement; they agree everywhere
  // exactly when the smallest and largest hash are equal.
  std::vector<std::uint64_t> v(2 * n);
  for (std::size_t k = 0; k < n; ++k) {
    v[2 * k] = fnv1a(mine[k].second);
    v[2 * k + 1] = ~v[2 * k];
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_MAX, comm),
            "MPI_Allreduce");
  std::size_t k = 0;
  while (k < n && v[2 * k] == ~v[2 * k + 1]) ++k;
  if (k == n) return;
  // They differ: every rank learns every rank's value of that setting, so that every rank
  // names the same two ranks.
  int p = 0;
  check_mpi(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  const std::string& text = mine[k].second;
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(p)), starts(static_cast<std::size_t>(p));
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::exclusive_scan(lengths.begin(), lengths.end(), starts.begin(), 0);
  std::string every(static_cast<std::size_t>(starts.back() + lengths.back()), '\0');
  check_mpi(MPI_Allgatherv(text.data(), length, MPI_CHAR, every.data(), lengths.data(), starts.data(), MPI_CHAR,
                           comm),
            "MPI_Allgatherv");
  const auto at = [&](int r) {
    return every.substr(static_cast<std::size_t>(starts[static_cast<std::size_t>(r)]),
                        static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]));
  };
  int other = 1;
  while (other < p && at(other) == at(0)) ++other;
  if (other == p) other = p - 1;  // (a hash collision of two different texts: cannot happen in practice)
  throw SettingsDiffer("settings differ between the ranks of a communicator of " + std::to_string(p) +
                       " ranks: " + mine[k].first + " is " + at(0) + " on rank 0 but " + at(other) +
                       " on rank " + std::to_string(other) +
                       " (every rank must run with the same LIBCOMM_* variables, tuning table and cost model)");
}

}  // namespace libcomm::detail
