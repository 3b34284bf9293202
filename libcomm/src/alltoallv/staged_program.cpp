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

#include "alltoallv_internal.hpp"

namespace libcomm::detail {

StepProgram staged_alltoallv_program(AlltoallvAlgo algo, int p, int me, std::span<const std::int64_t> m,
                                     std::span<const std::int64_t> sdispls, std::span<const std::int64_t> rdispls,
                                     std::size_t esize, AlltoallvMode mode) {
  const auto up = static_cast<std::size_t>(p);
  require(m.size() == up * up && sdispls.size() == up && rdispls.size() == up,
          "staged_alltoallv_program: the count matrix needs P x P entries and the displacements P");
  auto alg = make_staged(algo, p);
  const StagedSchedule& sched = alg->schedule();
  ProgramBuilder pb(std::string(alltoallv_algo_name(algo)), me, p);
  const auto bytes = [&](std::int64_t n) { return static_cast<std::size_t>(n) * esize; };
  std::size_t send_extent = 0, recv_extent = 0;
  for (std::size_t k = 0; k < up; ++k) {
    if (const auto n = m[static_cast<std::size_t>(me) * up + k]; n > 0)
      send_extent = std::max(send_extent, bytes(sdispls[k] + n));
    if (const auto n = m[k * up + static_cast<std::size_t>(me)]; n > 0)
      recv_extent = std::max(recv_extent, bytes(rdispls[k] + n));
  }
  pb.set_extents(send_extent, recv_extent);

  // Every rank's held runs; for this rank also where element `first` of each run is.
  std::vector<std::vector<Run>> held(up);
  std::vector<ByteRange> where;  // parallel to held[me]
  for (std::size_t i = 0; i < up; ++i)
    for (std::size_t j = 0; j < up; ++j)
      if (const auto n = m[i * up + j]; n > 0) {
        held[i].push_back({static_cast<std::int32_t>(i), static_cast<std::int32_t>(j), 0, n});
        if (i == static_cast<std::size_t>(me)) where.push_back({Area::Send, bytes(sdispls[j]), bytes(n)});
      }

  std::uint32_t stage = 0;
  std::vector<Routed> routed;
  for (std::size_t s = 0; s < sched.stages.size(); ++s) {
    const Schedule& sch = sched.stages[s];
    // Bucket b of rank r goes to partners[r][b] (first appearance in the rounds).
    std::vector<std::vector<int>> partners(up);
    for (const Round& rd : sch.rounds)
      for (const Transfer& t : rd.transfers) partners[static_cast<std::size_t>(t.src)].push_back(t.dst);
    std::vector<std::vector<std::vector<Run>>> buckets(up);
    std::vector<ByteRange> my_bucket;  // this rank's bucket regions in scratch
    for (int r = 0; r < p; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      buckets[ur].resize(partners[ur].size());
      const auto bucket_of = [&](int partner) {
        const auto it = std::find(partners[ur].begin(), partners[ur].end(), partner);
        require(it != partners[ur].end(), "staged_alltoallv_program: a run routed to a rank the stage does not pair");
        return static_cast<std::size_t>(it - partners[ur].begin());
      };
      alg->begin_stage(static_cast<int>(s), r);
      std::vector<std::vector<std::pair<Run, ByteRange>>> sources(r == me ? partners[ur].size() : 0);
      for (std::size_t k = 0; k < held[ur].size(); ++k) {
        const Run& run = held[ur][k];
        routed.clear();
        alg->route(static_cast<int>(s), r, run, routed);
        for (const Routed& piece : routed) {
          const std::size_t b = bucket_of(piece.partner);
          buckets[ur][b].push_back(piece.run);
          if (r == me)
            sources[b].push_back({piece.run, {where[k].area, where[k].offset + bytes(piece.run.first - run.first),
                                              bytes(piece.run.n)}});
        }
      }
      held[ur].clear();
      if (r != me) continue;
      // Compose this rank's buckets (sBUF) in scratch: runs back to back, no headers.
      for (std::size_t b = 0; b < sources.size(); ++b) {
        std::size_t total = 0;
        for (const auto& [run, from] : sources[b]) total += from.bytes;
        const std::size_t at = pb.scratch(total);
        my_bucket.push_back({Area::Scratch, at, total});
        std::size_t off = at;
        for (const auto& [run, from] : sources[b]) {
          pb.copy(stage, from, {Area::Scratch, off, from.bytes});
          off += from.bytes;
        }
      }
    }
    where.clear();
    // The stage's messages in schedule step order; what arrives becomes next stage's held.
    std::vector<std::size_t> next_bucket(up, 0);
    const bool per_step = mode == AlltoallvMode::Blocking;
    std::uint32_t step_stage = stage;
    for (const Round& rd : sch.rounds) {
      for (const Transfer& t : rd.transfers) {
        const auto src = static_cast<std::size_t>(t.src), dst = static_cast<std::size_t>(t.dst);
        const std::size_t b = next_bucket[src]++;
        const auto& runs = buckets[src][b];
        if (t.dst == me) {
          std::size_t total = 0;
          for (const Run& r : runs) total += bytes(r.n);
          ByteRange region = t.src == me ? my_bucket[b] : ByteRange{Area::Scratch, pb.scratch(total), total};
          if (t.src != me) pb.recv(step_stage, t.src, region, step_stage);
          std::size_t off = region.offset;
          for (const Run& r : runs) {
            where.push_back({Area::Scratch, off, bytes(r.n)});
            off += bytes(r.n);
          }
        } else if (t.src == me) {
          pb.send(step_stage, t.dst, my_bucket[b], step_stage);
        }
        held[dst].insert(held[dst].end(), runs.begin(), runs.end());
      }
      if (per_step) ++step_stage;
    }
    stage = per_step ? step_stage : stage + 1;
  }
  // Deliver: every run this rank holds now is for it.
  for (std::size_t k = 0; k < held[static_cast<std::size_t>(me)].size(); ++k) {
    const Run& r = held[static_cast<std::size_t>(me)][k];
    require(r.dst == me, "staged_alltoallv_program: a run ended at the wrong rank");
    pb.copy(stage, where[k], {Area::Recv, bytes(rdispls[static_cast<std::size_t>(r.src)] + r.first), bytes(r.n)});
  }
  return std::move(pb).program();
}

}  // namespace libcomm::detail
