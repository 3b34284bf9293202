// The staged algorithms A2-A4 (paper 001) as a step program, for the non-blocking and
// persistent forms. The blocking engine (staged_engine.cpp) learns its message lengths at
// run time from the run headers; a program needs them when it is built. Given the whole
// count matrix (which the plan gathers once), every rank can route every rank's runs the
// way the engine does (the same routers, stage by stage, messages taken in schedule step
// order) and so knows every message's runs without headers. This rank's program then
// composes each send bucket by copy steps from where its runs are (the send buffer, or a
// message received in the stage before), sends and receives the buckets as the schedule
// pairs the ranks (one stage per step for b; all of a stage's messages at once for n1 and
// n2), and delivers the runs of the last stage into the receive buffer. Each stage has
// scratch regions of its own.
#include <algorithm>
#include <cstring>

#include "../runtime/check.hpp"
#include "../runtime/mpi_bytes.hpp"
#include "../runtime/plan_state.hpp"

#include "alltoallv_internal.hpp"

namespace libcomm::detail {

namespace {

// The send and receive extents of rank me's counts and displacements.
void set_extents(ProgramBuilder& pb, std::span<const std::int64_t> m, std::span<const std::int64_t> sdispls,
                 std::span<const std::int64_t> rdispls) {
  const std::size_t up = sdispls.size(), me = static_cast<std::size_t>(pb.rank());
  std::size_t send_extent = 0, recv_extent = 0;
  for (std::size_t k = 0; k < up; ++k) {
    if (const auto n = m[me * up + k]; n > 0) send_extent = std::max(send_extent, static_cast<std::size_t>(sdispls[k] + n));
    if (const auto n = m[k * up + me]; n > 0) recv_extent = std::max(recv_extent, static_cast<std::size_t>(rdispls[k] + n));
  }
  pb.set_extents(send_extent, recv_extent);
}

// Every rank's runs before the first stage (one per non-empty message), and where rank
// me's are in its send buffer.
void start_runs(std::span<const std::int64_t> m, std::span<const std::int64_t> sdispls, int me,
                std::vector<std::vector<Run>>& held, std::vector<ByteRange>& where) {
  const std::size_t up = held.size();
  for (std::size_t i = 0; i < up; ++i)
    for (std::size_t j = 0; j < up; ++j)
      if (const auto n = m[i * up + j]; n > 0) {
        held[i].push_back({static_cast<std::int32_t>(i), static_cast<std::int32_t>(j), 0, n});
        if (i == static_cast<std::size_t>(me))
          where.push_back({Area::Send, static_cast<std::size_t>(sdispls[j]), static_cast<std::size_t>(n)});
      }
}

}  // namespace

StepProgram staged_alltoallv_program(AlltoallvAlgo algo, int p, int me, std::span<const std::int64_t> m,
                                     std::span<const std::int64_t> sdispls, std::span<const std::int64_t> rdispls,
                                     AlltoallvMode mode, std::int64_t unit) {
  const auto up = static_cast<std::size_t>(p);
  require(m.size() == up * up && sdispls.size() == up && rdispls.size() == up,
          "staged_alltoallv_program: the count matrix needs P x P entries and the displacements P");
  auto alg = make_staged(algo, p);
  alg->set_unit(unit);
  const StagedSchedule& sched = alg->schedule();
  ProgramBuilder pb(std::string(alltoallv_algo_name(algo)), me, p);
  const auto bytes = [&](std::int64_t n) { return static_cast<std::size_t>(n); };
  set_extents(pb, m, sdispls, rdispls);
  // Every rank's held runs; for this rank also where element `first` of each run is.
  std::vector<std::vector<Run>> held(up);
  std::vector<ByteRange> where;  // parallel to held[me]
  start_runs(m, sdispls, me, held, where);

  std::uint32_t stage = 0;
  const bool per_step = mode == AlltoallvMode::Blocking;
  const std::string who = "staged_alltoallv_program: " + std::string(alltoallv_algo_name(algo));
  for (std::size_t s = 0; s < sched.stages.size(); ++s) {
    // This rank's pieces per bucket with where they are now, then its bucket regions (sBUF)
    // in scratch, composed by copies: runs back to back, no headers.
    std::vector<std::vector<ByteRange>> sources;
    std::vector<ByteRange> my_bucket;
    StageRouting cb;
    cb.on_piece = [&](int r, std::size_t k, std::size_t b, const Run& piece) {
      if (r != me) return;
      if (sources.size() <= b) sources.resize(b + 1);
      const Run& run = held[static_cast<std::size_t>(me)][k];
      sources[b].push_back({where[k].area, where[k].offset + bytes(piece.first - run.first), bytes(piece.n)});
    };
    cb.on_routed = [&](int r, std::size_t buckets) {
      if (r != me) return;
      sources.resize(buckets);  // (a bucket that got no runs is an empty message)
      for (const auto& pieces : sources) {
        std::size_t total = 0;
        for (const ByteRange& from : pieces) total += from.bytes;
        std::size_t off = pb.scratch(total);
        my_bucket.push_back({Area::Scratch, off, total});
        for (const ByteRange& from : pieces) {
          pb.copy(stage, from, {Area::Scratch, off, from.bytes});
          off += from.bytes;
        }
      }
      where.clear();
    };
    // What arrives becomes next stage's held, in schedule step order.
    cb.on_message = [&](std::size_t round, int src, int dst, std::size_t b, const std::vector<Run>& runs) {
      const std::uint32_t at = per_step ? stage + static_cast<std::uint32_t>(round) : stage;
      if (dst == me) {
        std::size_t total = 0;
        for (const Run& r : runs) total += bytes(r.n);
        const ByteRange region = src == me ? my_bucket[b] : ByteRange{Area::Scratch, pb.scratch(total), total};
        if (src != me) pb.recv(at, src, region, at);
        std::size_t off = region.offset;
        for (const Run& r : runs) {
          where.push_back({Area::Scratch, off, bytes(r.n)});
          off += bytes(r.n);
        }
      } else if (src == me) {
        pb.send(at, dst, my_bucket[b], at);
      }
    };
    route_stage(*alg, static_cast<int>(s), held, cb, who);
    stage += per_step ? static_cast<std::uint32_t>(sched.stages[s].rounds.size()) : 1;
  }
  // Deliver: every run this rank holds now is for it.
  for (std::size_t k = 0; k < held[static_cast<std::size_t>(me)].size(); ++k) {
    const Run& r = held[static_cast<std::size_t>(me)][k];
    require(r.dst == me, "staged_alltoallv_program: a run ended at the wrong rank");
    pb.copy(stage, where[k], {Area::Recv, bytes(rdispls[static_cast<std::size_t>(r.src)] + r.first), bytes(r.n)});
  }
  return std::move(pb).program();
}

namespace {

// A request's count exchange, as a step program: rank me's row of counts (a constant of
// the program) to every rank, every row into the gathered matrix (row r from rank r), as a
// linear non-blocking allgather does, so that LIBCOMM_TIMEOUT can name a rank that never
// answers.
StepProgram count_exchange_program(std::span<const std::int64_t> row, int me, int p) {
  ProgramBuilder pb("alltoallv counts", me, p);
  const std::size_t bytes = row.size_bytes();
  const ByteRange mine = pb.constant(row.data(), bytes);
  pb.copy(0, mine, {Area::Recv, static_cast<std::size_t>(me) * bytes, bytes});
  for (int r = 0; r < p; ++r)
    if (r != me) pb.recv(0, r, {Area::Recv, static_cast<std::size_t>(r) * bytes, bytes}, 0);
  for (int r = 0; r < p; ++r)
    if (r != me) pb.send(0, r, mine, 0);
  pb.set_extents(0, static_cast<std::size_t>(p) * bytes);
  return std::move(pb).program();
}

}  // namespace

// A staged algorithm routes every rank's runs, so its program needs the whole count matrix:
// a persistent plan gathers it when it is made (collective, like MPI_Alltoallv_init); a
// request gathers it at start with count_exchange_program and builds its program once
// every row is there.
std::shared_ptr<PlanState> staged_plan(const PlanCall<AlltoallvOp>& call) {
  const AlltoallvOp::Shape& s = call.shape;
  const Comm& comm = call.comm;
  const AlltoallvAlgo ran = call.choice.algo;
  const std::string& reason = call.choice.reason();
  const int p = comm.size(), me = comm.rank();
  const auto up = static_cast<std::size_t>(p);
  const auto unit = static_cast<std::int64_t>(s.opts->element_bytes);
  const AlltoallvMode mode = s.opts->mode;
  auto matrix = std::make_shared<std::vector<std::int64_t>>(up * up);
  if (call.form == Form::Persistent) {
    check_mpi(MPI_Allgather(s.sc.data(), p, MPI_INT64_T, matrix->data(), p, MPI_INT64_T, comm.internal()),
              "MPI_Allgather");
    return program_plan(comm, staged_alltoallv_program(ran, p, me, *matrix, s.sd, s.rd, mode, unit), reason, true);
  }
  // The request keeps its own copies of what it reads after this call returns, and the
  // program of its last run: a kept request whose gathered matrix is the same runs it again.
  auto sd = std::make_shared<const std::vector<std::int64_t>>(s.sd.begin(), s.sd.end());
  auto rd = std::make_shared<const std::vector<std::int64_t>>(s.rd.begin(), s.rd.end());
  auto last = std::make_shared<std::pair<std::vector<std::int64_t>, StepProgram>>();
  return deferred_program_plan(
      comm, std::string(alltoallv_algo_name(ran)), reason, count_exchange_program(s.sc, me, p), matrix->size() * 8,
      [=](std::span<const std::byte> gathered) {
        std::memcpy(matrix->data(), gathered.data(), gathered.size());
        if (last->first != *matrix) {
          last->second = staged_alltoallv_program(ran, p, me, *matrix, *sd, *rd, mode, unit);
          last->first = *matrix;
        }
        return last->second;
      });
}

}  // namespace libcomm::detail
