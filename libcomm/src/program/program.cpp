// Step programs: the builder, printing, and the symbolic verifier (libcomm/program.hpp).
#include "libcomm/program.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <tuple>

#include "libcomm/error.hpp"
#include "enum_table.hpp"

namespace libcomm {

// ---- StepProgram ----------------------------------------------------------------------

std::size_t StepProgram::messages_sent() const {
  return static_cast<std::size_t>(std::count_if(
      steps.begin(), steps.end(), [](const Step& s) { return s.kind == StepKind::Send; }));
}

std::size_t StepProgram::bytes_sent() const {
  std::size_t n = 0;
  for (const auto& s : steps)
    if (s.kind == StepKind::Send) n += s.from.bytes;
  return n;
}

namespace {

const char* area_name(Area a) {
  static constexpr const char* kNames[] = {"send", "recv", "scratch", "const", "shared"};
  return detail::enum_table<Area::Shared>(kNames, a, "?");
}

std::string range_text(const ByteRange& r) {
  return std::string(area_name(r.area)) + "[" + std::to_string(r.offset) + "+" +
         std::to_string(r.bytes) + "]";
}

// Per StepKind, as to_string() writes a step: the words before and between its operands.
struct KindText {
  const char* name;
  const char* between;
};
constexpr KindText kKindText[] = {{"send ", " to "},     {"recv ", " from "}, {"copy ", " -> "},
                                  {"reduce ", " into "}, {"check ", " == "},  {"library alltoall ", " -> "}};
static_assert(std::size(kKindText) == static_cast<std::size_t>(StepKind::Alltoall) + 1);

}  // namespace

std::string StepProgram::to_string() const {
  std::ostringstream out;
  out << algorithm << " rank " << rank << " of " << nprocs << ", " << stages << " stages, scratch "
      << scratch_bytes << " B";
  if (shared_bytes > 0) out << ", shared window " << shared_bytes << " B on channel " << int(shared_channel);
  out << "\n";
  for (const auto& s : steps) {
    out << "  stage " << s.stage << ": ";
    const auto kind = static_cast<std::size_t>(s.kind);
    if (kind < std::size(kKindText)) {  // receives and checks name `to` first
      const bool to_first = s.kind == StepKind::Recv || s.kind == StepKind::Check;
      out << kKindText[kind].name << range_text(to_first ? s.to : s.from) << kKindText[kind].between;
      if (s.kind == StepKind::Send || s.kind == StepKind::Recv)
        out << s.peer;
      else
        out << range_text(to_first ? s.from : s.to);
    }
    if (s.channel) out << " (channel " << int(s.channel) << ")";
    if (s.tag == TagKind::Sync) out << " (sync)";
    if ((s.kind == StepKind::Send || s.kind == StepKind::Recv) && s.complete != s.stage)
      out << " (complete by stage " << s.complete << ")";
    if (s.overlap) out << " (overlapped)";
    if (s.synchronous) out << " (synchronous)";
    if (s.cold) out << " (cold)";
    out << "\n";
  }
  return out.str();
}

// ---- ProgramBuilder -------------------------------------------------------------------

ProgramBuilder::ProgramBuilder(std::string algorithm, int rank, int nprocs) {
  p_.algorithm = std::move(algorithm);
  p_.rank = rank;
  p_.nprocs = nprocs;
}

void ProgramBuilder::add_message(StepKind kind, std::uint32_t stage, int peer, ByteRange range,
                                 std::uint32_t complete, TagKind tag, std::uint8_t channel) {
  if (range.bytes == 0 && tag == TagKind::Data) return;
  Step s;
  s.kind = kind;
  s.stage = stage;
  s.complete = std::max(stage, complete);
  s.peer = peer;
  s.channel = channel;
  s.tag = tag;
  (kind == StepKind::Send ? s.from : s.to) = range;
  p_.steps.push_back(s);
}

void ProgramBuilder::send(std::uint32_t stage, int peer, ByteRange from, std::uint32_t complete,
                          TagKind tag, std::uint8_t channel) {
  add_message(StepKind::Send, stage, peer, from, complete, tag, channel);
}

void ProgramBuilder::send_synchronous(std::uint32_t stage, int peer, ByteRange from, std::uint32_t complete) {
  const std::size_t before = p_.steps.size();
  send(stage, peer, from, complete);
  if (p_.steps.size() > before) p_.steps.back().synchronous = true;
}

void ProgramBuilder::recv(std::uint32_t stage, int peer, ByteRange to, std::uint32_t complete,
                          TagKind tag, std::uint8_t channel) {
  add_message(StepKind::Recv, stage, peer, to, complete, tag, channel);
}

void ProgramBuilder::exchange(std::uint32_t stage, int to, ByteRange out, int from, ByteRange in,
                              std::uint8_t channel) {
  recv(stage, from, in, stage, TagKind::Data, channel);
  send(stage, to, out, stage, TagKind::Data, channel);
}

void ProgramBuilder::copy(std::uint32_t stage, ByteRange from, ByteRange to, bool overlap) {
  if (from.bytes == 0) return;
  // Adjacent copies in both ranges merge into one (Bruck's packing of runs of blocks).
  if (!p_.steps.empty()) {
    Step& last = p_.steps.back();
    if (last.kind == StepKind::Copy && last.stage == stage && last.overlap == overlap &&
        last.from.area == from.area && last.to.area == to.area &&
        last.from.offset + last.from.bytes == from.offset &&
        last.to.offset + last.to.bytes == to.offset) {
      last.from.bytes += from.bytes;
      last.to.bytes += to.bytes;
      return;
    }
  }
  p_.steps.push_back({.kind = StepKind::Copy, .stage = stage, .complete = stage, .overlap = overlap, .from = from, .to = to});
}

void ProgramBuilder::reduce(std::uint32_t stage, ByteRange from, ByteRange to) {
  if (from.bytes == 0) return;
  p_.steps.push_back({.kind = StepKind::Reduce, .stage = stage, .complete = stage, .from = from, .to = to});
}

void ProgramBuilder::check(std::uint32_t stage, ByteRange expected, ByteRange got) {
  if (expected.bytes == 0) return;
  p_.steps.push_back({.kind = StepKind::Check, .stage = stage, .complete = stage, .from = expected, .to = got});
}

ByteRange ProgramBuilder::constant(const void* data, std::size_t bytes) {
  const std::size_t at = p_.constants.size();
  const auto* b = static_cast<const std::byte*>(data);
  p_.constants.insert(p_.constants.end(), b, b + bytes);
  return {Area::Const, at, bytes};
}

void ProgramBuilder::copy_cold(std::uint32_t stage, ByteRange from, ByteRange to) {
  if (from.bytes == 0) return;
  p_.steps.push_back({.kind = StepKind::Copy, .stage = stage, .complete = stage, .cold = true, .from = from, .to = to});
}

std::uint32_t ProgramBuilder::barrier(std::uint32_t stage, std::uint8_t channel) {
  int p = p_.nprocs, me = p_.rank;
  if (channel != 0) {
    require(channel <= p_.channel_ranks.size(), "ProgramBuilder::barrier: no channel " + std::to_string(channel));
    const auto& m = p_.channel_ranks[channel - 1];
    p = static_cast<int>(m.size());
    me = static_cast<int>(std::find(m.begin(), m.end(), p_.rank) - m.begin());
    require(me < p, "ProgramBuilder::barrier: rank " + std::to_string(p_.rank) + " is not a member of channel " +
                        std::to_string(channel));
  }
  const bool pairs = (p & (p - 1)) == 0;  // a power of two: recursive doubling, with me XOR dist
  for (int dist = 1; dist < p; dist *= 2, ++stage) {
    recv(stage, pairs ? me ^ dist : (me - dist % p + p) % p, {Area::Recv, 0, 0}, stage, TagKind::Sync, channel);
    send(stage, pairs ? me ^ dist : (me + dist) % p, {Area::Send, 0, 0}, stage, TagKind::Sync, channel);
  }
  return stage;
}

void ProgramBuilder::set_shared(std::uint8_t channel, std::size_t bytes) {
  require(channel != 0 && channel <= p_.channel_ranks.size(),
          "ProgramBuilder::set_shared: the window needs a sub-communicator channel, not " + std::to_string(channel));
  p_.shared_channel = channel;
  p_.shared_bytes = bytes;
}

void ProgramBuilder::set_reduction(ElemType elem, ReduceOp op, std::size_t elem_bytes) {
  p_.elem = elem;
  p_.op = op;
  p_.elem_bytes = elem_bytes;
}

void ProgramBuilder::set_extents(std::size_t send_bytes, std::size_t recv_bytes) {
  p_.send_bytes = send_bytes;
  p_.recv_bytes = recv_bytes;
}

std::size_t ProgramBuilder::scratch(std::size_t bytes) {
  const std::size_t at = p_.scratch_bytes;
  p_.scratch_bytes += bytes;
  return at;
}

int ProgramBuilder::add_channel(std::string name, std::vector<int> ranks) {
  p_.channel_ranks.push_back(std::move(ranks));
  p_.channel_names.push_back(std::move(name));
  return static_cast<int>(p_.channel_ranks.size());
}

void ProgramBuilder::alltoall(std::uint32_t stage, std::uint8_t channel, ByteRange from, ByteRange to,
                              std::uint32_t complete) {
  p_.steps.push_back({.kind = StepKind::Alltoall,
                      .stage = stage,
                      .complete = std::max(stage, complete),
                      .channel = channel,
                      .from = from,
                      .to = to});
}

std::uint32_t ProgramBuilder::embed(const StepProgram& inner, std::uint32_t stage, std::uint8_t channel,
                                    ByteRange send, ByteRange recv) {
  require(inner.channel_ranks.empty(), "ProgramBuilder::embed: the inner program uses channels of its own");
  const std::size_t scratch_at = scratch(inner.scratch_bytes);
  const auto map = [&](ByteRange r) {
    switch (r.area) {
      case Area::Send: return ByteRange{send.area, send.offset + r.offset, r.bytes};
      case Area::Recv: return ByteRange{recv.area, recv.offset + r.offset, r.bytes};
      case Area::Scratch: return ByteRange{Area::Scratch, scratch_at + r.offset, r.bytes};
      case Area::Const:
      case Area::Shared: break;
    }
    throw Error("ProgramBuilder::embed: inner programs with constants or a shared window are not supported");
  };
  for (Step st : inner.steps) {
    st.stage += stage;
    st.complete += stage;
    if (st.kind == StepKind::Send || st.kind == StepKind::Recv || st.kind == StepKind::Alltoall)
      st.channel = channel;
    if (st.kind != StepKind::Recv) st.from = map(st.from);
    if (st.kind != StepKind::Send) st.to = map(st.to);
    p_.steps.push_back(st);
  }
  return stage + inner.stages;
}

namespace {

bool within(const ByteRange& r, const ByteRange& outer) {
  return r.area == outer.area && r.offset >= outer.offset && r.offset + r.bytes <= outer.offset + outer.bytes;
}

bool touches(const ByteRange& r, const ByteRange& other) {
  return r.area == other.area && r.bytes > 0 && r.offset < other.offset + other.bytes &&
         other.offset < r.offset + r.bytes;
}

// A copy out of the send buffer whose copy a send of the same stage then reads (the own
// block of the allgathers' first shift): the send reads the send buffer itself, and the
// copy, which nothing else of its stage touches any more, overlaps the stage's messages
// instead of preceding them (at 64 KiB on 2 ranks the copy was a third of the call).
void send_from_the_source(std::vector<Step>& steps) {
  for (std::size_t c = 0; c < steps.size(); ++c) {
    Step& copy = steps[c];
    if (copy.kind != StepKind::Copy || copy.overlap || copy.from.area != Area::Send || copy.to.area == Area::Send)
      continue;
    bool other_use = false;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      Step& st = steps[k];
      if (k == c || st.stage != copy.stage) continue;
      if (st.kind == StepKind::Send && within(st.from, copy.to)) {
        st.from = {Area::Send, copy.from.offset + (st.from.offset - copy.to.offset), st.from.bytes};
        continue;
      }
      const bool reads = st.kind != StepKind::Recv && touches(st.from, copy.to);
      const bool writes = st.kind != StepKind::Send && touches(st.to, copy.to);
      other_use = other_use || reads || writes;
    }
    if (!other_use) copy.overlap = true;
  }
}

}  // namespace

void mark_cold_copies(StepProgram& p) {
  std::vector<const Step*> arrivals;
  for (Step& st : p.steps) {  // (sorted by stage)
    if (st.kind == StepKind::Copy && !st.cold)
      for (const Step* a : arrivals)
        if (a->complete < st.stage && touches(st.from, a->to)) {
          st.cold = true;
          break;
        }
    if (st.kind == StepKind::Recv || st.kind == StepKind::Alltoall) arrivals.push_back(&st);
  }
}

StepProgram ProgramBuilder::program() && {
  std::stable_sort(p_.steps.begin(), p_.steps.end(),
                   [](const Step& a, const Step& b) { return a.stage < b.stage; });
  send_from_the_source(p_.steps);
  p_.stages = 0;
  for (const auto& s : p_.steps) p_.stages = std::max(p_.stages, std::max(s.stage, s.complete) + 1);
  return std::move(p_);
}

// ---- verify_programs ------------------------------------------------------------------

namespace {

// A byte's symbolic value: how many ranks' contributions it combines (0: never written),
// a sum of one hash per contributing rank, and the send-buffer offset they all came from.
struct Cell {
  std::uint32_t count = 0;
  std::uint64_t hash = 0;
  std::uint64_t offset = 0;
  bool operator==(const Cell&) const = default;
};

std::uint64_t rank_hash(int r) {  // splitmix64
  std::uint64_t z = static_cast<std::uint64_t>(r) + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kConstHash = 0xC0257A77C0257A77ULL;

struct Inflight {
  const Step* step;
  std::uint32_t retire;  // removed when this stage ends
};

// Happens-before among ranks, for the shared window: a vector clock per rank, ticked by
// each of its accesses and sends, merged from a message's sender when the receive completes.
using Clock = std::vector<std::uint64_t>;

struct Pending {
  std::uint32_t complete;
  bool* done;
  Clock* sender_clock;  // a receive's: the sender's clock when it posted (null: none)
};

// Who last wrote a byte of a shared window, at which of its clock ticks.
struct Writer {
  int rank = -1;
  std::uint64_t tick = 0;
};

struct SharedArea {
  std::vector<Cell> cells;
  std::vector<Writer> writers;
};

struct RankSim {
  const StepProgram* p = nullptr;
  std::vector<Cell> area[4];  // by Area, but Shared
  SharedArea* shared = nullptr;  // the window of the program's shared channel
  Clock clock;                   // (only with a shared window)
  std::uint32_t stage = 0;
  bool posted = false;
  std::size_t next = 0;
  std::vector<Pending> pending;
  std::vector<Inflight> inflight;
  bool finished() const { return stage >= p->stages; }
};

bool overlaps(const ByteRange& a, const ByteRange& b) {
  return a.area == b.area && a.bytes && b.bytes && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

class Verifier {
 public:
  Verifier(const std::vector<StepProgram>& programs, VerifyResult& res)
      : progs_(programs), res_(res) {}

  void run() {
    const int np = static_cast<int>(progs_.size());
    ranks_.resize(progs_.size());
    for (int r = 0; r < np; ++r) {
      const StepProgram& p = progs_[r];
      if (p.rank != r || p.nprocs != np)
        problem("program " + std::to_string(r) + " says rank " + std::to_string(p.rank) + " of " +
                std::to_string(p.nprocs));
      RankSim& s = ranks_[r];
      s.p = &p;
      s.area[0].resize(p.send_bytes);
      for (std::size_t k = 0; k < p.send_bytes; ++k) s.area[0][k] = {1, rank_hash(r), k};
      s.area[1].resize(p.recv_bytes);
      s.area[2].resize(p.scratch_bytes);
      // Program constants are values, not symbols: equal bytes compare equal across ranks.
      s.area[3].resize(p.constants.size());
      for (std::size_t k = 0; k < p.constants.size(); ++k)
        s.area[3][k] = {1, kConstHash ^ static_cast<std::uint64_t>(p.constants[k]), 0};
      if (p.shared_bytes == 0) continue;
      clocks_ = true;
      if (p.shared_channel == 0 || p.shared_channel > p.channel_names.size()) {
        problem("rank " + std::to_string(r) + ": the shared window's channel " + std::to_string(p.shared_channel) +
                " does not exist");
        continue;
      }
      const std::string& name = p.channel_names[p.shared_channel - 1];
      auto [it, fresh] = shared_.try_emplace(name);
      if (fresh) {
        it->second.cells.resize(p.shared_bytes);
        it->second.writers.resize(p.shared_bytes);
      } else if (it->second.cells.size() != p.shared_bytes) {
        problem("rank " + std::to_string(r) + ": its shared window on channel '" + name + "' has " +
                std::to_string(p.shared_bytes) + " bytes, another member's " +
                std::to_string(it->second.cells.size()));
      }
      s.shared = &it->second;
    }
    if (clocks_)
      for (auto& s : ranks_) s.clock.assign(progs_.size(), 0);
    if (!res_.ok) return;
    bool moved = true;
    while (moved && !res_.full()) {
      moved = false;
      for (int r = 0; r < np; ++r) moved |= advance(r);
    }
    for (int r = 0; r < np; ++r)
      if (!ranks_[r].finished())
        problem("rank " + std::to_string(r) + " never finishes stage " +
                std::to_string(ranks_[r].stage) +
                " (deadlock: a receive or send it waits for never matches)");
    for (const auto& [key, q] : sends_)
      if (!q.empty())
        problem("a message from rank " + std::to_string(std::get<0>(key)) + " to rank " +
                std::to_string(std::get<1>(key)) + " is never received");
  }

  const std::vector<Cell>& recv_cells(int r) const { return ranks_[r].area[1]; }
  void problem(std::string what) { res_.fail(std::move(what)); }

 private:
  using Key = std::tuple<int, int, std::string, int>;  // src, dst (channel 0 ranks), channel name, tag
  struct Posted {  // a send, a receive or a library all-to-all
    int rank;
    const Step* step;
    bool* done;
    // With a shared window, a send's: the sender's clock at posting; a receive's: filled
    // with the sender's at the match.
    Clock* clock = nullptr;
  };

  std::vector<Cell>& cells(int r, Area a) {
    if (a != Area::Shared) return ranks_[r].area[static_cast<int>(a)];
    static std::vector<Cell> none;
    none.clear();
    return ranks_[r].shared ? ranks_[r].shared->cells : none;
  }

  // A read of `x` (in the shared window) by rank r, which knows `known` of the others: each
  // byte another rank wrote must have been written before something r heard of.
  void check_shared_read(int r, const Step& st, const ByteRange& x, const Clock& known) {
    if (x.area != Area::Shared || !ranks_[r].shared) return;
    const auto& w = ranks_[r].shared->writers;
    for (std::size_t k = x.offset; k < x.offset + x.bytes && k < w.size(); ++k)
      if (w[k].rank >= 0 && w[k].rank != r && w[k].tick > known[static_cast<std::size_t>(w[k].rank)]) {
        problem(where(r, st) + "reads " + range_text(x) + " byte " + std::to_string(k - x.offset) +
                " of the shared window, which rank " + std::to_string(w[k].rank) +
                " wrote with no message ordering the two (a race)");
        return;
      }
  }

  // A write of `x` by rank r: an earlier write by another rank must be ordered before it.
  void note_shared_write(int r, const Step& st, const ByteRange& x) {
    if (x.area != Area::Shared || !ranks_[r].shared) return;
    check_shared_read(r, st, x, ranks_[r].clock);
    auto& w = ranks_[r].shared->writers;
    const std::uint64_t t = ++ranks_[r].clock[static_cast<std::size_t>(r)];
    for (std::size_t k = x.offset; k < x.offset + x.bytes && k < w.size(); ++k) w[k] = {r, t};
  }

  std::string where(int r, const Step& st) const {
    return progs_[r].algorithm + ": rank " + std::to_string(r) + " stage " +
           std::to_string(st.stage) + ": ";
  }

  bool in_area(int r, const ByteRange& x, const Step& st, bool write = false) {
    if (write && x.area == Area::Const) {
      problem(where(r, st) + "writes into the program's constants " + range_text(x));
      return false;
    }
    if (x.area == Area::Shared && !ranks_[r].shared) {
      problem(where(r, st) + range_text(x) + ": the program has no shared window");
      return false;
    }
    const auto& a = cells(r, x.area);
    if (x.offset + x.bytes <= a.size()) return true;
    problem(where(r, st) + range_text(x) + " lies outside the " + area_name(x.area) + " area of " +
            std::to_string(a.size()) + " bytes");
    return false;
  }

  // Channel numbers are per rank; names are the same on every member.
  std::string channel_name(int r, const Step& st) const {
    const auto& names = progs_[r].channel_names;
    return st.channel == 0 || st.channel > names.size() ? std::string() : names[st.channel - 1];
  }

  int global_rank(int r, const Step& st, int peer) {
    if (st.channel == 0) return peer;
    const auto& ch = progs_[r].channel_ranks;
    if (st.channel > ch.size() || peer < 0 || peer >= static_cast<int>(ch[st.channel - 1].size())) {
      problem(where(r, st) + "peer " + std::to_string(peer) + " of channel " +
              std::to_string(st.channel) + " does not exist");
      return -1;
    }
    return ch[st.channel - 1][peer];
  }

  // A local step must not touch what a communication step still in flight reads or writes.
  void check_hazard(int r, const Step& st) {
    for (const auto& f : ranks_[r].inflight) {
      if (f.step->kind == StepKind::Alltoall) {  // reads `from`, writes `to`
        if (overlaps(st.to, f.step->from) || overlaps(st.to, f.step->to) || overlaps(st.from, f.step->to))
          problem(where(r, st) + "a local step touches the buffers of a library all-to-all in flight");
        continue;
      }
      const ByteRange& busy = f.step->kind == StepKind::Send ? f.step->from : f.step->to;
      const bool conflict = f.step->kind == StepKind::Send
                                ? st.kind != StepKind::Check && overlaps(st.to, busy)
                                : overlaps(st.to, busy) || overlaps(st.from, busy);
      if (conflict)
        problem(where(r, st) + "a local step touches " + range_text(busy) + " while a " +
                (f.step->kind == StepKind::Send ? "send of it" : "receive into it") +
                " is in flight");
    }
  }

  void run_local(int r, const Step& st) {
    if (!in_area(r, st.from, st) || !in_area(r, st.to, st, st.kind != StepKind::Check)) return;
    check_hazard(r, st);
    if (clocks_) {
      check_shared_read(r, st, st.from, ranks_[r].clock);
      if (st.kind != StepKind::Check) note_shared_write(r, st, st.to);
    }
    auto& from = cells(r, st.from.area);
    auto& to = cells(r, st.to.area);
    const int np = static_cast<int>(progs_.size());
    for (std::size_t k = 0; k < st.from.bytes; ++k) {
      const Cell c = from[st.from.offset + k];
      Cell& d = to[st.to.offset + k];
      if (st.kind == StepKind::Copy) {  // copies carry unwritten bytes along (padding)
        d = c;
        continue;
      }
      if (c.count == 0) {
        problem(where(r, st) + "reads " + range_text(st.from) + " byte " + std::to_string(k) +
                " before anything was written there");
        return;
      }
      if (st.kind == StepKind::Check) {
        if (d != c) {
          problem(where(r, st) + "check of " + range_text(st.to) + " byte " + std::to_string(k) +
                  " fails: it does not hold what " + range_text(st.from) + " holds");
          return;
        }
        continue;
      }
      if (d.count == 0 || d.offset != c.offset ||
          d.count + c.count > static_cast<std::uint32_t>(np)) {
        problem(where(r, st) + "reduction into " + range_text(st.to) + " byte " +
                std::to_string(k) +
                (d.count == 0           ? " combines with an unwritten byte"
                 : d.offset != c.offset ? " combines elements of different offsets"
                                        : " combines some rank's contribution twice"));
        return;
      }
      d.count += c.count;
      d.hash += c.hash;
    }
  }

  void try_match(const Key& key) {
    auto& sq = sends_[key];
    auto& rq = recvs_[key];
    while (!sq.empty() && !rq.empty()) {
      const Posted s = sq.front();
      const Posted v = rq.front();
      sq.pop_front();
      rq.pop_front();
      *s.done = *v.done = true;
      if (s.clock && v.clock) *v.clock = *s.clock;
      if (s.step->tag == TagKind::Sync) continue;
      if (s.step->from.bytes != v.step->to.bytes) {
        problem(where(s.rank, *s.step) + "sends " + std::to_string(s.step->from.bytes) +
                " bytes to rank " + std::to_string(v.rank) + ", which receives " +
                std::to_string(v.step->to.bytes));
        continue;
      }
      if (clocks_) {
        check_shared_read(s.rank, *s.step, s.step->from, *s.clock);
        note_shared_write(v.rank, *v.step, v.step->to);
      }
      const auto& from = cells(s.rank, s.step->from.area);
      auto& to = cells(v.rank, v.step->to.area);
      // A message may carry bytes never written (padding of the hierarchical schemes): they
      // arrive unwritten, and the result check reports them if they end up there.
      std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(s.step->from.offset), s.step->from.bytes,
                  to.begin() + static_cast<std::ptrdiff_t>(v.step->to.offset));
    }
  }

  // The library all-to-all: delivered once every member of its channel has posted its
  // next one on that channel (collectives on a communicator match in posting order).
  void post_collective(int r, const Step& st, bool* done) {
    RankSim& s = ranks_[r];
    s.pending.push_back({st.complete, done, nullptr});
    if (!in_area(r, st.from, st) || !in_area(r, st.to, st, true)) {
      *done = true;
      return;
    }
    s.inflight.push_back({&st, st.complete});
    const std::string name = channel_name(r, st);
    colls_[name][r].push_back({r, &st, done});
    std::vector<int> members;
    if (st.channel == 0) {
      for (int k = 0; k < static_cast<int>(progs_.size()); ++k) members.push_back(k);
    } else {
      members = progs_[r].channel_ranks[st.channel - 1];
    }
    auto& queues = colls_[name];
    for (;;) {
      for (int m : members)
        if (queues[m].empty()) return;
      const std::size_t n = members.size();
      std::vector<Posted> now;
      for (int m : members) {
        now.push_back(queues[m].front());
        queues[m].pop_front();
      }
      const std::size_t bytes = now[0].step->from.bytes;
      for (const auto& x : now)
        if (x.step->from.bytes != bytes || x.step->to.bytes != bytes || bytes % n != 0)
          problem(where(x.rank, *x.step) + "library all-to-all of " + std::to_string(x.step->from.bytes) + " -> " +
                  std::to_string(x.step->to.bytes) + " bytes on channel '" + name + "' does not match rank " +
                  std::to_string(now[0].rank) + "'s " + std::to_string(bytes) + " over " + std::to_string(n) +
                  " members");
      if (!res_.ok) return;
      const std::size_t blk = bytes / n;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < n; ++k) {
          const auto& from = cells(now[i].rank, now[i].step->from.area);
          auto& to = cells(now[k].rank, now[k].step->to.area);
          std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(now[i].step->from.offset + k * blk), blk,
                      to.begin() + static_cast<std::ptrdiff_t>(now[k].step->to.offset + i * blk));
        }
      for (const auto& x : now) *x.done = true;
    }
  }

  void post_comm(int r, const Step& st, bool* done) {
    if (st.kind == StepKind::Alltoall) {
      post_collective(r, st, done);
      return;
    }
    RankSim& s = ranks_[r];
    Clock* clock = nullptr;
    if (clocks_) {
      clocks_store_.emplace_back();
      clock = &clocks_store_.back();
      if (st.kind == StepKind::Send) ++s.clock[static_cast<std::size_t>(r)], *clock = s.clock;
    }
    s.pending.push_back({st.complete, done, st.kind == StepKind::Recv ? clock : nullptr});
    const ByteRange& x = st.kind == StepKind::Send ? st.from : st.to;
    if (!in_area(r, x, st, st.kind == StepKind::Recv)) {
      *done = true;
      return;
    }
    s.inflight.push_back({&st, st.complete});
    const int peer = global_rank(r, st, st.peer);
    if (peer < 0 || peer >= static_cast<int>(progs_.size())) {
      problem(where(r, st) + "peer " + std::to_string(st.peer) + " out of range");
      *done = true;
      return;
    }
    const bool send = st.kind == StepKind::Send;
    const Key key{send ? r : peer, send ? peer : r, channel_name(r, st), static_cast<int>(st.tag)};
    (send ? sends_ : recvs_)[key].push_back({r, &st, done, clock});
    try_match(key);
  }

  bool advance(int r) {
    RankSim& s = ranks_[r];
    bool moved = false;
    while (!s.finished() && !res_.full()) {
      if (!s.posted) {
        const auto& steps = s.p->steps;
        std::size_t end = s.next;
        while (end < steps.size() && steps[end].stage == s.stage) ++end;
        for (std::size_t k = s.next; k < end; ++k)
          if (detail::is_local(steps[k].kind) && !steps[k].overlap) run_local(r, steps[k]);
        for (StepKind kind : {StepKind::Recv, StepKind::Send, StepKind::Alltoall})
          for (std::size_t k = s.next; k < end; ++k)
            if (steps[k].kind == kind) post_comm(r, steps[k], new_flag());
        for (std::size_t k = s.next; k < end; ++k)
          if (detail::is_local(steps[k].kind) && steps[k].overlap) run_local(r, steps[k]);
        s.next = end;
        s.posted = true;
        moved = true;
      }
      bool ready = true;
      for (const auto& x : s.pending)
        if (x.complete <= s.stage && !*x.done) ready = false;
      if (!ready) break;
      if (clocks_)  // what the senders knew, now this rank knows
        for (const auto& x : s.pending)
          if (x.complete <= s.stage && x.sender_clock && !x.sender_clock->empty())
            for (std::size_t k = 0; k < s.clock.size(); ++k) s.clock[k] = std::max(s.clock[k], (*x.sender_clock)[k]);
      std::erase_if(s.pending, [&](const Pending& x) { return x.complete <= s.stage; });
      std::erase_if(s.inflight, [&](const Inflight& f) { return f.retire <= s.stage; });
      ++s.stage;
      s.posted = false;
      moved = true;
    }
    return moved;
  }

  bool* new_flag() {
    flags_.push_back(false);
    return &flags_.back();
  }

  const std::vector<StepProgram>& progs_;
  VerifyResult& res_;
  std::vector<RankSim> ranks_;
  std::map<Key, std::deque<Posted>> sends_, recvs_;
  std::map<std::string, std::map<int, std::deque<Posted>>> colls_;  // channel name -> rank -> posted
  std::deque<bool> flags_;  // stable addresses
  bool clocks_ = false;     // some program has a shared window: track happens-before
  std::map<std::string, SharedArea> shared_;  // by the shared channel's name
  std::deque<Clock> clocks_store_;            // message clocks (stable addresses)
};

}  // namespace

VerifyResult verify_programs(const std::vector<StepProgram>& programs,
                             const std::function<std::size_t(int rank)>& result_bytes,
                             const ExpectedResult& expected) {
  VerifyResult res;
  Verifier v(programs, res);
  v.run();
  if (!res.ok) return res;
  const int np = static_cast<int>(programs.size());
  std::uint64_t all = 0;
  for (int r = 0; r < np; ++r) all += rank_hash(r);
  for (int r = 0; r < np; ++r) {
    const auto& cells = v.recv_cells(r);
    const std::size_t n = result_bytes(r);
    if (n > cells.size()) {
      v.problem(programs[r].algorithm + ": rank " + std::to_string(r) + ": the result needs " +
                std::to_string(n) + " bytes, the program's receive area has " +
                std::to_string(cells.size()));
      continue;
    }
    for (std::size_t k = 0; k < n; ++k) {
      const ByteOrigin o = expected(r, k);
      const Cell want = o.rank < 0 ? Cell{static_cast<std::uint32_t>(np), all, o.offset}
                                   : Cell{1, rank_hash(o.rank), o.offset};
      if (cells[k] == want) continue;
      const Cell& got = cells[k];
      std::string what =
          got.count == 0 ? "was never written"
          : got.count != want.count
              ? "combines " + std::to_string(got.count) + " contributions, want " +
                    std::to_string(want.count)
              : "holds send byte " + std::to_string(got.offset) +
                    (got.hash == want.hash ? " of the right rank" : " of another rank");
      v.problem(
          programs[r].algorithm + ": rank " + std::to_string(r) + ": result byte " +
          std::to_string(k) + " " + what + " (want byte " + std::to_string(o.offset) +
          (o.rank < 0 ? " reduced over all ranks)" : " of rank " + std::to_string(o.rank) + ")"));
      if (res.full()) return res;
      break;  // one report per rank
    }
  }
  return res;
}

}  // namespace libcomm
