// Bad input at every library entry point besides alltoall (test_alltoall_errors.cpp has
// that one): a null buffer, overlapping buffers, counts whose byte sizes overflow, on one
// rank, give every rank a libcomm::Error naming the rank and the fault (the culprit's own
// message says what is wrong, the others name the culprit), never a hang, and the
// communicator stays usable. Run at 1-9 ranks.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "libcomm/allgather.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/reduce_scatter.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::Comm;
using mpitest::MpiTest;
using mpitest::run_catching;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One entry point with correct arguments on every rank but `culprit`, which passes the fault
// `spoil` makes: every rank must throw; the culprit's message must contain `what`, every
// message must name its own rank. Then a correct call of the same entry point runs.
struct Call {
  std::string name;
  // fault: 0 none, 1 null buffer, 2 overlapping buffers, 3 byte sizes overflowing
  std::function<void(int fault)> run;
};

void expect_every_rank_throws(const Comm& comm, const Call& call, int fault, const std::string& what) {
  const int p = comm.size(), me = comm.rank();
  for (int culprit : {0, p - 1}) {
    const auto o = run_catching([&] { call.run(me == culprit ? fault : 0); });
    const std::string where = call.name + " fault " + std::to_string(fault) + " on rank " + std::to_string(culprit);
    EXPECT_TRUE(o.threw) << where << ": rank " << me << " did not throw";
    EXPECT_TRUE(contains(o.message, "rank " + std::to_string(me))) << where << ": " << o.message;
    if (me == culprit) EXPECT_TRUE(contains(o.message, what)) << where << ": " << o.message;
    else EXPECT_TRUE(contains(o.message, "rank " + std::to_string(culprit))) << where << ": " << o.message;
    EXPECT_NO_THROW(call.run(0)) << where << ": the communicator is not usable afterwards";
  }
}

constexpr std::size_t b = 16;                                               // bytes per block
constexpr std::size_t huge = std::numeric_limits<std::size_t>::max() / 2 + 1;  // two of them overflow
std::vector<std::byte> send, recv;

std::vector<Call> calls(const Comm& comm) {
  const int p = comm.size();
  const auto np = static_cast<std::size_t>(p);
  send.assign(b * np, std::byte{1});
  recv.assign(b * np, std::byte{0});
  return {
      {"alltoallv",
       [p](int fault) {
         std::vector<std::int64_t> counts(static_cast<std::size_t>(p), static_cast<std::int64_t>(b)), displs(counts);
         for (std::size_t k = 0; k < displs.size(); ++k) displs[k] = static_cast<std::int64_t>(k * b);
         std::vector<std::int64_t> rcounts = counts;
         const void* s = fault == 1 ? nullptr : send.data();
         void* r = fault == 2 ? static_cast<void*>(send.data()) : recv.data();
         if (fault == 3) counts[0] = rcounts[0] = std::numeric_limits<std::int64_t>::max();
         libcomm::alltoallv(s, counts, displs, r, rcounts, displs, mpitest::world(), libcomm::AlltoallvAlgo::Direct);
       }},
      {"allgather",
       [](int fault) {
         const void* s = fault == 1 ? nullptr : send.data();
         void* r = fault == 2 ? static_cast<void*>(send.data()) : recv.data();
         libcomm::allgather(s, r, fault == 3 ? std::numeric_limits<std::size_t>::max() : b, mpitest::world(),
                            libcomm::AllgatherAlgo::Ring);
       }},
      {"allgatherv",
       [np](int fault) {
         std::vector<std::size_t> counts(np, b);
         if (fault == 3) counts.assign(np, huge);
         const auto me = static_cast<std::size_t>(mpitest::world().rank());
         const void* s = fault == 1 ? nullptr : send.data();
         void* r = fault == 2 ? static_cast<void*>(send.data()) : recv.data();
         libcomm::allgatherv(s, counts[me], r, counts, mpitest::world(), libcomm::AllgatherAlgo::Ring);
       }},
      {"reduce_scatter",
       [np](int fault) {
         std::vector<std::size_t> counts(np, b);  // bytes: two doubles each
         if (fault == 3) counts.assign(np, huge - huge % 8);
         const void* s = fault == 1 ? nullptr : send.data();
         void* r = fault == 2 ? static_cast<void*>(send.data()) : recv.data();
         libcomm::reduce_scatter(s, r, counts, libcomm::ElemType::Double, libcomm::ReduceOp::Sum, mpitest::world(),
                                 libcomm::ReduceScatterAlgo::Ring);
       }},
  };
}

TEST_F(MpiTest, NullBufferOnOneRankGivesEveryRankAnError) {
  const Comm& comm = mpitest::world();
  for (const auto& call : calls(comm)) expect_every_rank_throws(comm, call, 1, "null");
}

TEST_F(MpiTest, OverlappingBuffersOnOneRankGiveEveryRankAnError) {
  const Comm& comm = mpitest::world();
  for (const auto& call : calls(comm)) expect_every_rank_throws(comm, call, 2, "overlap");
}

TEST_F(MpiTest, ByteSizesBeyondTheAddressSpaceGiveEveryRankAnError) {
  const Comm& comm = mpitest::world();
  for (const auto& call : calls(comm)) {
    const auto o = run_catching([&] { call.run(comm.rank() == comm.size() - 1 ? 3 : 0); });
    EXPECT_TRUE(o.threw) << call.name << ": rank " << comm.rank() << " did not throw";
    EXPECT_TRUE(contains(o.message, "rank " + std::to_string(comm.rank()))) << call.name << ": " << o.message;
    EXPECT_NO_THROW(call.run(0)) << call.name << ": the communicator is not usable afterwards";
  }
}

// The typed alltoallv counts elements of T: counts whose byte sizes overflow, or a
// displacement plus count beyond int64, are an error on that rank, not a wrapped size.
TEST_F(MpiTest, TypedAlltoallvCountsThatOverflowAreRefused) {
  const Comm& comm = mpitest::world();
  const auto np = static_cast<std::size_t>(comm.size());
  std::vector<double> send_d(np), recv_d(np);
  std::vector<std::int64_t> counts(np, 1), displs(np);
  for (std::size_t k = 0; k < np; ++k) displs[k] = static_cast<std::int64_t>(k);
  auto big = counts, big_displs = displs;
  big[0] = std::numeric_limits<std::int64_t>::max() / 4;  // * sizeof(double) overflows
  big_displs[0] = std::numeric_limits<std::int64_t>::max();  // + count overflows
  for (const auto& bad : {std::pair{big, displs}, std::pair{counts, big_displs}}) {
    const auto o = run_catching([&] {
      libcomm::alltoallv<double>(send_d, bad.first, bad.second, recv_d, counts, displs, comm,
                                 libcomm::AlltoallvAlgo::Direct);
    });
    EXPECT_TRUE(o.threw) << "rank " << comm.rank() << " accepted a count or displacement beyond its span";
  }
}

}  // namespace
