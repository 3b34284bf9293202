#include "apps/options.hpp"

#include "apps/common.hpp"
#include "libcomm/auto_policy.hpp"
#include "libcomm/error.hpp"

namespace apps {

void add_run_options(CLI::App& app, RunOptions& o, unsigned which, const std::string& algo_help,
                     const std::string& reps_help) {
  if (which & kAlgoOption) app.add_option("--algo", o.algo, algo_help)->capture_default_str();
  if (which & kAutoOption)
    app.add_option("--auto", o.auto_policy,
                   "how auto chooses: online (time the candidates on the first calls), model (cost formulas), "
                   "table (the tuning table); default: LIBCOMM_AUTO, else the library's");
  if (which & kNodesOption)
    app.add_option("--nodes", o.nodes,
                   "node map for hierarchical algorithms: shared | flat | ppn=N | sizes=A,B,.. | "
                   "map=N0,N1,.. | file:PATH")
        ->capture_default_str();
  if (which & kRepsOption) app.add_option("--reps", o.reps, reps_help)->check(CLI::Range(1, 100000))->capture_default_str();
  if (which & kWarmupOption)
    app.add_option("--warmup", o.warmup,
                   "untimed runs first (the first run is validated and checks the collectives' arguments); 0 "
                   "times that first run too, without the argument check")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
  if (which & kJsonOption) app.add_option("--json", o.json, "also write the results as JSON to this file")->check(kWritableFile);
  if (which & kFlopModelOption) add_flop_model_option(app, o.model_flops);
}

void apply_run_options(const CLI::App& app, const RunOptions& o) {
  if (app.count("--auto") > 0) {
    try {
      libcomm::set_auto_policy(libcomm::auto_policy_from_name(o.auto_policy));
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--auto: ") + e.what());
    }
  }
  apply_flop_model(o.model_flops);
}

}  // namespace apps
