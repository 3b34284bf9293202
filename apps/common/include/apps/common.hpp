// Helpers shared by the mini-apps (docs/apps/template.md): size parsing, the MPI main
// wrapper that turns errors into one line and an exit code, option validators,
// deterministic test patterns; and, through the headers included at the end, the shared
// option block (options.hpp), list options (lists.hpp), seeded random numbers
// (random.hpp), timing (timing.hpp) and the report (report.hpp).
#pragma once

#include <mpi.h>

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "libcomm/comm.hpp"

namespace apps {

// "4096", "64K", "64KiB", "1M", "1MiB", "2G" -> bytes. Throws libcomm::Error naming
// `option` when the text is not a non-negative size.
std::size_t parse_size(const std::string& text, const std::string& option);
// 1536 -> "1.5 KiB"; exact powers print without decimals ("64 KiB").
std::string format_size(std::size_t bytes);

// Runs body(argc, argv) between MPI_Init and MPI_Finalize. A libcomm::Error or
// CLI parse error becomes "PROGRAM: error: MESSAGE" on stderr (rank 0, and any rank whose
// message is its own) and exit code 2; body's return value is the exit code otherwise.
// With LIBCOMM_TIMEOUT=T set, a rank with an Error waits at most T s for the others to
// stop too, then ends the job with MPI_Abort (a peer that stopped or died would keep
// MPI_Finalize waiting for ever).
int mpi_main(int argc, char** argv, const char* program,
             const std::function<int(int, char**)>& body);

// The same for a program that is not an MPI program (schedgen): no MPI_Init; an error is
// "PROGRAM: error: MESSAGE" and exit code 2.
int serial_main(int argc, char** argv, const char* program, const std::function<int(int, char**)>& body);

// True only on rank 0 of MPI_COMM_WORLD (or without MPI): who prints tables.
bool is_root();

// Parses the command line. --help prints the help on rank 0; any other parse error is
// rethrown for mpi_main to print as one line, "PROGRAM: error: --OPTION: what (see --help)".
void parse_command_line(CLI::App& app, int argc, char** argv);

// For --json and other output files: the file can be written (checked when the option is
// parsed, so that a long run does not fail at its end). Leaves no file behind.
extern const CLI::Validator kWritableFile;

// Validators the programs share. CLI11's own NonNegativeNumber and PositiveNumber let NaN
// through, and an integer option given a 23-digit number wraps instead of failing.
//  - kNonEmpty: free text that must not be empty ("--algo ''");
//  - number_in(low, high): a finite number in [low, high] (integer options too: their
//    type then refuses fractions);
//  - positive_number(high): a finite number in (0, high].
extern const CLI::Validator kNonEmpty;
CLI::Validator number_in(double low, double high);
CLI::Validator positive_number(double high = 1e300);
// A seed: an integer in [0, 2^32 - 1].
CLI::Validator seed_number();

// --model-flops GFLOPS (matvec, nbody): in a SimGrid build without --host-speed, charge
// the local kernels their nominal flops and the collectives' reduction combines one flop
// per element at this rate (libcomm::sim::set_flop_rate), so that the simulated time holds
// the computation deterministically. apply_flop_model refuses it elsewhere.
void add_flop_model_option(CLI::App& app, double& gflops);
void apply_flop_model(double gflops);

// libcomm's Comm of MPI_COMM_WORLD with the node map of --nodes; a bad map is an error
// naming the option.
libcomm::Comm world_comm(const std::string& nodes_spec);

// The content of the block that rank `src` sends to rank `dst`: 64-bit words
// seed(src, dst) ^ (j * golden), so a block landing in the wrong place, from the wrong
// rank, shifted or truncated shows up, and filling and checking run at memory speed.
inline std::uint64_t pattern_word(int src, int dst, std::uint64_t j) {
  std::uint64_t x = (static_cast<std::uint64_t>(src) << 32) ^ static_cast<std::uint32_t>(dst);
  x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  return x ^ (j * 0x9e3779b97f4a7c15ULL);
}
void fill_pattern(std::byte* block, int src, int dst, std::size_t bytes);
// Index of the first byte of `block` that differs from the pattern, or bytes if none.
std::size_t check_pattern(const std::byte* block, int src, int dst, std::size_t bytes);

}  // namespace apps

#include "apps/lists.hpp"
#include "apps/options.hpp"
#include "apps/random.hpp"
#include "apps/report.hpp"
#include "apps/timing.hpp"
