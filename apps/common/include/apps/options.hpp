// The options every timed app shares, added in one place so that they read and behave
// alike in every program (--help texts, checks, error lines).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace apps {

struct RunOptions {
  std::string algo;              // --algo: comma-separated names (the app's default)
  std::string nodes = "shared";  // --nodes: node map of the hierarchical algorithms
  int reps = 5;                  // --reps: timed repetitions (medians reported)
  int warmup = 1;                // --warmup: untimed (validated) runs first
  std::string json;              // --json: the results as JSON
  std::string auto_policy;       // --auto: how auto chooses ("": LIBCOMM_AUTO or the default)
  double model_flops = 0;        // --model-flops: charge the local work at this rate (SimGrid)

  // An app's own defaults of --algo and --reps.
  static RunOptions defaults(std::string algo_list, int repetitions = 5) {
    RunOptions o;
    o.algo = std::move(algo_list);
    o.reps = repetitions;
    return o;
  }
};

// Which of them an app takes (or-ed).
enum RunOption : unsigned {
  kAlgoOption = 1,
  kNodesOption = 2,
  kRepsOption = 4,
  kWarmupOption = 8,
  kJsonOption = 16,
  kAutoOption = 32,
  kFlopModelOption = 64,
};

// Adds the chosen options to app, their defaults the values `o` holds. algo_help and
// reps_help say what the names and a repetition are in this app.
void add_run_options(CLI::App& app, RunOptions& o, unsigned which, const std::string& algo_help,
                     const std::string& reps_help = "timed repetitions (median reported)");

// After parsing: sets the auto policy (when --auto was given) and the flop model
// (--model-flops); a bad value is an Error naming its option.
void apply_run_options(const CLI::App& app, const RunOptions& o);

}  // namespace apps
