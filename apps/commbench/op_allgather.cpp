// commbench --op allgather: all-to-all broadcast (libcomm/allgather.hpp, paper 004). Block
// = bytes each rank contributes (the mean with --block-layout unequal). Every run is
// checked byte for byte against the expected content and against what native delivered.
#include <algorithm>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "apps/common.hpp"
#include "cube_options.hpp"
#include "libcomm/allgather.hpp"
#include "operation.hpp"

namespace commbench {

CubeOptions& cube_options() {
  static CubeOptions o;
  return o;
}

std::vector<std::size_t> layout_counts(const std::string& layout, std::size_t mean, int p) {
  if (layout == "equal") return std::vector<std::size_t>(static_cast<std::size_t>(p), mean);
  if (layout == "unequal") return libcomm::cube::consecutive_counts(mean * static_cast<std::size_t>(p), p);
  throw libcomm::Error("--block-layout: unknown layout '" + layout + "' (valid: equal, unequal)");
}

namespace {

using libcomm::AllgatherAlgo;

std::string g_reorder = "direct";  // --reorder

class AllgatherOp : public Operation {
 public:
  AllgatherOp(const libcomm::Comm& comm, const Settings& s) : Operation("allgather"), comm_(comm) {
    opts_.allow_fallback = !s.no_fallback;
    opts_.order = libcomm::node_order_from_name(cube_options().order);
    if (g_reorder == "direct") opts_.reorder = libcomm::Reorder::Direct;
    else if (g_reorder == "staged") opts_.reorder = libcomm::Reorder::Staged;
    else throw libcomm::Error("--reorder: unknown value '" + g_reorder + "' (valid: direct, staged)");
    layout_counts(cube_options().block_layout, 0, 1);  // validates the name on every rank
  }

  bool in_all(std::string_view name) const override { return in_all_on(name, comm_); }

  void check_applicable(const std::string& algo, std::size_t) const override {
    libcomm::choose_allgather(libcomm::allgather_algo_from_name(parse_timed(algo).algo), comm_.size(), opts_);
  }

  void prepare(std::size_t block) override {
    const int p = comm_.size(), me = comm_.rank();
    counts_ = layout_counts(cube_options().block_layout, block, p);
    displ_.assign(counts_.size(), 0);
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts_.size(); ++r) {
      displ_[r] = total;
      total += counts_[r];
    }
    send_.assign(counts_[static_cast<std::size_t>(me)], std::byte{0});
    apps::fill_pattern(send_.data(), me, 0, send_.size());
    recv_.assign(total, std::byte{0});
    // Blocks of whole doubles when the sizes allow it (subblocks never split an element).
    bool eights = true;
    for (auto c : counts_) eights = eights && c % 8 == 0;
    opts_.element_bytes = eights ? 8 : 1;
    reference_.clear();  // (made by the first check: a simulated payload checks nothing)
  }

  void reset() override { std::memset(recv_.data(), 0xA5, recv_.size()); }

  std::string run(const std::string& algo, bool checked) override {
    libcomm::AllgatherOptions o = opts_;
    o.check_args = checked;
    const auto c = libcomm::allgatherv(send_.data(), send_.size(), recv_.data(), counts_, comm_,
                                       libcomm::allgather_algo_from_name(parse_timed(algo).algo), o);
    return ran(c, libcomm::allgather_algo_name(c));
  }

  std::string note(const std::string& algo, std::size_t) const override {
    return choice_note(algo, largest(counts_), libcomm::allgather_algo_from_name,
                       [this](libcomm::AllgatherAlgo a, std::size_t b) { return libcomm::choose_allgather(a, b, comm_, opts_); });
  }

  long long check(const std::string& algo) override {
    if (reference_.empty() && !recv_.empty()) {  // what native delivers: the reference every run is compared with
      reference_.assign(recv_.size(), std::byte{0x5A});
      libcomm::allgatherv(send_.data(), send_.size(), reference_.data(), counts_, comm_, AllgatherAlgo::Native,
                          opts_);
    }
    long long bad = 0;
    for (int src = 0; src < comm_.size(); ++src) {
      const auto us = static_cast<std::size_t>(src);
      const std::size_t at = apps::check_pattern(recv_.data() + displ_[us], src, 0, counts_[us]);
      const bool same = counts_[us] == 0 ||
                        std::memcmp(recv_.data() + displ_[us], reference_.data() + displ_[us], counts_[us]) == 0;
      if (at != counts_[us] || !same) {
        if (bad == 0)
          std::cerr << "commbench: rank " << comm_.rank() << ": allgather " << algo << " block of rank " << src
                    << " (" << counts_[us] << " B) "
                    << (at != counts_[us] ? "differs at byte " + std::to_string(at) : "differs from native")
                    << "\n";
        ++bad;
      }
    }
    return bad;
  }

 private:
  const libcomm::Comm& comm_;
  libcomm::AllgatherOptions opts_;
  std::vector<std::size_t> counts_, displ_;
  std::vector<std::byte> send_, recv_, reference_;
};

const Registrar registrar(
    "allgather",
    {"all-to-all broadcast (allgather / allgatherv): every rank contributes one block, every rank "
     "gets all (paper 004)",
     [](CLI::App& app) {
       app.add_option("--order", cube_options().order,
                      "allgather, reduce_scatter: node order of the ring, binary or gray (Gray-code "
                      "path, P a power of two; paper 004 s. 4.1)")
           ->check(CLI::IsMember({"binary", "gray"}))
           ->capture_default_str();
       app.add_option("--reorder", g_reorder,
                      "allgather: ring and d_cycles place each block directly (direct) or receive in "
                      "arrival order and reorder locally afterwards (staged)")
           ->check(CLI::IsMember({"direct", "staged"}))
           ->capture_default_str();
       app.add_option("--block-layout", cube_options().block_layout,
                      "allgather, reduce_scatter: equal blocks, or unequal = the CM-200 consecutive "
                      "allocation of P x block (paper 004 s. 4.2.4: some ranks get none)")
           ->check(CLI::IsMember({"equal", "unequal"}))
           ->capture_default_str();
     },
     make_operation<AllgatherOp>});

}  // namespace
}  // namespace commbench
