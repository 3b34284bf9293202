#include "runtime.hpp"

#include "libcomm/auto_policy.hpp"
#include "libcomm/tuning.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "libcomm/settings.hpp"
#include "libcomm/tuning.hpp"
#include "libcomm_mpi.h"

namespace libcomm_mpi {

namespace {

// The last route of this thread, for libcomm_mpi_last_route (a fixed buffer: a
// thread_local std::string cost a __tls_get_addr call and an assignment per call; the
// initial-exec model is right for a library that is preloaded or linked, never dlopened).
constexpr std::size_t kRouteChars = 64;
__attribute__((tls_model("initial-exec"))) thread_local char last_route[kRouteChars] = "";

// Set by the finalize hook below (MPI_COMM_SELF's attributes go first in MPI_Finalize).
std::atomic<bool> finalizing{false};

bool mpi_usable() {
  static std::atomic<bool> initialized{false};  // once true, true (until finalizing)
  if (!initialized.load(std::memory_order_relaxed)) {
    int flag = 0, finalized = 0;
    PMPI_Initialized(&flag);
    PMPI_Finalized(&finalized);
    if (!flag || finalized) return false;
    initialized.store(true, std::memory_order_relaxed);
  }
  return !finalizing.load(std::memory_order_relaxed);
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

// Bumped whenever a cached Comm is deleted: the per-thread memo of the last communicator
// below is then looked up again (a freed handle that MPI hands out again must not find the
// old Comm).
std::atomic<std::uint64_t> comm_generation{0};

struct LastComm {
  MPI_Comm comm = MPI_COMM_NULL;
  const libcomm::Comm* libcomm = nullptr;
  std::uint64_t generation = 0;
};
__attribute__((tls_model("initial-exec"))) thread_local LastComm last_comm;

// The attribute of a communicator whose ranks run with different settings
// (libcomm::SettingsDiffer): every collective on it goes to the MPI library.
char settings_differ_marker;
void* const kSettingsDiffer = &settings_differ_marker;

int delete_comm(MPI_Comm comm, int /*keyval*/, void* value, void* /*extra*/) {
  comm_generation.fetch_add(1, std::memory_order_acq_rel);
  if (value != kSettingsDiffer) delete static_cast<libcomm::Comm*>(value);  // frees libcomm's private duplicate
  std::lock_guard lock(cache().mutex);
  cache().comms.erase(comm);
  return MPI_SUCCESS;
}

// Runs at the start of MPI_Finalize (attributes of MPI_COMM_SELF are deleted first, while
// MPI is still fully usable): frees every cached Comm, MPI_COMM_WORLD's included.
// First, with LIBCOMM_ONLINE_SAVE, what auto's online policy learned is written (collective
// over MPI_COMM_WORLD, whose every rank is in MPI_Finalize).
int release_all(MPI_Comm /*self*/, int /*keyval*/, void* /*value*/, void* /*extra*/) {
  std::vector<MPI_Comm> comms;
  int keyval = MPI_KEYVAL_INVALID;
  {
    std::lock_guard lock(cache().mutex);
    comms.assign(cache().comms.begin(), cache().comms.end());
    keyval = cache().keyval;
  }
  if (const std::string& path = settings().online_save; !path.empty()) {
    void* world = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &world, &found);
    if (found && world != kSettingsDiffer) {
      const InsideWrapper inside;
      try {
        libcomm::save_learned_tuning_table(path, *static_cast<const libcomm::Comm*>(world));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "libcomm_mpi: LIBCOMM_ONLINE_SAVE: %s\n", e.what());
      }
    }
  }
  finalizing.store(true, std::memory_order_relaxed);
  for (MPI_Comm c : comms) PMPI_Comm_delete_attr(c, keyval);
  return MPI_SUCCESS;
}

// Made at the first call (MPI is initialized by then); afterwards a plain read (a
// function-local static: no lock per call).
int comm_keyval() {
  static const int keyval = [] {
    auto& c = cache();
    std::lock_guard lock(c.mutex);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_comm, &c.keyval, nullptr);
    int finalize_hook = MPI_KEYVAL_INVALID;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_all, &finalize_hook, nullptr);
    PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_hook, nullptr);
    return c.keyval;
  }();
  return keyval;
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
  __attribute__((tls_model("initial-exec"))) static thread_local int d = 0;
  return d;
}

Settings read_settings() {
  libcomm::reload_environment();  // libcomm's own choices (LIBCOMM_<OP>, LIBCOMM_AUTO), now too
  Settings s;
  using libcomm::Setting;
  s.verbose = libcomm::setting_flag(Setting::Verbose);
  s.check_args = libcomm::setting_flag(Setting::CheckArgs) || libcomm::setting_flag(Setting::Check);
  s.online_save = libcomm::setting_text(Setting::OnlineSave);
  return s;
}

Settings& current_settings() {
  static Settings s = read_settings();
  return s;
}

const Settings& settings() { return current_settings(); }

const libcomm::Comm* known_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || !mpi_usable()) return nullptr;
  // The same communicator as this thread's last call, none deleted since: no attribute
  // lookup (a hash-table search in Open MPI, a tenth of an 8-byte call's overhead).
  const std::uint64_t generation = comm_generation.load(std::memory_order_acquire);
  if (last_comm.comm == comm && last_comm.generation == generation) return last_comm.libcomm;
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, comm_keyval(), &value, &found);
  if (!found || value == kSettingsDiffer) return nullptr;
  const auto* c = static_cast<const libcomm::Comm*>(value);
  last_comm = {comm, c, generation};
  return last_comm.libcomm;
}



const char* comm_fallback_reason(MPI_Comm comm) {
  if (!mpi_usable()) return "MPI is not initialized or already finalized";
  if (comm == MPI_COMM_NULL) return "MPI_COMM_NULL: MPI reports the error";
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return "invalid communicator";
  if (inter) return "inter-communicator";
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, comm_keyval(), &value, &found);
  if (found && value == kSettingsDiffer) return kSettingsDifferReason;
  return nullptr;
}

const libcomm::Comm& Call::comm() const {
  if (known_) return *known_;
  const int keyval = comm_keyval();
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm_, keyval, &value, &found);
  if (found && value == kSettingsDiffer) throw RunsInMpi();
  if (found) return *static_cast<const libcomm::Comm*>(value);
  // LIBCOMM_NODES: which ranks share a node, for the hierarchical algorithms (a NodeMap
  // spec: shared, flat, ppn=4, ...). Default: ask MPI which ranks share memory.
  const std::string nodes = libcomm::setting_text(libcomm::Setting::Nodes);
  std::unique_ptr<libcomm::Comm> fresh;
  try {
    fresh = std::make_unique<libcomm::Comm>(comm_, nodes);
  } catch (const libcomm::SettingsDiffer& e) {
    // Every rank learnt it in the same collective: every rank marks the communicator, and
    // rank 0 of the first such communicator says so (the settings are the process's: a
    // later communicator would only repeat it). The program runs on, with the MPI
    // library's collectives.
    PMPI_Comm_set_attr(comm_, keyval, kSettingsDiffer);
    {
      std::lock_guard lock(cache().mutex);
      cache().comms.insert(comm_);
    }
    static std::atomic<bool> warned{false};
    int rank = 0;
    PMPI_Comm_rank(comm_, &rank);
    if (rank == 0 && !warned.exchange(true)) {
      std::fprintf(stderr, "libcomm_mpi: warning: %s; every collective on this communicator runs in the MPI library\n",
                   e.what());
      std::fflush(stderr);
    }
    throw RunsInMpi();
  }
  PMPI_Comm_set_attr(comm_, keyval, fresh.get());
  {
    std::lock_guard lock(cache().mutex);
    cache().comms.insert(comm_);
  }
  return *fresh.release();
}

void Call::route(std::string_view algorithm, std::string_view why) const {
  const std::size_t n = std::min(algorithm.size(), kRouteChars - 1);
  std::memcpy(last_route, algorithm.data(), n);
  last_route[n] = '\0';
  log_once(op_, comm_, algorithm, why);
}

int Call::raise(int error_class, std::string_view what) const noexcept {
  std::fprintf(stderr, "libcomm_mpi: %.*s: %.*s\n", static_cast<int>(op_.size()), op_.data(),
               static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  if (comm_ != MPI_COMM_NULL) PMPI_Comm_call_errhandler(comm_, error_class);
  return error_class;
}

void adopt_world() noexcept {
  const InsideWrapper inside;
  try {
    // (Its node map is the run's layout, which a learned tuning table is checked against.)
    if (comm_fallback_reason(MPI_COMM_WORLD) == nullptr)
      libcomm::note_run_layout(Call("MPI_Init", MPI_COMM_WORLD).comm());
  } catch (...) {
  }
}

}  // namespace libcomm_mpi

// MPI_Init and MPI_Init_thread: the MPI library's, then libcomm's state for MPI_COMM_WORLD.
extern "C" int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) libcomm_mpi::adopt_world();
  return rc;
}

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) libcomm_mpi::adopt_world();
  return rc;
}

extern "C" const char* libcomm_mpi_last_route(void) { return libcomm_mpi::last_route; }

extern "C" void libcomm_mpi_reload_environment(void) {
  libcomm_mpi::current_settings() = libcomm_mpi::read_settings();
}
