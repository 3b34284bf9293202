// What an operation runs and why. The choose_* functions return one, and so does every
// blocking call of the four operations (alltoall, alltoallv, allgather(v), reduce_scatter),
// so an application or the drop-in library can log why a call took its route without
// asking again.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace libcomm {

template <class Algo>
class Choice {
 public:
  Algo algo = Algo::Native;

  Choice() = default;
  Choice(Algo a, std::string reason)
      : algo(a), reason_(std::make_shared<const std::string>(std::move(reason))) {}
  Choice(Algo a, std::shared_ptr<const std::string> reason) : algo(a), reason_(std::move(reason)) {}
  Choice(Algo a, const char* reason) : Choice(a, std::string(reason)) {}
  // The request ran as asked: reason "requested", shared, so the hot path allocates nothing.
  static Choice requested(Algo a) {
    static const std::string text = "requested";
    return Choice(a, std::shared_ptr<const std::string>(std::shared_ptr<void>(), &text));
  }

  // Why: "requested", the rule or tuning-table row Auto used, or the fallback taken.
  const std::string& reason() const {
    static const std::string none;
    return reason_ ? *reason_ : none;
  }
  // The same text, shared (what the Comm's decision memo keeps).
  const std::shared_ptr<const std::string>& shared_reason() const { return reason_; }
  // Appends to the reason (a note on why a rule or table row did not apply).
  Choice& note(std::string_view more) {
    reason_ = std::make_shared<const std::string>(reason() + std::string(more));
    return *this;
  }
  // A choice reads as the algorithm it names: `if (libcomm::alltoall(...) == ...)`.
  operator Algo() const { return algo; }

 private:
  std::shared_ptr<const std::string> reason_;
};

}  // namespace libcomm
