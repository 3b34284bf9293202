// Side-by-side timing of the synchronisation plan (paper 003, section 5): the reference
// implementation (sync_plan_reference.hpp) against plan_synchronisation, on the same trees
// in one run, medians of repeats. Also checks that both give the same plan. Times are
// process CPU seconds (std::clock): the machine this was written on is shared and
// oversubscribed, so wall-clock times there mostly measure waiting. Not a test:
//
//   bench_sync_plan [MACHINES [REPEATS [MAX_REFERENCE_MACHINES]]]
//
// The reference is skipped above MAX_REFERENCE_MACHINES (default 1024: it takes a minute at
// 4096).
//
// A second table times verify_contention_free both ways (walking every path, and the
// vertical segments of contention_check.cpp) on the same schedules.
#include <algorithm>
#include <ctime>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "sync_plan_reference.hpp"

namespace {

template <class F>
double median_seconds(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const std::clock_t t0 = std::clock();
    f();
    t.push_back(static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace libcomm;
  const int machines = argc > 1 ? std::atoi(argv[1]) : 512;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const int max_reference = argc > 3 ? std::atoi(argv[3]) : 1024;
  if (machines < 3 || repeats < 1) {
    std::cerr << "usage: bench_sync_plan [MACHINES>=3 [REPEATS>=1 [MAX_REFERENCE_MACHINES]]]\n";
    return 2;
  }
  struct Shape {
    std::string name;
    int switches;
    double chain;
  };
  const std::vector<Shape> shapes = {{"flat (1 switch)", 1, 0.0},
                                     {"two-level (" + std::to_string(machines / 64 + 1) + " switches)",
                                      machines / 64 + 1, 0.0},
                                     {"deep (" + std::to_string(machines / 8) + " switches, chain 0.9)",
                                      std::max(1, machines / 8), 0.9}};
  std::cout << "synchronisation plan, " << machines << " machines, median of " << repeats
            << " runs (CPU seconds)\n"
            << std::left << std::setw(36) << "tree" << std::right << std::setw(10) << "schedule"
            << std::setw(12) << "plan" << std::setw(12) << "reference" << std::setw(10) << "ratio"
            << std::setw(12) << "syncs" << "  same\n";
  bool all_same = true;
  std::ostringstream checks;
  checks << "\ncontention check (verify_contention_free, phases() included), median of " << repeats
         << " runs (CPU seconds)\n"
         << std::left << std::setw(36) << "tree" << std::right << std::setw(14) << "walk paths"
         << std::setw(10) << "segments" << std::setw(10) << "ratio" << "  both pass\n";
  for (const auto& sh : shapes) {
    const Topology t = Topology::random(machines, sh.switches, 1, sh.chain);
    TreeAapcSchedule s;
    const double t_schedule = median_seconds(repeats, [&] { s = schedule_tree_aapc(t); });
    bool walk_ok = false, segments_ok = false;
    const double t_walk = median_seconds(
        repeats, [&] { walk_ok = verify_contention_free(s, t, ContentionCheck::WalkPaths).ok; });
    const double t_segments = median_seconds(
        repeats, [&] { segments_ok = verify_contention_free(s, t, ContentionCheck::Segments).ok; });
    all_same &= walk_ok && segments_ok;
    checks << std::left << std::setw(36) << sh.name << std::right << std::fixed << std::setprecision(3)
           << std::setw(14) << t_walk << std::setw(10) << t_segments << std::setw(9) << std::setprecision(1)
           << t_walk / t_segments << "x  " << (walk_ok && segments_ok ? "yes" : "NO") << "\n";
    SyncPlan fast;
    const double t_plan = median_seconds(repeats, [&] { fast = plan_synchronisation(s, t); });
    std::cout << std::left << std::setw(36) << sh.name << std::right << std::fixed << std::setprecision(3)
              << std::setw(10) << t_schedule << std::setw(12) << t_plan;
    if (machines <= max_reference) {
      const Schedule rs = tree_rank_schedule(s, t);
      SyncPlan ref;
      const double t_ref = median_seconds(repeats, [&] { ref = reference_plan_synchronisation(rs, t); });
      const bool same = ref.syncs == fast.syncs && ref.redundant == fast.redundant &&
                        ref.contending_pairs == fast.contending_pairs &&
                        ref.consecutive_pairs == fast.consecutive_pairs &&
                        ref.same_sender_pairs == fast.same_sender_pairs;
      all_same &= same;
      std::cout << std::setw(12) << t_ref << std::setw(9) << std::setprecision(1) << t_ref / t_plan << "x"
                << std::setw(12) << fast.syncs.size() << "  " << (same ? "yes" : "NO") << "\n";
    } else {
      std::cout << std::setw(12) << "-" << std::setw(10) << "-" << std::setw(12) << fast.syncs.size()
                << "  -\n";
    }
  }
  std::cout << checks.str();
  return all_same ? 0 : 1;
}
