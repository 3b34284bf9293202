#include "libcomm/schedule.hpp"

#include <optional>
#include <sstream>

#include "libcomm/program.hpp"

namespace libcomm {

std::size_t Schedule::num_transfers() const {
  std::size_t n = 0;
  for (const auto& r : rounds) n += r.transfers.size();
  return n;
}

std::string Schedule::to_string() const {
  std::ostringstream os;
  os << name << ": P=" << nprocs << ", " << rounds.size() << " rounds, ports=" << ports << "\n";
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    os << "round " << i << ":";
    for (const auto& t : rounds[i].transfers) os << " " << t.src << "->" << t.dst;
    os << "\n";
  }
  return os.str();
}

std::string VerifyResult::summary() const {
  if (ok) return "ok";
  std::ostringstream os;
  for (const auto& p : problems) os << p << "\n";
  return os.str();
}

void VerifyResult::fail(std::string what) {
  ok = false;
  if (!full()) problems.push_back(std::move(what));
}

VerifyResult verify_aapc_schedule(const Schedule& s) {
  VerifyResult res;
  const int p = s.nprocs;
  if (p <= 0) {
    res.fail("nprocs is " + std::to_string(p));
    return res;
  }
  std::vector<int> seen(static_cast<std::size_t>(p) * p, 0);
  std::vector<int> sends(p), recvs(p);
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    std::fill(sends.begin(), sends.end(), 0);
    std::fill(recvs.begin(), recvs.end(), 0);
    for (const auto& t : s.rounds[r].transfers) {
      const std::string where = "round " + std::to_string(r) + ", transfer " +
                                std::to_string(t.src) + "->" + std::to_string(t.dst);
      if (t.src < 0 || t.src >= p || t.dst < 0 || t.dst >= p) {
        res.fail(where + ": rank out of range [0, " + std::to_string(p) + ")");
        continue;
      }
      if (t.block != aapc_block(t.src, t.dst, p))
        res.fail(where + ": carries block " + std::to_string(t.block) + ", expected " +
                std::to_string(aapc_block(t.src, t.dst, p)));
      ++seen[static_cast<std::size_t>(t.src) * p + t.dst];
      if (t.src != t.dst) {
        ++sends[t.src];
        ++recvs[t.dst];
      }
    }
    for (int q = 0; q < p; ++q) {
      if (sends[q] > s.ports)
        res.fail("round " + std::to_string(r) + ": rank " + std::to_string(q) + " sends " +
                std::to_string(sends[q]) + " messages, ports = " + std::to_string(s.ports));
      if (recvs[q] > s.ports)
        res.fail("round " + std::to_string(r) + ": rank " + std::to_string(q) + " receives " +
                std::to_string(recvs[q]) + " messages, ports = " + std::to_string(s.ports));
    }
  }
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b) {
      const int n = seen[static_cast<std::size_t>(a) * p + b];
      if (n != 1)
        res.fail("message " + std::to_string(a) + "->" + std::to_string(b) + " appears " +
                std::to_string(n) + " times");
    }
  return res;
}

StepProgram schedule_program(const Schedule& s, int rank, std::size_t b, ScheduleRun run) {
  ProgramBuilder out(s.name, rank, s.nprocs);
  const std::size_t n = static_cast<std::size_t>(s.nprocs) * b;
  out.set_extents(n, n);
  const auto block = [&](Area a, int k) { return ByteRange{a, static_cast<std::size_t>(k) * b, b}; };
  // The rank's block to itself is a local copy; it joins the rank's first round of
  // messages, after they are posted, whichever round the schedule lists it in (the
  // order of the messages is the schedule's): no stage of its own to wait through.
  std::optional<std::uint32_t> first_message_stage;
  bool self = false;
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    const auto stage = static_cast<std::uint32_t>(run == ScheduleRun::PerRound ? r : 0);
    for (const auto& t : s.rounds[r].transfers) {
      if (t.src == rank && t.dst == rank) {
        self = true;
        continue;
      }
      if (t.src == rank)
        out.send(stage, t.dst, block(Area::Send, t.dst), stage);
      else if (t.dst == rank)
        out.recv(stage, t.src, block(Area::Recv, t.src), stage);
      else
        continue;
      if (!first_message_stage) first_message_stage = stage;
    }
  }
  if (self) out.copy(first_message_stage.value_or(0), block(Area::Send, rank), block(Area::Recv, rank), true);
  return std::move(out).program();
}

}  // namespace libcomm
