// Side-by-side timing of the synchronisation plan (paper 003, section 5): on one thread,
// on two (the sweep cut into two chunks; the reduction shared out), and the reference
// implementation (sync_plan_reference.hpp), on the same trees in one run, medians of
// repeats. Checks that all of them give the same plan. Times are wall-clock seconds, so
// run it on an idle machine. Not a test:
//
//   bench_sync_plan [MACHINES [REPEATS [MAX_REFERENCE_MACHINES]]]
//
// The reference is skipped above MAX_REFERENCE_MACHINES (default 1024: it takes minutes at
// 4096, and 82 s for the plan alone on 4 switches before the spread sweep of step 2).
//
// A second table times verify_contention_free both ways (walking every path, and the
// vertical segments of contention_check.cpp) on the same schedules.
#include <algorithm>
#include <chrono>
#include <cmath>
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
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
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
    Topology tree;
  };
  int fan = static_cast<int>(std::sqrt(static_cast<double>(machines)));
  while (machines % fan != 0) --fan;  // the two-level regular tree: fan switches of machines / fan
  std::vector<Shape> shapes;
  shapes.push_back({"flat (1 switch)", Topology::regular({machines})});
  if (fan > 1)
    shapes.push_back({"two-level regular (" + std::to_string(fan) + " x " + std::to_string(machines / fan) + ")",
                      Topology::regular({fan, machines / fan})});
  shapes.push_back({"random bushy (" + std::to_string(machines / 64 + 1) + " switches)",
                    Topology::random(machines, machines / 64 + 1, 1, 0.0)});
  shapes.push_back({"random deep (" + std::to_string(std::max(1, machines / 8)) + " switches, chain 0.9)",
                    Topology::random(machines, std::max(1, machines / 8), 1, 0.9)});
  shapes.push_back({"random, 4 switches", Topology::random(machines, 4, 1, 0.0)});
  std::cout << "synchronisation plan, " << machines << " machines, median of " << repeats
            << " runs (wall-clock seconds)\n"
            << std::left << std::setw(40) << "tree" << std::right << std::setw(10) << "schedule"
            << std::setw(11) << "1 thread" << std::setw(11) << "2 threads" << std::setw(11) << "reference"
            << std::setw(12) << "syncs" << "  same\n";
  bool all_same = true;
  std::ostringstream checks;
  checks << "\ncontention check (verify_contention_free, phases() included), median of " << repeats
         << " runs (wall-clock seconds)\n"
         << std::left << std::setw(40) << "tree" << std::right << std::setw(14) << "walk paths"
         << std::setw(10) << "segments" << std::setw(10) << "ratio" << "  both pass\n";
  auto same_plan = [](const SyncPlan& a, const SyncPlan& b) {
    return a.syncs == b.syncs && a.redundant == b.redundant && a.contending_pairs == b.contending_pairs &&
           a.consecutive_pairs == b.consecutive_pairs && a.same_sender_pairs == b.same_sender_pairs &&
           a.synchronisations == (b.syncs.empty() ? b.synchronisations : static_cast<std::int64_t>(b.syncs.size()));
  };
  for (const auto& sh : shapes) {
    const Topology& t = sh.tree;
    TreeAapcSchedule s;
    const double t_schedule = median_seconds(repeats, [&] { s = schedule_tree_aapc(t); });
    bool walk_ok = false, segments_ok = false;
    const double t_walk = median_seconds(
        repeats, [&] { walk_ok = verify_contention_free(s, t, ContentionCheck::WalkPaths).ok; });
    const double t_segments = median_seconds(
        repeats, [&] { segments_ok = verify_contention_free(s, t, ContentionCheck::Segments).ok; });
    all_same &= walk_ok && segments_ok;
    checks << std::left << std::setw(40) << sh.name << std::right << std::fixed << std::setprecision(3)
           << std::setw(14) << t_walk << std::setw(10) << t_segments << std::setw(9) << std::setprecision(1)
           << t_walk / t_segments << "x  " << (walk_ok && segments_ok ? "yes" : "NO") << "\n";
    SyncPlan one, two;
    SyncPlanOptions o;
    // The synchronisations themselves only where the reference runs (schedgen keeps only the
    // counts unless it writes a routine; at 4096 machines they are 250-300 MB).
    o.keep_syncs = machines <= max_reference;
    const double t_one = median_seconds(repeats, [&] { one = plan_synchronisation(s, t, o); });
    o.threads = 2;
    const double t_two = median_seconds(repeats, [&] { two = plan_synchronisation(s, t, o); });
    bool same = same_plan(two, one);
    std::cout << std::left << std::setw(40) << sh.name << std::right << std::fixed << std::setprecision(3)
              << std::setw(10) << t_schedule << std::setw(11) << t_one << std::setw(11) << t_two;
    if (machines <= max_reference) {
      const Schedule rs = tree_rank_schedule(s, t);
      SyncPlan ref;
      const double t_ref = median_seconds(repeats, [&] { ref = reference_plan_synchronisation(rs, t); });
      same &= same_plan(one, ref);
      std::cout << std::setw(11) << t_ref;
    } else {
      std::cout << std::setw(11) << "-";
    }
    all_same &= same;
    std::cout << std::setw(12) << one.synchronisations << "  " << (same ? "yes" : "NO") << "\n";
  }
  std::cout << checks.str();
  return all_same ? 0 : 1;
}
