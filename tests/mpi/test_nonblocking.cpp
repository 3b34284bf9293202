// Non-blocking (libcomm::ialltoall) and persistent (libcomm::plan_alltoall) all-to-all:
// every algorithm with a step program, byte for byte against the MPI library's
// MPI_Ialltoall run at the same time, several collectives in flight on one communicator,
// and the paper 002 schemes' documented refusal.
#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::AlltoallAlgo;
using libcomm::Comm;
using mpitest::MpiTest;

std::vector<std::byte> pattern(std::size_t b, const Comm& comm, int salt) {
  std::vector<std::byte> send(b * comm.size());
  for (int d = 0; d < comm.size(); ++d)
    apps::fill_pattern(send.data() + d * b, comm.rank() + salt, d, b);
  return send;
}

std::vector<std::byte> mpi_ialltoall(const std::vector<std::byte>& send, std::size_t b,
                                     MPI_Request* req) {
  std::vector<std::byte> out(send.size(), std::byte{0x11});
  MPI_Ialltoall(send.data(), static_cast<int>(b), MPI_BYTE, out.data(), static_cast<int>(b),
                MPI_BYTE, MPI_COMM_WORLD, req);
  return out;
}

bool has_program(AlltoallAlgo a) {
  return a != AlltoallAlgo::Auto && a != AlltoallAlgo::Leader && a != AlltoallAlgo::SendAggregate &&
         a != AlltoallAlgo::RecvDistribute;
}

TEST_F(MpiTest, IalltoallEveryAlgorithmMatchesMpiIalltoallInFlightTogether) {
  const Comm comm(MPI_COMM_WORLD);
  for (const auto& info : libcomm::alltoall_algorithms()) {
    if (!has_program(info.algo)) continue;
    for (std::size_t b : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{4096}}) {
      const std::string what = std::string(info.name) + " b = " + std::to_string(b);
      const auto send1 = pattern(b, comm, 0), send2 = pattern(b, comm, 100);
      std::vector<std::byte> recv1(send1.size(), std::byte{0xA5}),
          recv2(send2.size(), std::byte{0x5A});
      // Two libcomm collectives and the MPI library's own in flight at once.
      auto first = libcomm::ialltoall(send1.data(), recv1.data(), b, comm, info.algo);
      MPI_Request ref_req;
      const auto ref1 = mpi_ialltoall(send1, b, &ref_req);
      auto second = libcomm::ialltoall(send2.data(), recv2.data(), b, comm, info.algo);
      int polls = 0;
      while (!second.test()) ++polls;  // progress by test() alone
      first.wait();
      MPI_Wait(&ref_req, MPI_STATUS_IGNORE);
      EXPECT_FALSE(first.active());
      EXPECT_TRUE(recv1 == ref1) << what << ": rank " << comm.rank()
                                 << " differs from MPI_Ialltoall";
      std::vector<std::byte> ref2(send2.size());
      MPI_Alltoall(send2.data(), static_cast<int>(b), MPI_BYTE, ref2.data(), static_cast<int>(b),
                   MPI_BYTE, MPI_COMM_WORLD);
      EXPECT_TRUE(recv2 == ref2) << what << " (second request): rank " << comm.rank();
      EXPECT_FALSE(first.algorithm().empty()) << what;
      (void)polls;
    }
  }
}

TEST_F(MpiTest, PersistentPlanRunsManyTimesOnNewData) {
  const Comm comm(MPI_COMM_WORLD);
  for (const auto& info : libcomm::alltoall_algorithms()) {
    if (!has_program(info.algo)) continue;
    const std::size_t b = 24;
    auto plan = libcomm::plan_alltoall(comm, b, info.algo);
    EXPECT_FALSE(plan.active());
    if (info.algo != AlltoallAlgo::Native) {
      ASSERT_NE(plan.program(), nullptr) << info.name;
      EXPECT_EQ(plan.program()->rank, comm.rank());
    }
    for (int run = 0; run < 3; ++run) {
      const auto send = pattern(b, comm, run * 7);
      std::vector<std::byte> recv(send.size(), std::byte{0xEE}), ref(send.size());
      plan.start(send.data(), recv.data());
      EXPECT_TRUE(plan.active() || comm.size() == 1 || plan.test());
      // Starting it again before it completed is refused (on this rank only: no collective).
      if (plan.active()) {
        EXPECT_THROW(plan.start(send.data(), recv.data()), libcomm::Error) << info.name;
      }
      plan.wait();
      MPI_Alltoall(send.data(), static_cast<int>(b), MPI_BYTE, ref.data(), static_cast<int>(b),
                   MPI_BYTE, MPI_COMM_WORLD);
      EXPECT_TRUE(recv == ref) << info.name << " run " << run << ": rank " << comm.rank();
    }
  }
}

TEST_F(MpiTest, AutoPlanReportsWhatRunsAndWhy) {
  const Comm comm(MPI_COMM_WORLD);
  auto plan = libcomm::plan_alltoall(comm, 8, AlltoallAlgo::Auto);
  EXPECT_FALSE(plan.algorithm().empty());
  EXPECT_NE(plan.reason().find("auto"), std::string::npos) << plan.reason();
  auto fallback = libcomm::plan_alltoall(comm, 8, AlltoallAlgo::Pairwise);
  if ((comm.size() & (comm.size() - 1)) != 0) {
    EXPECT_EQ(fallback.algorithm(), "ring_sendrecv");
    EXPECT_NE(fallback.reason().find("power of two"), std::string::npos) << fallback.reason();
    libcomm::AlltoallOptions strict;
    strict.allow_fallback = false;
    const auto o = mpitest::run_catching(
        [&] { libcomm::plan_alltoall(comm, 8, AlltoallAlgo::Pairwise, strict); });
    EXPECT_TRUE(o.threw);
  } else {
    EXPECT_EQ(fallback.algorithm(), "pairwise");
  }
}

TEST_F(MpiTest, PaperTwoSchemesRefuseNonBlockingFormsOnEveryRank) {
  const Comm comm(MPI_COMM_WORLD, "ppn=2");
  for (AlltoallAlgo a :
       {AlltoallAlgo::Leader, AlltoallAlgo::SendAggregate, AlltoallAlgo::RecvDistribute}) {
    const auto o = mpitest::run_catching([&] { libcomm::plan_alltoall(comm, 8, a); });
    EXPECT_TRUE(o.threw) << libcomm::alltoall_algo_name(a);
    EXPECT_NE(o.message.find("no non-blocking or persistent form"), std::string::npos) << o.message;
  }
}

TEST_F(MpiTest, CustomStepProgramRunsThroughPlanProgram) {
  // A ring schedule run through plan_program equals the library's own ring.
  const Comm comm(MPI_COMM_WORLD);
  const std::size_t b = 5;
  auto plan = libcomm::plan_program(
      comm, libcomm::alltoall_program(AlltoallAlgo::Ring, comm.size(), comm.rank(), b));
  const auto send = pattern(b, comm, 3);
  std::vector<std::byte> recv(send.size()), ref(send.size());
  plan.start(send.data(), recv.data());
  plan.wait();
  libcomm::alltoall(send.data(), ref.data(), b, comm, AlltoallAlgo::Native);
  EXPECT_TRUE(recv == ref);
  // A program for another rank is refused.
  const int other = (comm.rank() + 1) % comm.size();
  if (other != comm.rank()) {
    EXPECT_THROW(libcomm::plan_program(
                     comm, libcomm::alltoall_program(AlltoallAlgo::Ring, comm.size(), other, b)),
                 libcomm::Error);
  }
}

}  // namespace
