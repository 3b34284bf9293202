// Non-blocking (libcomm::ialltoall) and persistent (libcomm::plan_alltoall) all-to-all:
// every algorithm with a step program, byte for byte against the MPI library's
// MPI_Ialltoall run at the same time, several collectives in flight on one communicator,
// and the paper 002 schemes' documented refusal.
#include <mpi.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/allgather.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "libcomm/reduce_scatter.hpp"
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

TEST_F(MpiTest, RepeatedNonblockingCallsReuseTheirPlanUnlessARequestHoldsIt) {
  const Comm comm(MPI_COMM_WORLD);
  const std::size_t b = 24;
  const auto send = pattern(b, comm, 3);
  std::vector<std::byte> r1(send.size()), r2(send.size()), want(send.size());
  MPI_Alltoall(send.data(), static_cast<int>(b), MPI_BYTE, want.data(), static_cast<int>(b), MPI_BYTE,
               MPI_COMM_WORLD);
  const libcomm::StepProgram* kept = nullptr;
  {
    auto first = libcomm::ialltoall(send.data(), r1.data(), b, comm, AlltoallAlgo::Bruck);
    first.wait();
    kept = first.program();
    ASSERT_NE(kept, nullptr);
  }
  // The first request is gone: the next call of the same shape runs the kept plan.
  auto again = libcomm::ialltoall(send.data(), r1.data(), b, comm, AlltoallAlgo::Bruck);
  EXPECT_EQ(again.program(), kept) << "rank " << comm.rank() << ": the kept plan was built again";
  // `again` still holds it: a second request in flight gets a plan of its own.
  auto other = libcomm::ialltoall(send.data(), r2.data(), b, comm, AlltoallAlgo::Bruck);
  EXPECT_NE(other.program(), again.program()) << "rank " << comm.rank() << ": two requests share one plan";
  other.wait();
  again.wait();
  EXPECT_TRUE(r1 == want && r2 == want) << "rank " << comm.rank();
  // Auto picks bruck for 24-byte blocks too: its request reports Auto's reason, not the
  // kept plan's "requested".
  auto chosen = libcomm::ialltoall(send.data(), r2.data(), b, comm, AlltoallAlgo::Auto);
  chosen.wait();
  EXPECT_NE(chosen.reason(), "requested") << "rank " << comm.rank();
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

TEST_F(MpiTest, PaperTwoSchemesRunNonBlockingAndPersistentOnEveryNodeMap) {
  // Equal nodes, unequal nodes (columns represented by a node's smaller process set) and one
  // process per node; the inter-node step native (point-to-point inside a request), auto
  // and Bruck; two requests in flight together.
  for (const char* nodes : {"ppn=2", "ppn=3", "flat"}) {
    const Comm comm(MPI_COMM_WORLD, nodes);
    for (AlltoallAlgo a : {AlltoallAlgo::Leader, AlltoallAlgo::SendAggregate, AlltoallAlgo::RecvDistribute})
      for (AlltoallAlgo inter : {AlltoallAlgo::Native, AlltoallAlgo::Auto, AlltoallAlgo::Bruck}) {
        libcomm::AlltoallOptions opts;
        opts.inter_node = inter;
        const std::size_t b = 9;
        const std::string what = std::string(libcomm::alltoall_algo_name(a)) + " over " +
                                 std::string(libcomm::alltoall_algo_name(inter)) + " on " + nodes;
        const auto send1 = pattern(b, comm, 1), send2 = pattern(b, comm, 2);
        std::vector<std::byte> recv1(send1.size(), std::byte{0xA5}), recv2(send2.size(), std::byte{0x5A});
        auto first = libcomm::ialltoall(send1.data(), recv1.data(), b, comm, a, opts);
        auto second = libcomm::ialltoall(send2.data(), recv2.data(), b, comm, a, opts);
        while (!second.test()) {
        }
        first.wait();
        MPI_Request req;
        const auto ref1 = mpi_ialltoall(send1, b, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        const auto ref2 = mpi_ialltoall(send2, b, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        EXPECT_TRUE(recv1 == ref1) << what << ": rank " << comm.rank();
        EXPECT_TRUE(recv2 == ref2) << what << " (second request): rank " << comm.rank();
        auto plan = libcomm::plan_alltoall(comm, b, a, opts);
        for (int run = 0; run < 2; ++run) {
          std::vector<std::byte> recv(send1.size(), std::byte{0x33});
          plan.start(run ? send2.data() : send1.data(), recv.data());
          plan.wait();
          EXPECT_TRUE(recv == (run ? ref2 : ref1)) << what << " (plan run " << run << "): rank " << comm.rank();
        }
      }
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

// ---- allgather(v) and reduce_scatter --------------------------------------------------

namespace {

using libcomm::AllgatherAlgo;
using libcomm::ElemType;
using libcomm::ReduceOp;
using libcomm::ReduceScatterAlgo;

// Block sizes: P equal ones of each size in `equal`, then one layout of unequal sizes
// (a * r + c for rank r) with every third block, from `first_empty` on, empty.
std::vector<std::vector<std::size_t>> block_layouts(int p, std::initializer_list<std::size_t> equal, int first_empty,
                                                    std::size_t a, std::size_t c) {
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t b : equal) out.emplace_back(static_cast<std::size_t>(p), b);
  std::vector<std::size_t> uneven(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) uneven[r] = r % 3 == first_empty ? 0 : a * static_cast<std::size_t>(r) + c;
  out.push_back(uneven);
  return out;
}

std::vector<std::vector<std::size_t>> allgather_layouts(int p) { return block_layouts(p, {0, 1, 13, 4096}, 1, 7, 3); }

std::vector<std::byte> own_block(std::size_t n, int rank, int salt) {
  std::vector<std::byte> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = static_cast<std::byte>((rank * 131 + salt * 17 + k * 7) & 0xFF);
  return v;
}

std::vector<std::byte> mpi_iallgatherv(const std::vector<std::byte>& mine, const std::vector<std::size_t>& counts,
                                       std::vector<int>& c, std::vector<int>& d, MPI_Request* req) {
  c.assign(counts.begin(), counts.end());
  d.assign(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) d[r] = d[r - 1] + c[r - 1];
  std::vector<std::byte> out(static_cast<std::size_t>(d.back() + c.back()), std::byte{0x11});
  MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, out.data(), c.data(), d.data(), MPI_BYTE,
                  MPI_COMM_WORLD, req);
  return out;
}

// Every option combination that applies on P ranks (order gray needs a power of two; d_cycles
// falls back to ring elsewhere because fallback is allowed here).
std::vector<libcomm::AllgatherOptions> allgather_option_sets(int p) {
  std::vector<libcomm::AllgatherOptions> out;
  libcomm::AllgatherOptions o;
  o.allow_fallback = true;
  out.push_back(o);
  o.reorder = libcomm::Reorder::Staged;
  o.element_bytes = 4;  // subblocks of whole 4-byte elements where the block allows
  out.push_back(o);
  if ((p & (p - 1)) == 0) {
    o.order = libcomm::NodeOrder::Gray;
    out.push_back(o);
  }
  return out;
}

TEST_F(MpiTest, IallgathervEveryAlgorithmMatchesMpiIallgathervInFlightTogether) {
  const Comm comm(MPI_COMM_WORLD);
  const int p = comm.size(), me = comm.rank();
  for (const auto& info : libcomm::allgather_algorithms())
    for (const auto& opts : allgather_option_sets(p))
      for (const auto& counts : allgather_layouts(p)) {
        const std::string what = std::string(info.name) + " counts[0] = " + std::to_string(counts[0]) +
                                 " reorder " + std::to_string(static_cast<int>(opts.reorder)) + " order " +
                                 std::string(libcomm::node_order_name(opts.order));
        const auto mine1 = own_block(counts[me], me, 1), mine2 = own_block(counts[me], me, 2);
        std::size_t total = 0;
        for (auto c : counts) total += c;
        std::vector<std::byte> recv1(total, std::byte{0xA5}), recv2(total, std::byte{0x5A});
        auto first = libcomm::iallgatherv(mine1.data(), mine1.size(), recv1.data(), counts, comm, info.algo, opts);
        MPI_Request ref_req;
        std::vector<int> c, d;
        const auto ref1 = mpi_iallgatherv(mine1, counts, c, d, &ref_req);
        auto second = libcomm::iallgatherv(mine2.data(), mine2.size(), recv2.data(), counts, comm, info.algo, opts);
        while (!second.test()) {
        }
        first.wait();
        MPI_Wait(&ref_req, MPI_STATUS_IGNORE);
        EXPECT_TRUE(recv1 == ref1) << what << ": rank " << me << " differs from MPI_Iallgatherv";
        std::vector<int> c2, d2;
        MPI_Request r2;
        const auto ref2 = mpi_iallgatherv(mine2, counts, c2, d2, &r2);
        MPI_Wait(&r2, MPI_STATUS_IGNORE);
        EXPECT_TRUE(recv2 == ref2) << what << " (second request): rank " << me;
        EXPECT_FALSE(first.algorithm().empty()) << what;
      }
}

TEST_F(MpiTest, PersistentAllgatherPlansRunManyTimes) {
  const Comm comm(MPI_COMM_WORLD);
  const int p = comm.size(), me = comm.rank();
  for (const auto& info : libcomm::allgather_algorithms()) {
    libcomm::AllgatherOptions opts;
    opts.allow_fallback = true;
    const std::size_t b = 10;
    auto plan = libcomm::plan_allgather(comm, b, info.algo, opts);
    for (int run = 0; run < 3; ++run) {
      const auto mine = own_block(b, me, run);
      std::vector<std::byte> recv(b * p, std::byte{0xEE}), ref(b * p);
      plan.start(mine.data(), recv.data());
      plan.wait();
      MPI_Allgather(mine.data(), static_cast<int>(b), MPI_BYTE, ref.data(), static_cast<int>(b), MPI_BYTE,
                    MPI_COMM_WORLD);
      EXPECT_TRUE(recv == ref) << info.name << " run " << run << ": rank " << me;
    }
  }
  // d_cycles without fallback on P not a power of two is refused on every rank.
  if ((p & (p - 1)) != 0) {
    libcomm::AllgatherOptions strict;
    strict.allow_fallback = false;
    const auto o = mpitest::run_catching([&] { libcomm::plan_allgather(comm, 8, AllgatherAlgo::DCycles, strict); });
    EXPECT_TRUE(o.threw);
    auto fallback = libcomm::plan_allgather(comm, 8, AllgatherAlgo::DCycles);  // the default falls back
    EXPECT_EQ(fallback.algorithm(), "ring");
    EXPECT_NE(fallback.reason().find("ran ring instead"), std::string::npos) << fallback.reason();
    EXPECT_TRUE(o.threw);
    EXPECT_NE(o.message.find("power-of-two"), std::string::npos) << o.message;
  }
}

template <class T>
void reduce_scatter_matches_mpi(const Comm& comm, ReduceScatterAlgo algo, ReduceOp op,
                                const std::vector<std::size_t>& counts, const libcomm::ReduceScatterOptions& opts,
                                MPI_Datatype type, MPI_Op mop) {
  const int me = comm.rank();
  std::size_t total = 0;
  for (auto c : counts) total += c;
  std::vector<T> send1(total), send2(total);
  for (std::size_t k = 0; k < total; ++k) {
    send1[k] = static_cast<T>((me * 7 + k * 3) % 11) - 5;
    send2[k] = static_cast<T>((me * 5 + k) % 13);
  }
  std::vector<T> recv1(counts[me], T(-99)), recv2(counts[me], T(-98)), ref(counts[me]);
  const ElemType et = libcomm::elem_type_of<T>();
  std::vector<std::size_t> bytes(counts);  // libcomm counts bytes
  for (auto& b : bytes) b *= sizeof(T);
  auto first = libcomm::ireduce_scatter(send1.data(), recv1.data(), bytes, et, op, comm, algo, opts);
  auto second = libcomm::ireduce_scatter(send2.data(), recv2.data(), bytes, et, op, comm, algo, opts);
  while (!first.test()) {
  }
  second.wait();
  const std::vector<int> c(counts.begin(), counts.end());
  const std::string what = std::string(libcomm::reduce_scatter_algo_name(algo)) + " " +
                           std::string(libcomm::reduce_op_name(op)) + " counts[0] = " + std::to_string(counts[0]);
  MPI_Reduce_scatter(send1.data(), ref.data(), c.data(), type, mop, MPI_COMM_WORLD);
  EXPECT_TRUE(recv1 == ref) << what << ": rank " << me;
  MPI_Reduce_scatter(send2.data(), ref.data(), c.data(), type, mop, MPI_COMM_WORLD);
  EXPECT_TRUE(recv2 == ref) << what << " (second request): rank " << me;
}

TEST_F(MpiTest, IreduceScatterEveryAlgorithmMatchesMpiReduceScatter) {
  const Comm comm(MPI_COMM_WORLD);
  const int p = comm.size();
  const auto layouts = block_layouts(p, {0, 1, 5, 1000}, 2, 2, 1);
  for (const auto& info : libcomm::reduce_scatter_algorithms())
    for (const auto& counts : layouts) {
      libcomm::ReduceScatterOptions opts;
      opts.allow_fallback = true;
      reduce_scatter_matches_mpi<double>(comm, info.algo, ReduceOp::Sum, counts, opts, MPI_DOUBLE, MPI_SUM);
      reduce_scatter_matches_mpi<int>(comm, info.algo, ReduceOp::Max, counts, opts, MPI_INT, MPI_MAX);
      if ((p & (p - 1)) == 0 && info.algo == ReduceScatterAlgo::Ring) {
        opts.order = libcomm::NodeOrder::Gray;
        reduce_scatter_matches_mpi<int>(comm, info.algo, ReduceOp::Min, counts, opts, MPI_INT, MPI_MIN);
      }
    }
}

TEST_F(MpiTest, PersistentReduceScatterPlansRunManyTimes) {
  const Comm comm(MPI_COMM_WORLD);
  const int p = comm.size(), me = comm.rank();
  const std::vector<std::size_t> counts(static_cast<std::size_t>(p), 6), bytes(static_cast<std::size_t>(p), 48);
  for (const auto& info : libcomm::reduce_scatter_algorithms()) {
    libcomm::ReduceScatterOptions opts;
    opts.allow_fallback = true;
    auto plan = libcomm::plan_reduce_scatter(comm, bytes, ElemType::Double, ReduceOp::Sum, info.algo, opts);
    for (int run = 0; run < 3; ++run) {
      std::vector<double> send(6 * p), recv(6, -1.0), ref(6);
      for (std::size_t k = 0; k < send.size(); ++k) send[k] = me + 0.5 * k + run;
      plan.start(send.data(), recv.data());
      plan.wait();
      const std::vector<int> c(counts.begin(), counts.end());
      MPI_Reduce_scatter(send.data(), ref.data(), c.data(), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_TRUE(recv == ref) << info.name << " run " << run << ": rank " << me;
    }
  }
}

TEST_F(MpiTest, CheckStepFailsTheRunOnACorruptMessage) {
  // Rank 0 sends 4 bytes to rank 1, which checks them against a constant (index motion's
  // check): equal passes, different throws on rank 1.
  const Comm comm(MPI_COMM_WORLD);
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks";
  for (const std::uint32_t expected : {0x01020304u, 0x0badf00du}) {
    libcomm::ProgramBuilder pb("check", comm.rank(), comm.size());
    pb.set_extents(4, 4);
    if (comm.rank() == 0) pb.send(0, 1, {libcomm::Area::Send, 0, 4}, 0);
    if (comm.rank() == 1) {
      pb.recv(0, 0, {libcomm::Area::Recv, 0, 4}, 0);
      pb.check(1, pb.constant(&expected, 4), {libcomm::Area::Recv, 0, 4});
    }
    auto plan = libcomm::plan_program(comm, std::move(pb).program());
    const std::uint32_t value = 0x01020304u;
    std::uint32_t got = 0;
    const auto o = mpitest::run_catching([&] {
      plan.start(&value, &got);
      plan.wait();
    });
    const bool should_throw = comm.rank() == 1 && expected != value;
    EXPECT_EQ(o.threw, should_throw) << o.message;
    if (should_throw) {
      EXPECT_NE(o.message.find("rank 1"), std::string::npos) << o.message;
      EXPECT_NE(o.message.find("check"), std::string::npos) << o.message;
    }
  }
}

// ---- alltoallv ----------------------------------------------------------------------

using libcomm::AlltoallvAlgo;
using libcomm::AlltoallvMode;

// Counts that vary by pair (zeros among them) and displacements with gaps.
struct VLayout {
  std::vector<std::int64_t> sc, sd, rc, rd;
  std::int64_t send_n = 0, recv_n = 0;
};
VLayout v_layout(int p, int me, int salt) {
  const auto count = [&](int src, int dst) {
    return static_cast<std::int64_t>((src * 7 + dst * 3 + salt) % 5 == 0 ? 0 : (src + 2 * dst + salt) % 9 + 1);
  };
  VLayout l;
  for (int k = 0; k < p; ++k) {
    l.sc.push_back(count(me, k));
    l.sd.push_back(l.send_n);
    l.send_n += l.sc.back() + 2;  // a gap of two elements after every message
    l.rc.push_back(count(k, me));
    l.rd.push_back(l.recv_n);
    l.recv_n += l.rc.back() + 1;
  }
  return l;
}

TEST_F(MpiTest, IalltoallvEveryAlgorithmMatchesMpiAlltoallv) {
  const Comm comm(MPI_COMM_WORLD);
  const int p = comm.size(), me = comm.rank();
  // Mesh on a P that is not a square runs four_stage (its fallback).
  for (AlltoallvAlgo a : {AlltoallvAlgo::Native, AlltoallvAlgo::Direct, AlltoallvAlgo::Auto, AlltoallvAlgo::TwoStage,
                          AlltoallvAlgo::Mesh, AlltoallvAlgo::FourStage})
    for (AlltoallvMode mode : {AlltoallvMode::Blocking, AlltoallvMode::NonblockingSingle})
      for (int salt : {0, 1}) {
        const VLayout l = v_layout(p, me, salt);
        std::vector<int> send(static_cast<std::size_t>(l.send_n));
        for (std::size_t k = 0; k < send.size(); ++k) send[k] = me * 1000 + static_cast<int>(k);
        std::vector<int> recv1(static_cast<std::size_t>(l.recv_n), -1), recv2(recv1), ref(recv1);
        libcomm::AlltoallvOptions opts;
        opts.mode = mode;
        using mpitest::in_bytes;  // libcomm counts bytes
        const auto sc_b = in_bytes(l.sc, sizeof(int)), sd_b = in_bytes(l.sd, sizeof(int)),
                   rc_b = in_bytes(l.rc, sizeof(int)), rd_b = in_bytes(l.rd, sizeof(int));
        auto first = libcomm::ialltoallv(send.data(), sc_b, sd_b, recv1.data(), rc_b, rd_b, comm, a, opts);
        auto plan = libcomm::plan_alltoallv(comm, sc_b, sd_b, rc_b, rd_b, a, opts);
        plan.start(send.data(), recv2.data());
        while (!plan.test()) {
        }
        first.wait();
        const std::vector<int> sc(l.sc.begin(), l.sc.end()), sd(l.sd.begin(), l.sd.end()), rc(l.rc.begin(), l.rc.end()),
            rd(l.rd.begin(), l.rd.end());
        MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, ref.data(), rc.data(), rd.data(), MPI_INT,
                      MPI_COMM_WORLD);
        const std::string what = std::string(libcomm::alltoallv_algo_name(a)) + " mode " +
                                 std::string(libcomm::alltoallv_mode_name(mode)) + " salt " + std::to_string(salt);
        EXPECT_TRUE(recv1 == ref) << what << ": rank " << me << " (ialltoallv)";
        EXPECT_TRUE(recv2 == ref) << what << ": rank " << me << " (plan)";
        if (a == AlltoallvAlgo::Auto) {
          EXPECT_NE(first.reason().find("auto"), std::string::npos) << first.reason();
        }
      }
}

}  // namespace
