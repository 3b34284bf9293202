#include "apps/common.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <filesystem>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "libcomm/settings.hpp"
#include "libcomm/sim.hpp"
#include "libcomm/error.hpp"

namespace apps {

std::size_t parse_size(const std::string& text, const std::string& option) {
  auto bad = [&] {
    return libcomm::Error(option + ": '" + text +
                          "' is not a size (use e.g. 0, 4096, 64K, 64KiB, 1M, 2GiB)");
  };
  std::size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0 || pos > 19) throw bad();
  const unsigned long long n = std::stoull(text.substr(0, pos));
  std::string unit = text.substr(pos);
  std::transform(unit.begin(), unit.end(), unit.begin(), ::toupper);
  unsigned shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB") shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB") shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB") shift = 30;
  else throw bad();
  if (shift && n > (~0ULL >> shift)) throw bad();
  return static_cast<std::size_t>(n << shift);
}

std::string format_size(std::size_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  std::ostringstream os;
  if (v == static_cast<double>(static_cast<long long>(v)))
    os << static_cast<long long>(v) << " " << units[u];
  else
    os.precision(3), os << v << " " << units[u];
  return os.str();
}

bool is_root() {
  int initialized = 0, rank = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

void parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0 && is_root()) app.exit(e);  // --help
    throw;
  }
}

const CLI::Validator kWritableFile(
    [](std::string& path) -> std::string {
      const bool existed = std::filesystem::exists(path);
      std::ofstream out(path, std::ios::app);
      if (!out) return "cannot write '" + path + "'";
      out.close();
      if (!existed) std::filesystem::remove(path);
      return {};
    },
    "FILE (writable)");

const CLI::Validator kNonEmpty(
    [](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; }, "TEXT (not empty)");

namespace {
CLI::Validator number_validator(double low, double high, bool low_open) {
  const std::string range = (low_open ? "(" : "[") + CLI::detail::to_string(low) + " - " +
                            CLI::detail::to_string(high) + "]";
  return CLI::Validator(
      [low, high, low_open, range](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (used != text.size()) return "'" + text + "' is not a number";
        if (!std::isfinite(v) || v > high || v < low || (low_open && v == low))
          return "'" + text + "' is not in " + range;
        return {};
      },
      "NUMBER in " + range);
}
}  // namespace

CLI::Validator number_in(double low, double high) { return number_validator(low, high, false); }
CLI::Validator positive_number(double high) { return number_validator(0, high, true); }
CLI::Validator seed_number() { return number_in(0, 4294967295.0); }

void add_flop_model_option(CLI::App& app, double& gflops) {
  app.add_option("--model-flops", gflops,
                 "SimGrid build without --host-speed: charge the local computation its nominal flops, and "
                 "each reduction combine one flop per element, at this many GFlop/s (deterministic simulated "
                 "time; default 0: measured CPU time)")
      ->check(positive_number(1e9));
}

void apply_flop_model(double gflops) {
  if (gflops <= 0) return;
  libcomm::sim::require_cost_model_applies("--model-flops");
  libcomm::sim::set_flop_rate(gflops * 1e9);
}

libcomm::Comm world_comm(const std::string& nodes_spec) {
  libcomm::require(!nodes_spec.empty(), "--nodes: must not be empty (e.g. shared, flat, ppn=4)");
  try {
    return libcomm::Comm(MPI_COMM_WORLD, nodes_spec);
  } catch (const libcomm::SettingsDiffer&) {
    throw;  // (the environment's fault, not --nodes')
  } catch (const libcomm::Error& e) {
    throw libcomm::Error("--nodes: " + std::string(e.what()));
  }
}

namespace {

// LIBCOMM_TIMEOUT in seconds as the library reads it; 0 when unset or malformed (the
// library reports a malformed value itself).
double timeout_seconds() {
  try {
    return libcomm::setting_number(libcomm::Setting::Timeout);
  } catch (const libcomm::Error&) {
    return 0;
  }
}

// After an error, with LIBCOMM_TIMEOUT set: waits that long for every rank to get here
// (every rank that met the same error does). A rank that does not is stuck in a collective
// with a peer that stopped or died, and MPI_Finalize would wait for it for ever, so the
// job ends with MPI_Abort(code) instead.
void finish_or_abort(const char* program, int code) {
  const double seconds = timeout_seconds();
  if (seconds <= 0) return;
  MPI_Request all_here = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &all_here);
  int done = 0;
  for (const double t0 = MPI_Wtime(); !done && MPI_Wtime() - t0 <= seconds;)
    MPI_Test(&all_here, &done, MPI_STATUS_IGNORE);
  if (done) return;
  std::fprintf(stderr, "%s: ending the job: the other ranks did not stop within LIBCOMM_TIMEOUT (%g s)\n",
               program, seconds);
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace

int mpi_main(int argc, char** argv, const char* program,
             const std::function<int(int, char**)>& body) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 0;
  try {
    code = body(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports --help as a "parse error" with exit code 0.
    if (rank == 0) {
      if (e.get_exit_code() == 0)
        std::fflush(stdout);
      else
        std::fprintf(stderr, "%s: error: %s (see --help)\n", program, e.what());
    }
    code = e.get_exit_code() == 0 ? 0 : 2;
  } catch (const libcomm::Error& e) {
    const std::string msg = e.what();
    // Every rank holds an error; print rank 0's and those that describe a rank's own fault.
    if (rank == 0 || msg.find("see its message") == std::string::npos)
      std::fprintf(stderr, "%s: error: %s\n", program, msg.c_str());
    code = 2;
    std::fflush(stderr);
    finish_or_abort(program, code);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error on rank %d: %s\n", program, rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Finalize();
  return code;
}

int serial_main(int argc, char** argv, const char* program, const std::function<int(int, char**)>& body) {
  try {
    return body(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return 0;  // --help, printed by parse_command_line
    std::fprintf(stderr, "%s: error: %s (see --help)\n", program, e.what());
  } catch (const std::exception& e) {  // libcomm::Error and what the standard library throws
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
  }
  return 2;
}

void fill_pattern(std::byte* block, int src, int dst, std::size_t bytes) {
  const std::size_t words = bytes / 8;
  for (std::size_t j = 0; j < words; ++j) {
    const std::uint64_t w = pattern_word(src, dst, j);
    std::memcpy(block + 8 * j, &w, 8);
  }
  // No memcpy of 0 bytes: an empty block may be a null pointer, which memcpy must never
  // get (UBSan found this through an empty std::vector's data()).
  if (bytes % 8 == 0) return;
  const std::uint64_t w = pattern_word(src, dst, words);
  std::memcpy(block + 8 * words, &w, bytes % 8);
}

std::size_t check_pattern(const std::byte* block, int src, int dst, std::size_t bytes) {
  const std::size_t words = bytes / 8;
  for (std::size_t j = 0; j < words; ++j) {
    std::uint64_t w;
    std::memcpy(&w, block + 8 * j, 8);
    if (w != pattern_word(src, dst, j)) {
      const std::uint64_t want = pattern_word(src, dst, j);
      std::size_t k = 0;
      while (k < 8 && std::memcmp(reinterpret_cast<const char*>(&w) + k,
                                  reinterpret_cast<const char*>(&want) + k, 1) == 0)
        ++k;
      return 8 * j + k;
    }
  }
  const std::uint64_t want = pattern_word(src, dst, words);
  for (std::size_t k = 0; k < bytes % 8; ++k)
    if (std::memcmp(block + 8 * words + k, reinterpret_cast<const char*>(&want) + k, 1) != 0)
      return 8 * words + k;
  return bytes;
}


}  // namespace apps
