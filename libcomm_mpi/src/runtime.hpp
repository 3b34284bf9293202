// The machinery every intercepted collective shares: the re-entry guard, libcomm's Comm
// for each user communicator, the environment settings, the verbose log and the
// translation of C++ exceptions into MPI error codes.
#pragma once

#include <mpi.h>

#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include "libcomm/allgather.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/reduce_scatter.hpp"
#include "libcomm/error.hpp"

namespace libcomm_mpi {

// Set while an intercepted call runs on this thread. libcomm itself calls MPI_Alltoall,
// MPI_Allgather, ... (its `native` algorithms, the argument checks, the node-map
// discovery); those calls land in this library again and must go straight to PMPI.
class InsideWrapper {
 public:
  InsideWrapper() { ++depth(); }
  ~InsideWrapper() { --depth(); }
  InsideWrapper(const InsideWrapper&) = delete;
  InsideWrapper& operator=(const InsideWrapper&) = delete;
  static bool active() { return depth() > 0; }

 private:
  static int& depth();
};

// The environment, read once, at the first intercepted call: what a call does never
// depends on when the application changed a variable, and no call pays a getenv.
struct Settings {
  // LIBCOMM_VERBOSE=1: log each route once per (operation, communicator size, route).
  bool verbose = false;
  // libcomm's collective argument check (an extra small collective per call, so that ranks
  // that disagree get an error, not a hang): off unless LIBCOMM_CHECK_ARGS=1, or
  // LIBCOMM_CHECK=1 (check mode, which asks for every check). MPI itself makes mismatched
  // arguments erroneous and checks nothing collectively; neither does this library by
  // default.
  bool check_args = false;
  // LIBCOMM_ONLINE_SAVE=FILE: at MPI_Finalize, what auto's online policy learned in the run
  // is written to FILE as a tuning table (libcomm::save_learned_tuning_table), which a
  // later run starts from with LIBCOMM_TUNING=FILE.
  std::string online_save;
  // The algorithms (LIBCOMM_ALLTOALL, ...) and auto's policy (LIBCOMM_AUTO) are libcomm's
  // own settings: its driver reads them (libcomm::reload_environment).
};
const Settings& settings();
Settings read_settings();
Settings& current_settings();  // (libcomm_mpi_reload_environment replaces it)
inline bool verbose() { return settings().verbose; }
inline bool check_args() { return settings().check_args; }

// One intercepted call: where it goes and why.
class Call {
 public:
  Call(std::string_view op, MPI_Comm comm, const libcomm::Comm* known = nullptr)
      : op_(op), comm_(comm), known_(known) {}
  std::string_view op() const { return op_; }
  bool known() const { return known_ != nullptr; }
  MPI_Comm mpi() const { return comm_; }

  // libcomm's Comm for the user's communicator: built on first use (collectively, like
  // the MPI call itself) and freed when the user frees the communicator or finalizes.
  const libcomm::Comm& comm() const;

  // Records that libcomm runs `algorithm`; `why` is the choice's reason. Verbose mode
  // logs it on rank 0 of the communicator.
  void route(std::string_view algorithm, std::string_view why) const;
  // Records a fallback to the MPI library's own collective, then runs it.
  template <class Pmpi>
  int fallback(const Pmpi& pmpi, std::string_view why) const {
    route("pmpi", why);
    return pmpi();
  }
  // Prints "libcomm_mpi: OP: what" on stderr and raises `error_class` through the
  // communicator's error handler (fatal by default; returned with MPI_ERRORS_RETURN).
  int raise(int error_class, std::string_view what) const noexcept;

 private:
  std::string_view op_;
  MPI_Comm comm_;
  const libcomm::Comm* known_;
};

// Makes libcomm's Comm of MPI_COMM_WORLD right after MPI_Init (every rank is there; making
// it is collective), so that a program whose first collectives on MPI_COMM_WORLD are
// non-blocking runs them in libcomm too (a non-blocking call must not make it: see
// interpose.cpp). A failure (a bad LIBCOMM_NODES) is left for the first collective to report.
void adopt_world() noexcept;

// libcomm's Comm of `comm` when an earlier call made one (then comm is a usable
// intra-communicator and MPI is initialized: the checks below are not needed again),
// else null.
const libcomm::Comm* known_comm(MPI_Comm comm);

// Why a call on `comm` must go to the MPI library whatever its arguments (MPI not
// initialized, MPI_COMM_NULL, an inter-communicator, ranks with different settings), or
// nullptr when libcomm may run it.
const char* comm_fallback_reason(MPI_Comm comm);

// Thrown by Call::comm() when the communicator's ranks run with different settings
// (libcomm::SettingsDiffer, found when its state was made): the call goes to the MPI library.
constexpr const char* kSettingsDifferReason =
    "the ranks of this communicator run with different LIBCOMM_* settings or tuning/model files";
struct RunsInMpi {};

// Runs one intercepted collective: `pmpi` (the MPI library's collective) when
// comm_fallback_reason says so, else `body(call)`. A libcomm::Error (bad arguments,
// ranks that disagree) becomes MPI_ERR_ARG, bad_alloc MPI_ERR_NO_MEM and anything else
// MPI_ERR_INTERN, raised through the communicator's error handler as MPI does. No C++
// exception crosses the C interface.
template <class Pmpi, class Body>
int intercept(std::string_view op, MPI_Comm comm, const Pmpi& pmpi, const Body& body) noexcept {
  const Call call(op, comm, known_comm(comm));
  try {
    if (const char* why = call.known() ? nullptr : comm_fallback_reason(comm)) return call.fallback(pmpi, why);
    return body(call);
  } catch (const RunsInMpi&) {
    return call.fallback(pmpi, kSettingsDifferReason);
  } catch (const libcomm::Error& e) {
    return call.raise(MPI_ERR_ARG, e.what());
  } catch (const std::bad_alloc&) {
    return call.raise(MPI_ERR_NO_MEM, "out of memory");
  } catch (const std::exception& e) {
    return call.raise(MPI_ERR_INTERN, e.what());
  } catch (...) {
    return call.raise(MPI_ERR_INTERN, "unknown exception");
  }
}

}  // namespace libcomm_mpi
