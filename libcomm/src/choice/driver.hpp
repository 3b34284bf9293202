// The one operation driver (docs/architecture.md, "One operation driver"): what every
// collective does around its algorithm, in every form (blocking, non-blocking, persistent;
// the drop-in library calls these too), written once:
//   argument check (collective, Options::check_args) and check mode -> the environment's
//   algorithm (LIBCOMM_<OP>) when the call asks for Auto -> applicability and fallback
//   (the descriptors' rules) -> Auto's choice under the policy (model, table or online,
//   libcomm/auto_policy.hpp), remembered on the Comm -> the kept plan -> the run -> the
//   Choice (what ran and why).
// An operation plugs in as an Operation (below; algorithm.hpp); its algorithms as descriptors.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <concepts>
#include <cmath>
#include <optional>
#include <string>
#include <mutex>
#include <thread>
#include <utility>

#include "policy.hpp"
#include "../runtime/check.hpp"
#include "../runtime/comm_cache.hpp"
#include "../runtime/plan_state.hpp"
#include "../algorithm/algorithm.hpp"
#include "libcomm/auto_policy.hpp"
#include "libcomm/check.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/settings.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm::detail {

// LIBCOMM_TEST_SLOW=op:algo:seconds[:rank][,...] (tests only): every run of that algorithm
// of that operation (on that rank, or on every rank) first waits `seconds`, so a test can
// make one algorithm slow and see what Auto does. Read once.
double test_slowdown(std::string_view op, std::string_view algo, int rank);
// The same switch from a test program (replaces the environment's list).
void set_test_slowdown(const std::string& spec);

// Online sites kept per Comm (then they start over, every rank alike).
constexpr std::size_t kMaxOnlineSites = 256;

// What an operation must supply (algorithm.hpp describes each member); what only some
// operations have is in OpHooks, whose members are named, so a misspelt hook is an error too.
template <class Op>
concept Operation =
    std::derived_from<typename Op::Shape, ShapeBase> &&
    requires(const typename Op::Args& a, typename Op::Shape& s, const Comm& comm, typename Op::Algo algo,
             const typename Op::Options& o, bool have_buffers, std::uint64_t bytes) {
      typename Op::Extra;
      { Op::name } -> std::convertible_to<std::string_view>;
      { Op::what } -> std::convertible_to<std::string_view>;
      { Op::setting } -> std::convertible_to<Setting>;
      { Op::algorithms() } -> std::same_as<std::span<const Algorithm<Op>>>;
      { Op::shape(a, comm, o) } -> std::same_as<typename Op::Shape>;
      { Op::options(s) } -> std::same_as<std::uint64_t>;
      { Op::argument_check(a, s, comm, algo, o, have_buffers) } -> std::same_as<ArgumentCheck>;
      { Op::sizes_differ(a, bytes, bytes) } -> std::convertible_to<std::string>;
      { Op::modes_differ(algo, o) } -> std::convertible_to<std::string>;
      Op::check_agreement(a, comm, o);
      { a.send } -> std::convertible_to<const void*>;
      { a.recv } -> std::convertible_to<void*>;
      { s.opts } -> std::convertible_to<const typename Op::Options*>;
    };

template <Operation Op>
class Driver {
 public:
  using Algo = typename Op::Algo;
  using Options = typename Op::Options;
  using Args = typename Op::Args;
  using Shape = typename Op::Shape;
  using OpChoice = Choice<Algo>;
  static constexpr const OpHooks<Op>& hooks = hooks_of<Op>;

  // ---- the three forms -----------------------------------------------------------------

  static OpChoice blocking(const Args& a, const Comm& comm, Algo requested, const Options& o) {
    auto [s, asked] = checked(a, comm, requested, o, true);
    if (asked == Algo::Auto) return auto_blocking(a, s, comm);
    const OpChoice c = resolve_requested(asked, s, o.allow_fallback);
    execute(c, a, s, comm);
    return c;
  }

  static Request nonblocking(const Args& a, const Comm& comm, Algo requested, const Options& o) {
    // No collective argument check: it would block (MPI's non-blocking collectives do not
    // check either); check mode still compares what it can.
    if (check_mode()) Op::check_agreement(a, comm, o);
    const Shape s = Op::shape(a, comm, o);
    validate(s, comm);
    const Algo asked = with_environment(requested);
    const OpChoice c = for_request(asked != Algo::Auto ? resolve_requested(asked, s, o.allow_fallback)
                                                       : auto_without_measuring(s, comm, false),
                                   asked, o.allow_fallback);
    PlanKey key = plan_key(c.algo, s);
    key.options = key.options * 64 + static_cast<std::uint64_t>(asked);  // the kept plan's reason is this request's
    Plan plan(request_plan(comm, key, s.sizes, [&] { return make_plan(c, s, comm, Form::Nonblocking); }));
    plan.start(a.send, a.recv);
    return plan;
  }

  // Collective like MPI_<op>_init: the argument check (sizes, algorithm) runs here, without
  // buffers; the plan is built once.
  static Plan persistent(const Args& a, const Comm& comm, Algo requested, const Options& o) {
    auto [s, asked] = checked(a, comm, requested, o, false);
    const OpChoice c =
        asked != Algo::Auto ? resolve_requested(asked, s, o.allow_fallback) : auto_without_measuring(s, comm, true);
    return Plan(make_plan(c, s, comm, Form::Persistent));
  }

  // What a call would run, without running it (choose_<op>): the requested algorithm or its
  // fallback; for Auto the remembered or settled decision, else the model's or table's.
  static OpChoice choose(Algo requested, Shape s, const Comm& comm) {
    if (requested != Algo::Auto) return resolve_requested(requested, s, s.opts->allow_fallback);
    return auto_without_measuring(s, comm, false);
  }

  // ---- the pieces ----------------------------------------------------------------------

  // What a requested algorithm runs on `s`: itself, or its documented fallback (the
  // descriptor's rule); an Error when it cannot run and no fallback is allowed.
  static OpChoice resolve_requested(Algo requested, const Shape& s, bool allow_fallback) {
    Algo a = requested;
    std::string why;
    for (int hop = 0; hop < 4; ++hop) {
      const auto& e = entry_of<Op>(a);
      const std::string unfit = e.unfit != nullptr ? e.unfit(s) : std::string();
      if (unfit.empty()) return why.empty() ? OpChoice::requested(a) : OpChoice(a, why);
      const std::string what = std::string(Op::name) + ": " + std::string(e.name) + " " + unfit;
      if (e.fallback == Algo::Auto) throw Error(what);
      if (!allow_fallback) throw Error(what + " (fallback disabled)");
      why += (why.empty() ? "" : "; ") + std::string(e.name) + " " + unfit + ": ran " +
             std::string(name_of<Op>(e.fallback)) + " instead";
      a = e.fallback;
    }
    throw Error(std::string(Op::name) + ": internal error: the fallbacks of " +
                std::string(name_of<Op>(requested)) + " do not end");
  }

  // Auto gives way to the operation's variable (Op::setting, libcomm/settings.hpp), parsed
  // once per reading of the settings; a bad name fails every Auto call of the operation.
  static Algo with_environment(Algo requested) {
    if (requested != Algo::Auto) return requested;
    struct Parsed {
      unsigned long generation = 0;
      Algo algo = Algo::Auto;
      std::string error;
    };
    static std::atomic<const Parsed*> cached{nullptr};  // (one per reading, never freed)
    const Parsed* p = cached.load(std::memory_order_acquire);
    if (p == nullptr || p->generation != settings_generation()) {
      auto* fresh = new Parsed{settings_generation(), Algo::Auto, {}};
      static auto* every = new std::vector<const Parsed*>;  // (kept reachable: a reader may hold one)
      {
        static std::mutex m;
        std::lock_guard lock(m);
        every->push_back(fresh);
      }
      try {
        fresh->algo = algorithm_named<Op>(setting_text(Op::setting));
      } catch (const Error& e) {
        fresh->error = std::string(setting_info(Op::setting).name) + ": " + e.what();
      }
      cached.store(fresh, std::memory_order_release);
      p = fresh;
    }
    if (!p->error.empty()) throw Error(p->error);
    return p->algo;
  }

  // Auto where only a step program will do (the <op>_program functions, no MPI): the
  // model's cheapest but the MPI library's collective.
  static OpChoice program_choice(const Shape& s) {
    AutoQuestion q = question(s, nullptr);
    std::erase_if(q.candidates, [&](const Candidate& c) { return c.algo == q.native; });
    return from_answer(model_answer(q));
  }

  // The step program of `algo` (Auto: program_choice) for `rank`; an Error for an algorithm
  // without one.
  static StepProgram program_for(Algo algo, const Shape& s, int rank, bool allow_fallback) {
    const Algo run = algo == Algo::Auto ? program_choice(s).algo : resolve_requested(algo, s, allow_fallback).algo;
    return step_program(run, s, rank);
  }

  // A choice without a Comm (choose_<op> for P ranks): the requested algorithm or its
  // fallback, else the model's cheapest on the shape alone.
  static OpChoice choice_without_comm(Algo requested, const Shape& s, bool allow_fallback) {
    if (requested != Algo::Auto) return resolve_requested(requested, s, allow_fallback);
    return from_answer(model_answer(question(s, nullptr)));
  }

  // The question the policies answer: the applicable algorithms with their predictions.
  // `comm` may be null (a decision without a Comm: the model on the shape alone).
  static AutoQuestion question(const Shape& s, const Comm* comm) {
    AutoQuestion q{Op::name, comm, s.decision_bytes, s.spread, s.topology, {}, static_cast<int>(Algo::Native)};
    const CostParams& params = active_cost_params();
    for (const auto& e : Op::algorithms()) {
      if (e.cost == nullptr || (e.unfit != nullptr && !e.unfit(s).empty())) continue;
      const double t = e.cost(s, params);
      if (std::isfinite(t)) q.candidates.push_back({static_cast<int>(e.algo), e.name, t, e.node_memory});
    }
    return q;
  }

  // The plan of a choice: the descriptor's own, or the executor's run of its step program.
  static std::shared_ptr<PlanState> make_plan(const OpChoice& c, const Shape& s, const Comm& comm, Form form) {
    const auto& e = entry_of<Op>(c.algo);
    if (e.plan != nullptr) return e.plan({c, s, comm, form});
    return program_plan(comm, step_program(c.algo, s, comm.rank()), c.reason(), form != Form::Blocking);
  }

  // What a plan is kept under: the sizes (their hash when unequal) and the options.
  static PlanKey plan_key(Algo ran, const Shape& s) {
    return PlanKey{Op::name, static_cast<int>(ran), s.equal ? s.largest : hash_sizes(s.sizes),
                   Op::options(s) * 2 + s.plan_variant};
  }

 private:
  // Rank `rank`'s step program of `algo`; an Error for an algorithm without one.
  static StepProgram step_program(Algo algo, const Shape& s, int rank) {
    const auto& e = entry_of<Op>(algo);
    require(e.program != nullptr,
            [&] { return std::string(Op::name) + ": '" + std::string(e.name) + "' has no step program"; });
    return e.program(s, rank);
  }

  static void agree(Shape& s, const Comm& comm) {
    if (hooks.agree != nullptr) hooks.agree(s, comm);
  }
  // What the collective check would have reported (it reports it on every rank alike; a
  // call without the check fails on the rank alone, as an erroneous MPI call may).
  static void validate(const Shape& s, const Comm& comm) {
    if (!s.problem.empty()) throw Error(std::string(Op::name) + ": rank " + std::to_string(comm.rank()) + ": " + s.problem);
  }

  // What the blocking and persistent forms do first: check mode, the shape, the
  // environment's algorithm, the collective argument check (Options::check_args) and the
  // shape's own verdict.
  static std::pair<Shape, Algo> checked(const Args& a, const Comm& comm, Algo requested, const Options& o,
                                        bool have_buffers) {
    if (check_mode()) Op::check_agreement(a, comm, o);
    std::pair<Shape, Algo> out{Op::shape(a, comm, o), with_environment(requested)};
    if (o.check_args) check(a, out.first, comm, out.second, o, have_buffers);
    validate(out.first, comm);
    return out;
  }

  static void check(const Args& a, Shape& s, const Comm& comm, Algo algo, const Options& o, bool have_buffers) {
    ArgumentCheck c = Op::argument_check(a, s, comm, algo, o, have_buffers);
    c.op = Op::name;
    const std::uint64_t extra = check_arguments(
        comm, c, [&](std::uint64_t max, std::uint64_t min) { return Op::sizes_differ(a, max, min); },
        [&] { return Op::modes_differ(algo, o); });
    if (hooks.after_check != nullptr) hooks.after_check(s, extra);
  }

  // An operation decided per call site (alltoallv: no rank knows the others' sizes without
  // a collective) agrees on the site's size class at its first call and again every
  // kSiteRecheck calls, every rank at the same call (the calls are collective), so that a
  // site whose sizes change during the run decides anew for the new class. Returns the
  // class (-1 before the site's first blocking or persistent call); `may_agree`: the call
  // may make the collective (a non-blocking one uses the class last agreed).
  static constexpr std::uint64_t kSiteRecheck = 64;
  static int site_class(Shape& s, const Comm& comm, bool may_agree) {
    if (!hooks.per_site) return 0;
    auto& classes = comm.cache().site_classes;
    auto it = std::find_if(classes.begin(), classes.end(), [&](const auto& c) { return c.first == s.key_bytes; });
    if (it == classes.end()) {
      if (classes.size() >= kMaxOnlineSites) classes.clear();  // (every rank alike: the same calls)
      it = classes.insert(classes.end(), {s.key_bytes, CommCache::SiteClass{}});
    }
    CommCache::SiteClass& c = it->second;
    if (may_agree && c.calls++ % kSiteRecheck == 0) {
      agree(s, comm);
      c.size_class = size_class(s.decision_bytes);
      const auto none = hooks.nothing_to_exchange != nullptr ? hooks.nothing_to_exchange(s) : std::nullopt;
      c.nothing_algo = none ? static_cast<int>(none->algo) : -1;
      c.nothing_reason = none ? none->reason() : "";
    }
    return c.size_class;
  }

  // What the site's last agreement left to run when every rank agreed there was nothing to
  // exchange, for this call too: the agreement is the site's, shared by every key under it
  // (a blocking alltoallv's modes b, n1, n2 each have a decision of their own, and only the
  // first to run made the agreement). Nothing when the site has not agreed that.
  static std::optional<OpChoice> agreed_nothing(const Shape& s, const Comm& comm) {
    if (hooks.nothing_to_exchange == nullptr) return std::nullopt;
    if (const auto none = hooks.nothing_to_exchange(s)) return none;  // (this call's own agreement)
    if (!hooks.per_site) return std::nullopt;
    for (const auto& [site, c] : comm.cache().site_classes)
      if (site == s.key_bytes && c.nothing_algo >= 0) return OpChoice(static_cast<Algo>(c.nothing_algo), c.nothing_reason);
    return std::nullopt;
  }

  // What a decision is remembered under: online decides per size class.
  static DecisionKey decision_key(const Shape& s, AutoPolicy policy, int agreed_class) {
    const bool by_class = policy == AutoPolicy::Online && !hooks.per_site;
    return {Op::name, by_class ? size_class_last(size_class(s.key_bytes)) : s.key_bytes, 1.0,
            (Op::options(s) * 4 + static_cast<std::uint64_t>(policy)) * 128 + static_cast<std::uint64_t>(agreed_class + 1)};
  }

  static void remember(const Comm& comm, const DecisionKey& key, const OpChoice& c) {
    comm.remember_decision(key, tuning_table_epoch(), {static_cast<int>(c.algo), c.interned_reason()});
  }

  static OpChoice from_answer(const AutoAnswer& a) { return OpChoice(static_cast<Algo>(a.algo), a.reason); }

  // Model or table (the table's policy falls back to the model where it has no row).
  static OpChoice predicted(const AutoQuestion& q, AutoPolicy policy) {
    if (policy != AutoPolicy::Table) return from_answer(model_answer(q));
    std::string why_not;
    if (const auto t = table_answer(q, why_not)) return from_answer(*t);
    AutoAnswer m = model_answer(q);
    m.reason += " (" + why_not + ")";
    return from_answer(m);
  }

  // The online site of this decision, made on first use: settled at once when a table
  // learned earlier has a row for exactly this shape, else counting its calls until it
  // measures (its candidates are predicted then, in prepare: a size class called fewer
  // than online_after() times costs a lookup and nothing more).
  static OnlineSite& site(Shape& s, const Comm& comm, const DecisionKey& key) {
    for (auto& [k, site] : comm.cache().online_sites)
      if (k == key) return *site;
    auto made = std::make_shared<OnlineSite>(online_after());
    if (comm.size() == 1) {
      static const std::string* const alone =
          intern_reason("auto (online): native: one rank exchanges nothing, there is nothing to measure");
      made->settle(static_cast<int>(Algo::Native), *alone);
    } else if (active_tuning_table()) {
      agree(s, comm);  // (every rank alike: a table is loaded once, the same on every rank)
      if (const auto learned = exact_table_answer(question(s, &comm))) made->settle(learned->algo, learned->reason);
    }
    auto& sites = comm.cache().online_sites;
    if (sites.size() >= kMaxOnlineSites) sites.clear();  // (every rank alike: the same calls)
    sites.emplace_back(key, made);
    return *made;
  }

  static OpChoice decided(const OpChoice& c, const Args& a, const Shape& s, const Comm& comm) {
    execute(c, a, s, comm);
    return c;
  }

  static OpChoice auto_blocking(const Args& a, Shape& s, const Comm& comm) {
    const AutoPolicy policy = auto_policy();
    const int agreed_class = site_class(s, comm, true);
    const DecisionKey key = decision_key(s, policy, agreed_class);
    if (const auto hit = comm.remembered_decision(key, tuning_table_epoch()))
      return decided(OpChoice(static_cast<Algo>(hit->algo), hit->reason), a, s, comm);
    // Nothing to decide: what every rank has agreed leaves nothing to exchange.
    if (const auto none = agreed_nothing(s, comm)) {
      remember(comm, key, *none);
      return decided(*none, a, s, comm);
    }
    if (policy != AutoPolicy::Online) {
      agree(s, comm);  // statistics every rank shares (one collective per decision, alltoallv only)
      const OpChoice c = predicted(question(s, &comm), policy);
      remember(comm, key, c);
      return decided(c, a, s, comm);
    }
    OnlineSite& on = site(s, comm, key);
    if (!on.settled() && on.waiting()) {
      static const std::string* const waiting =
          intern_reason("auto (online): native for the first " + std::to_string(online_after()) +
                        " calls of a size class (LIBCOMM_ONLINE_AFTER), then the candidates are measured");
      return decided(OpChoice(Algo::Native, waiting), a, s, comm).set_measuring();
    }
    if (!on.settled() && !on.prepared()) {
      agree(s, comm);  // (once per site, every rank at the same call: the one collective of a decision)
      on.prepare(online_candidates(question(s, &comm), s.one_node_shared()), online_reps_for(s.decision_bytes),
                 static_cast<int>(Algo::Native));
    }
    if (!on.settled()) return measure(on, a, s, comm, key, agreed_class);
    const OpChoice c(static_cast<Algo>(on.winner()), on.reason());
    remember(comm, key, c);
    return decided(c, a, s, comm);
  }

  // One measuring call of the online policy: runs the next candidate, times it, and once
  // every candidate has its timings, agrees on the winner (one MPI_Allreduce).
  static OpChoice measure(OnlineSite& on, const Args& a, const Shape& s, const Comm& comm, const DecisionKey& key,
                          int agreed_class) {
    const Candidate next = on.next();
    OpChoice c(static_cast<Algo>(next.algo), "auto (online): measuring " + std::string(next.name) + ", one of " +
                                                 std::to_string(on.candidates().size()) + " candidates (" +
                                                 std::to_string(on.calls_needed()) + " calls in all)");
    // The candidates are timed from a common start (a barrier, during the warm-up only), so
    // that a rank that came late does not credit an algorithm with the time it did not wait;
    // which barrier, and why, in timing_barrier's comment.
    timing_barrier(comm);
    const double t0 = MPI_Wtime();
    execute(c, a, s, comm);
    if (on.record(MPI_Wtime() - t0)) {
      on.agree(comm.internal());
      // The candidates that lost give back their plans (windows, buffers) built at this
      // shape, and the barrier its own (rebuilt by the next site that measures); every
      // rank alike, in candidate order.
      for (const Candidate& lost : on.candidates())
        if (lost.algo != on.winner()) comm.drop_plan(plan_key(static_cast<Algo>(lost.algo), s));
      comm.drop_plan(kTimingBarrier);
      remember(comm, key, OpChoice(static_cast<Algo>(on.winner()), on.reason()));
      if (comm.rank() == 0) record_learned(learned_row(s, comm, on, agreed_class));
    }
    return c.set_measuring();
  }

  // The row of the size class the winner was measured at: an operation decided per site
  // learned it at the class its ranks last agreed on (the call that settles the winner is
  // a later one, whose own statistics are this rank's, not agreed).
  static LearnedRow learned_row(const Shape& s, const Comm& comm, const OnlineSite& on, int agreed_class) {
    const int k = hooks.per_site ? agreed_class : size_class(s.decision_bytes);
    return {std::string(Op::name), comm.size(), Layout::of(comm.nodes()).ppn, s.topology, size_class_first(k),
            size_class_last(k), std::string(name_of<Op>(static_cast<Algo>(on.winner()))), on.reason()};
  }

  // What a non-blocking call runs of `c`: an algorithm of the node's shared window runs
  // natively (docs/fallbacks.md). Making its plan is a blocking collective (the segment,
  // the node's sub-communicators), and a rank blocked there while its peer first completes
  // an earlier request, which needs this rank's progress, never returns. The request form
  // is the one form that must not block; blocking and persistent calls make such plans.
  static OpChoice for_request(const OpChoice& c, Algo asked, bool allow_fallback) {
    if (!entry_of<Op>(c.algo).node_memory) return c;
    const std::string what = std::string(Op::name) + ": " + std::string(name_of<Op>(c.algo)) +
                             " makes its shared-memory plan collectively, which a non-blocking call must not";
    if (asked != Algo::Auto && !allow_fallback) throw Error(what + " (fallback disabled)");
    return OpChoice(Algo::Native, what + ": ran native instead");
  }

  // Auto where it cannot measure (non-blocking and persistent calls, choose_<op>): a
  // decision remembered on the Comm or an online winner, else the model's (or table's)
  // prediction; online keeps measuring at the next blocking call. `collective`: the call
  // may agree on statistics first (persistent plans are made collectively).
  static OpChoice auto_without_measuring(Shape s, const Comm& comm, bool collective) {
    const AutoPolicy policy = auto_policy();
    const DecisionKey key = decision_key(s, policy, site_class(s, comm, collective));
    if (const auto hit = comm.remembered_decision(key, tuning_table_epoch()))
      return OpChoice(static_cast<Algo>(hit->algo), hit->reason);
    if (const auto none = agreed_nothing(s, comm)) return *none;
    if (policy == AutoPolicy::Online) {
      for (auto& [k, on] : comm.cache().online_sites)
        if (k == key && on->settled()) return OpChoice(static_cast<Algo>(on->winner()), on->reason());
      // Online runs the MPI library's own collective until it has measured (never slower
      // than MPI by default); the model and table policies predict.
      return OpChoice(Algo::Native, "auto (online): native until a blocking call of this size class has measured "
                                    "the candidates");
    }
    if (collective) agree(s, comm);
    if (const auto none = agreed_nothing(s, comm)) return *none;
    if (hooks.unmeasured_default != nullptr)
      if (const auto fixed = hooks.unmeasured_default(s)) return *fixed;
    return predicted(question(s, &comm), policy);
  }

  static void execute(const OpChoice& c, const Args& a, const Shape& s, const Comm& comm) {
    if (const double delay = test_slowdown(Op::name, name_of<Op>(c.algo), comm.rank()); delay > 0) {
      const double until = MPI_Wtime() + delay;
      while (MPI_Wtime() < until) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (hooks.on_run != nullptr) hooks.on_run(a, s, comm, c.algo);
    const auto& e = entry_of<Op>(c.algo);
    if (e.run != nullptr) return e.run(a, s, comm);
    if (s.skip_when_empty && s.total == 0) return;
    run_cached(comm, plan_key(c.algo, s), s.sizes, a.send, a.recv, [&] { return make_plan(c, s, comm, Form::Blocking); });
  }
};

}  // namespace libcomm::detail
