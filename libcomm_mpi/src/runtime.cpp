#include "runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "libcomm_mpi.h"

namespace libcomm_mpi {

namespace {

thread_local std::string last_route;

bool mpi_usable() {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  return initialized && !finalized;
}

bool env_flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const std::string_view s(v);
  return !(s == "0" || s == "off" || s == "no" || s == "false");
}

// The communicators that carry a libcomm::Comm (as an MPI attribute under `keyval`).
// An attribute, not a map keyed by handle: MPI runs the delete callback when the user
// frees the communicator, so a handle that MPI reuses never finds a stale Comm.
struct CommCache {
  std::mutex mutex;
  int keyval = MPI_KEYVAL_INVALID;
  std::set<MPI_Comm> comms;
};

CommCache& cache() {
  static CommCache c;
  return c;
}

int delete_comm(MPI_Comm comm, int /*keyval*/, void* value, void* /*extra*/) {
  delete static_cast<libcomm::Comm*>(value);  // frees libcomm's private duplicate
  std::lock_guard lock(cache().mutex);
  cache().comms.erase(comm);
  return MPI_SUCCESS;
}

// Runs at the start of MPI_Finalize (attributes of MPI_COMM_SELF are deleted first, while
// MPI is still fully usable): frees every cached Comm, MPI_COMM_WORLD's included.
int release_all(MPI_Comm /*self*/, int /*keyval*/, void* /*value*/, void* /*extra*/) {
  std::vector<MPI_Comm> comms;
  int keyval = MPI_KEYVAL_INVALID;
  {
    std::lock_guard lock(cache().mutex);
    comms.assign(cache().comms.begin(), cache().comms.end());
    keyval = cache().keyval;
  }
  for (MPI_Comm c : comms) PMPI_Comm_delete_attr(c, keyval);
  return MPI_SUCCESS;
}

int comm_keyval() {
  auto& c = cache();
  std::lock_guard lock(c.mutex);
  if (c.keyval == MPI_KEYVAL_INVALID) {
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_comm, &c.keyval, nullptr);
    int finalize_hook = MPI_KEYVAL_INVALID;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_all, &finalize_hook, nullptr);
    PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_hook, nullptr);
  }
  return c.keyval;
}

// Verbose log: once per (operation, communicator size, route, reason), rank 0 only.
void log_once(std::string_view op, MPI_Comm comm, std::string_view route, std::string_view why) {
  if (!verbose() || comm == MPI_COMM_NULL || !mpi_usable()) return;
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  if (rank != 0) return;
  static std::mutex mutex;
  static std::set<std::tuple<std::string, int, std::string, std::string>> seen;
  std::lock_guard lock(mutex);
  if (!seen.emplace(std::string(op), size, std::string(route), std::string(why)).second) return;
  std::fprintf(stderr, "libcomm_mpi: %.*s on %d ranks: %.*s (%.*s)\n", static_cast<int>(op.size()),
               op.data(), size, static_cast<int>(route.size()), route.data(),
               static_cast<int>(why.size()), why.data());
  std::fflush(stderr);
}

}  // namespace

int& InsideWrapper::depth() {
  thread_local int d = 0;
  return d;
}

namespace {

template <class Algo, class FromEnv>
EnvAlgorithm<Algo> env_algorithm(FromEnv from_env) {
  EnvAlgorithm<Algo> a;
  try {
    a.algo = from_env(Algo::Auto);
  } catch (const libcomm::Error& e) {
    a.error = e.what();
  }
  return a;
}

}  // namespace

Settings read_settings() {
  Settings s;
  s.verbose = env_flag("LIBCOMM_VERBOSE", false);
  s.check_args = env_flag("LIBCOMM_CHECK_ARGS", false) || env_flag("LIBCOMM_CHECK", false);
  s.alltoall = env_algorithm<libcomm::AlltoallAlgo>(libcomm::alltoall_algo_from_env);
  s.alltoallv = env_algorithm<libcomm::AlltoallvAlgo>(libcomm::alltoallv_algo_from_env);
  s.allgather = env_algorithm<libcomm::AllgatherAlgo>(libcomm::allgather_algo_from_env);
  s.reduce_scatter = env_algorithm<libcomm::ReduceScatterAlgo>(libcomm::reduce_scatter_algo_from_env);
  return s;
}

Settings& current_settings() {
  static Settings s = read_settings();
  return s;
}

const Settings& settings() { return current_settings(); }

const char* comm_fallback_reason(MPI_Comm comm) {
  if (!mpi_usable()) return "MPI is not initialized or already finalized";
  if (comm == MPI_COMM_NULL) return "MPI_COMM_NULL: MPI reports the error";
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return "invalid communicator";
  if (inter) return "inter-communicator";
  return nullptr;
}

const libcomm::Comm& Call::comm() const {
  const int keyval = comm_keyval();
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm_, keyval, &value, &found);
  if (found) return *static_cast<const libcomm::Comm*>(value);
  // LIBCOMM_NODES: which ranks share a node, for the hierarchical algorithms (a NodeMap
  // spec: shared, flat, ppn=4, ...). Default: ask MPI which ranks share memory.
  const char* nodes = std::getenv("LIBCOMM_NODES");
  auto fresh = std::make_unique<libcomm::Comm>(comm_, nodes != nullptr && *nodes != '\0' ? nodes : "shared");
  PMPI_Comm_set_attr(comm_, keyval, fresh.get());
  {
    std::lock_guard lock(cache().mutex);
    cache().comms.insert(comm_);
  }
  return *fresh.release();
}

void Call::route(std::string_view algorithm, std::string_view why) const {
  last_route.assign(algorithm);
  log_once(op_, comm_, algorithm, why);
}

int Call::raise(int error_class, std::string_view what) const noexcept {
  std::fprintf(stderr, "libcomm_mpi: %.*s: %.*s\n", static_cast<int>(op_.size()), op_.data(),
               static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  if (comm_ != MPI_COMM_NULL) PMPI_Comm_call_errhandler(comm_, error_class);
  return error_class;
}

}  // namespace libcomm_mpi

extern "C" const char* libcomm_mpi_last_route(void) { return libcomm_mpi::last_route.c_str(); }

extern "C" void libcomm_mpi_reload_environment(void) {
  libcomm_mpi::current_settings() = libcomm_mpi::read_settings();
}
