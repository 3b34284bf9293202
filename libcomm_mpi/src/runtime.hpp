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

// An algorithm named by the environment, or the error its name gave (reported by every
// call of that operation, as MPI_ERR_ARG, instead of once).
template <class Algo>
struct EnvAlgorithm {
  Algo algo = Algo::Auto;
  std::string error;
  Algo get() const {
    if (!error.empty()) throw libcomm::Error(error);
    return algo;
  }
  bool is_auto() const { return algo == Algo::Auto && error.empty(); }
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
  // A tuning table is loaded (LIBCOMM_TUNING, LIBCOMM_PLATFORM): `auto` follows it on one
  // node too (see one_node_native).
  bool tuning_table = false;
  // LIBCOMM_ALLTOALL, LIBCOMM_ALLTOALLV, LIBCOMM_ALLGATHER, LIBCOMM_REDUCE_SCATTER.
  EnvAlgorithm<libcomm::AlltoallAlgo> alltoall;
  EnvAlgorithm<libcomm::AlltoallvAlgo> alltoallv;
  EnvAlgorithm<libcomm::AllgatherAlgo> allgather;
  EnvAlgorithm<libcomm::ReduceScatterAlgo> reduce_scatter;
};
const Settings& settings();
Settings read_settings();
Settings& current_settings();  // (libcomm_mpi_reload_environment replaces it)
inline bool verbose() { return settings().verbose; }
inline bool check_args() { return settings().check_args; }

// The drop-in's `auto` on a communicator of several ranks that all share one node, when no tuning
// table is loaded: the MPI library's own collective for the exchanges (alltoall, alltoallv,
// allgather, allgatherv) and for reduce-scatter blocks below kOneNodeReduceScatterBytes.
// libcomm's algorithms address networks (the papers' clusters): inside one node they move
// the same bytes as the MPI library's shared-memory collectives and cost more per call
// (docs/results/dropin_preload.txt, 2 ranks: 1.1-1.8x below 16 KiB, equal above), so
// preloading them there only costs. Reduce-scatter is the exception: Open MPI reduces
// everything to one rank and scatters, libcomm's ring and recursive halving combine each
// block once, 1.4-3.6x faster from 2 KiB up in the same table. Set LIBCOMM_NODES (virtual
// nodes), a tuning table, or name the algorithm to run libcomm's choice instead.
constexpr std::size_t kOneNodeReduceScatterBytes = 2048;
constexpr const char* kOneNodeNative =
    "auto on one node without a tuning table: the MPI library's own (LIBCOMM_NODES, LIBCOMM_TUNING or "
    "an algorithm name run libcomm's)";
// (A one-rank communicator keeps libcomm's: both are a local copy there.)
inline bool one_node_native(const libcomm::Comm& c) {
  return !settings().tuning_table && c.size() > 1 && c.nodes().num_nodes() == 1;
}

// The fast path of the calls that `auto` sends to the MPI library on one node: true when
// `comm` is this thread's last communicator and one_node_native holds for it (its first
// call took the full path, which also logged the choice); records the route. The caller
// then calls PMPI directly. Costs a few loads, where the full path builds a Call.
bool quick_one_node_native(MPI_Comm comm);

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
// initialized, MPI_COMM_NULL, an inter-communicator), or nullptr when libcomm may run it.
const char* comm_fallback_reason(MPI_Comm comm);

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
