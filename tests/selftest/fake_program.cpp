// The program behind the test helpers' self-tests (tests/selftest): prints what it is
// given, then ends as it is told, so that a helper can be shown to fail a program that
// prints exactly what a test expects and then exits 1, crashes or aborts.
//   fake_program [--help] [--no-mpi] [TEXT...] [--exit N | --crash | --abort | --hang]
// TEXT is printed by rank 0, one argument a line (stdout); --help prints a CLI11-like
// option table naming --alpha and --beta. With FAKE_ERROR_EXIT=N in the environment, a
// first argument other than --help is refused: "fake_program: error: ARG: refused", exit N
// (tests/apps/bad_input.py's self-test).
#include <mpi.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  bool mpi = true;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--no-mpi") == 0) mpi = false;
  int rank = 0;
  if (mpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
  if (const char* refuse = std::getenv("FAKE_ERROR_EXIT"); refuse && argc > 1 && std::strcmp(argv[1], "--help") != 0) {
    const std::string option = std::string(argv[1]).substr(0, std::string(argv[1]).find('='));
    if (rank == 0) std::fprintf(stderr, "fake_program: error: %s: refused\n", option.c_str());
    if (mpi) MPI_Finalize();
    return std::atoi(refuse);
  }
  std::string end = "exit";
  int code = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-mpi") continue;
    if (a == "--exit" && i + 1 < argc) {
      code = std::atoi(argv[++i]);
    } else if (a == "--crash" || a == "--abort" || a == "--hang") {
      end = a.substr(2);
    } else if (a == "--help") {
      if (rank == 0)
        std::printf("fake_program: a stand-in\nUsage: fake_program [OPTIONS]\n\nOptions:\n"
                    "  -h,--help                   Print this help message and exit\n"
                    "  --alpha INT:INT in [1 - 10]=1\n"
                    "  --beta TEXT:{x,y}=x\n");
    } else if (rank == 0) {
      std::printf("%s\n", a.c_str());
    }
  }
  std::fflush(stdout);
  if (end == "crash") std::raise(SIGSEGV);
  if (end == "abort" && mpi) MPI_Abort(MPI_COMM_WORLD, 1);
  if (end == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
  if (mpi) MPI_Finalize();
  return code;
}
