// An operation's algorithms as data (AlgoInfo), and what a call runs and why (Choice).
// The choose_* functions return a Choice, and so does every blocking call of the four
// operations (alltoall, alltoallv, allgather(v), reduce_scatter), so an application or the
// drop-in library can log why a call took its route without asking again.
#pragma once

#include <string>
#include <string_view>

namespace libcomm {

// One row of an operation's algorithm table (alltoall_algorithms(), ...).
template <class Algo>
struct AlgoInfo {
  Algo algo;
  std::string_view name;     // command-line / environment name
  std::string_view summary;  // one line for --help and docs
  std::string_view paper = {};  // the paper and section it implements ("" for native and auto)
};

// The one copy of a reason text, kept for the life of the process (reasons come from a
// bounded set: the rules, the tuning-table rows and the fallbacks, each naming P), so that
// a Choice is two words and copying one, on every call, touches no reference count.
const std::string* intern_reason(std::string_view text);

template <class Algo>
class Choice {
 public:
  Algo algo = Algo::Native;

  Choice() = default;
  Choice(Algo a, std::string_view reason) : algo(a), reason_(intern_reason(reason)) {}
  Choice(Algo a, const std::string* interned) : algo(a), reason_(interned) {}
  // The request ran as asked: reason "requested".
  static Choice requested(Algo a) {
    static const std::string* const text = intern_reason("requested");
    return Choice(a, text);
  }

  // Why: "requested", the rule or tuning-table row Auto used, or the fallback taken.
  const std::string& reason() const {
    static const std::string none;
    return reason_ ? *reason_ : none;
  }
  // The interned text (what the Comm's decision memo keeps).
  const std::string* interned_reason() const { return reason_; }
  // Appends to the reason (a note on why a rule or table row did not apply).
  Choice& note(std::string_view more) {
    reason_ = intern_reason(reason() + std::string(more));
    return *this;
  }
  // A choice reads as the algorithm it names: `if (libcomm::alltoall(...) == ...)`.
  operator Algo() const { return algo; }

  // Auto's online policy has not decided yet for this call's size class: the call ran the
  // MPI library's collective before measuring, or one of the candidates being measured.
  // Benchmarks time Auto once its calls no longer say so (its warm-up).
  bool measuring() const { return measuring_; }
  Choice& set_measuring() {
    measuring_ = true;
    return *this;
  }

 private:
  const std::string* reason_ = nullptr;
  bool measuring_ = false;
};

}  // namespace libcomm
