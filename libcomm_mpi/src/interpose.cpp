// The six MPI collectives that libcomm_mpi replaces, in their three forms (blocking
// MPI_<op>, non-blocking MPI_I<op>, persistent MPIX_<op>_init), defined under their MPI
// names so that an unmodified program linked with the library (before libmpi) or started
// with LD_PRELOAD runs libcomm's algorithms. The MPI library's own collectives stay
// reachable under their PMPI_ names (MPI standard, "Profiling Interface"). The requests the
// other two forms hand out, and the calls that complete them: requests.hpp.
//
// Each entry point: (1) when it is re-entered from inside libcomm (whose `native`
// algorithms and argument checks call these very functions), go straight to PMPI;
// (2) fall back to PMPI where libcomm cannot give exact MPI semantics (inter-communicators,
// reductions other than sum/max/min on double, float, int and double complex, arguments
// MPI itself must reject); (3) otherwise describe the user's buffers as bytes (staging
// MPI_IN_PLACE and non-contiguous datatypes through a local copy) and run the algorithm
// named by LIBCOMM_<OP> (default auto; libcomm's driver reads both). Every rank decides (2) from values MPI requires to
// agree across ranks, so no rank runs libcomm while another runs PMPI. A non-blocking call
// also falls back on a communicator that has no libcomm state yet: making it is a blocking
// collective (MPI_Comm_dup), which a non-blocking call must not be.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_<op>_init (the pcollreq extension)
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "datatype_layout.hpp"
#include "requests.hpp"
#include "libcomm/allgather.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/reduce_scatter.hpp"
#include "libcomm/tuning.hpp"
#include "runtime.hpp"

using libcomm_mpi::Call;
using libcomm_mpi::InsideWrapper;
using libcomm_mpi::HeldType;
using libcomm_mpi::Layout;
using libcomm_mpi::PendingCollective;

namespace {

constexpr const char* kBadArguments = "invalid count, datatype or operation: MPI reports it";

// Why a call took its route, for the verbose log (LIBCOMM_VERBOSE) only, so that a call
// without the log builds no strings: the reason libcomm's call returned (the rule, the
// tuning-table line or the fallback) and the notes of the staging steps done around it.
std::string_view name_of(libcomm::AlltoallAlgo a) { return libcomm::alltoall_algo_name(a); }
std::string_view name_of(libcomm::AlltoallvAlgo a) { return libcomm::alltoallv_algo_name(a); }
std::string_view name_of(libcomm::AllgatherAlgo a) { return libcomm::allgather_algo_name(a); }
std::string_view name_of(libcomm::ReduceScatterAlgo a) { return libcomm::reduce_scatter_algo_name(a); }

class Explanation {
 public:
  Explanation() : on_(libcomm_mpi::verbose()) {}
  void note(const char* what) {
    if (on_) notes_ += std::string("; ") + what;
  }
  // `ran`: what libcomm ran; "requested" means the environment named it (LIBCOMM_<OP>).
  std::string text(std::string_view ran, const std::string& reason) const {
    if (!on_) return {};
    return (reason == "requested" ? "named by the environment: " + std::string(ran) : reason) + notes_;
  }

 private:
  bool on_;
  std::string notes_;
};

// Which form of an operation the program called, and where the last two put the request.
struct Form {
  enum Kind { Blocking, Nonblocking, Persistent } kind = Blocking;
  MPI_Request* request = nullptr;

  // The request's state (its staging memory among it) for the non-blocking and
  // persistent forms, made before anything is staged; null for a blocking call.
  std::unique_ptr<PendingCollective> pending(std::string_view op, MPI_Comm comm) const {
    if (kind == Blocking) return nullptr;
    return std::make_unique<PendingCollective>(op, comm, kind == Persistent);
  }
};
constexpr Form kBlocking{};

// Where staging memory comes from: the thread's reusable buffers for a blocking call, the
// request's own for the other forms (they must outlive the call).
struct StagingSource {
  PendingCollective* owner = nullptr;
  std::byte* operator()(int slot, std::size_t bytes) const {
    return owner != nullptr ? owner->staging(slot, bytes) : libcomm_mpi::staging(slot, bytes);
  }
};

// One collective in the form called, once the exchange is described: `blocking()` runs it
// now and returns libcomm's Choice; `start()` returns libcomm's running request (MPI_I<op>)
// and `make_plan()` its plan (MPIX_<op>_init), handed out as *form.request. `pack` and
// `unpack` are the copies around the exchange (a persistent request packs at every start).
template <class Blocking, class Start, class MakePlan, class Pack, class Unpack>
int run_form(const Call& call, Form form, std::unique_ptr<PendingCollective> pending, const void* send, void* recv,
             const Blocking& blocking, const Start& start, const MakePlan& make_plan, Pack pack, Unpack unpack,
             const Explanation& why) {
  if (form.kind == Form::Blocking) {
    pack();
    const auto ran = blocking();
    call.route(name_of(ran.algo), why.text(name_of(ran.algo), ran.reason()));
    unpack();
    return MPI_SUCCESS;
  }
  PendingCollective& p = *pending;
  p.unpack = std::move(unpack);
  if (form.kind == Form::Nonblocking) {
    pack();
    p.request = start();
    call.route(p.request.algorithm(), why.text(p.request.algorithm(), p.request.reason()));
  } else {
    p.plan = make_plan();
    p.pack = std::move(pack);
    p.send = send;
    p.recv = recv;
    call.route(p.plan.algorithm(), why.text(p.plan.algorithm(), p.plan.reason()));
  }
  return libcomm_mpi::hand_out(std::move(pending), form.request);
}

// A non-blocking call on a communicator without libcomm state goes to MPI (see the top).
const char* nonblocking_fallback_reason(const Call& call, Form form) {
  if (form.kind == Form::Nonblocking && !call.known())
    return "first collective on this communicator is non-blocking: libcomm's state for it needs a "
           "blocking MPI_Comm_dup (made by its first blocking or persistent collective)";
  return nullptr;
}

bool any_negative(const int* values, int n) {
  for (int k = 0; k < n; ++k)
    if (values[k] < 0) return true;
  return false;
}

// One side of an irregular exchange (alltoallv, allgatherv) as libcomm sees it: a base
// pointer and per-rank byte counts and displacements. Dense layouts with non-negative
// displacements use the user's buffer; anything else goes through `staging` packed in
// rank order. A staged side keeps what pack() and unpack() read (the element counts and
// displacements, the datatype) as its own copies: a request runs them at a later start or
// at completion, when the caller's arrays may be gone (mpi4py frees them before MPI_Wait).
struct VectorSide {
  std::vector<std::int64_t> counts, displs;  // bytes
  std::byte* base = nullptr;
  bool staged = false;
  // Staged only: the program's buffer, counts and displacements (elements), type, layout.
  void* user = nullptr;
  std::vector<int> user_counts, user_displs;
  HeldType type;
  Layout layout;

  void pack() const {  // the program's elements -> base (a send side)
    for (std::size_t r = 0; r < user_counts.size(); ++r)
      libcomm_mpi::gather_elements(user, user_displs[r], user_counts[r], type.get(), layout, base + displs[r]);
  }
  void unpack() const {  // base -> the program's elements (a receive side)
    for (std::size_t r = 0; r < user_counts.size(); ++r)
      libcomm_mpi::scatter_elements(base + displs[r], user, user_displs[r], user_counts[r], type.get(), layout);
  }
};

// `hold`: the call hands out a request (non-blocking or persistent), which keeps the type.
VectorSide describe_side(const void* buf, const int* counts, const int* displs, MPI_Datatype type, const Layout& l,
                         int p, bool force_staging, int staging_slot, const StagingSource& staging, bool hold) {
  VectorSide s;
  s.counts.resize(static_cast<std::size_t>(p));
  s.displs.resize(static_cast<std::size_t>(p));
  s.staged = force_staging || !l.dense || any_negative(displs, p);
  std::int64_t packed = 0;
  for (int r = 0; r < p; ++r) {
    const auto k = static_cast<std::size_t>(r);
    s.counts[k] = static_cast<std::int64_t>(counts[r]) * static_cast<std::int64_t>(l.size);
    s.displs[k] = s.staged ? packed : static_cast<std::int64_t>(displs[r]) * l.extent;
    packed += s.counts[k];
  }
  if (!s.staged) {
    s.base = libcomm_mpi::dense_at(buf, l, 0);
    return s;
  }
  s.base = staging(staging_slot, static_cast<std::size_t>(packed));
  s.user = const_cast<void*>(buf);
  s.user_counts.assign(counts, counts + p);
  s.user_displs.assign(displs, displs + p);
  s.type = HeldType(type, hold && !l.dense);
  s.layout = l;
  return s;
}

// A regular exchange (alltoall, allgather) as libcomm sees it: `block` bytes per block,
// `send_blocks` blocks going out (P for alltoall, 1 for allgather) and P coming in.
// Dense buffers are used as they are; MPI_IN_PLACE input and non-contiguous layouts go
// through staging buffers. pack() and finish() read only the exchange's own members (a
// request copies it), the program's buffers and the types it holds.
struct RegularExchange {
  RegularExchange(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype)
      : sendbuf(sbuf), sendcount(scount), sendtype(stype, false), recvbuf(rbuf), recvcount(rcount),
        recvtype(rtype, false) {}
  const void* sendbuf;
  int sendcount;
  HeldType sendtype;
  void* recvbuf;
  int recvcount;
  HeldType recvtype;

  std::optional<Layout> rl, sl;
  std::size_t block = 0;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
  std::byte* send_staging = nullptr;  // non-null: pack() fills it
  std::int64_t send_index = 0, send_elements = 0;
  std::int64_t recv_elements = 0;

  bool in_place() const { return sendbuf == MPI_IN_PLACE; }

  // Why MPI, not libcomm, must handle the call, or nullptr.
  const char* invalid() {
    rl = libcomm_mpi::layout_of(recvtype.get());
    sl = in_place() ? rl : libcomm_mpi::layout_of(sendtype.get());
    if (!rl || !sl || recvcount < 0 || (!in_place() && sendcount < 0)) return kBadArguments;
    block = static_cast<std::size_t>(recvcount) * rl->size;
    if (!in_place() && static_cast<std::size_t>(sendcount) * sl->size != block)
      return "send and receive blocks differ in size: MPI reports it";
    return nullptr;
  }

  // Sets send and recv. With MPI_IN_PLACE the outgoing blocks start at block
  // `in_place_block` of recvbuf. `hold`: a request will pack or unpack later (it keeps
  // the derived types it needs).
  void stage(int p, int send_blocks, std::int64_t in_place_block, Explanation& why, const StagingSource& staging,
             bool hold) {
    const auto out = static_cast<std::int64_t>(send_blocks);
    if (in_place() || !sl->dense) {
      send_staging = staging(0, block * static_cast<std::size_t>(send_blocks));
      send_index = in_place() ? in_place_block * recvcount : 0;
      send_elements = out * (in_place() ? recvcount : sendcount);
      send = send_staging;
      if (!in_place()) sendtype = HeldType(sendtype.get(), hold);
      why.note(in_place() ? "MPI_IN_PLACE: input copied first" : "sendtype non-contiguous: packed");
    } else {
      send = libcomm_mpi::dense_at(sendbuf, *sl, 0);
    }
    recv_elements = static_cast<std::int64_t>(recvcount) * p;
    if (rl->dense) {
      recv = libcomm_mpi::dense_at(recvbuf, *rl, 0);
    } else {
      recv = staging(1, block * static_cast<std::size_t>(p));
      recvtype = HeldType(recvtype.get(), hold);
      why.note("recvtype non-contiguous: unpacked");
    }
  }

  // Before the exchange: the staged input.
  void pack() const {
    if (send_staging == nullptr) return;
    if (in_place())
      libcomm_mpi::gather_elements(recvbuf, send_index, send_elements, recvtype.get(), *rl, send_staging);
    else
      libcomm_mpi::gather_elements(sendbuf, 0, send_elements, sendtype.get(), *sl, send_staging);
  }

  // After the exchange: unpacks a staged receive buffer into the user's.
  void finish() const {
    if (!rl->dense) libcomm_mpi::scatter_elements(recv, recvbuf, 0, recv_elements, recvtype.get(), *rl);
  }
};

// The reductions libcomm implements; nullopt sends the call to PMPI.
// The Fortran types (src/fortran.cpp passes them on) when they are the C ones in disguise.
bool same_size(MPI_Datatype t, int bytes) {
  int size = 0;
  return PMPI_Type_size(t, &size) == MPI_SUCCESS && size == bytes;
}

std::optional<libcomm::ElemType> elem_type_of(MPI_Datatype t) {
  if (t == MPI_DOUBLE) return libcomm::ElemType::Double;
  if (t == MPI_FLOAT) return libcomm::ElemType::Float;
  if (t == MPI_INT) return libcomm::ElemType::Int;
  if (t == MPI_C_DOUBLE_COMPLEX || t == MPI_CXX_DOUBLE_COMPLEX) return libcomm::ElemType::ComplexDouble;
  if ((t == MPI_DOUBLE_PRECISION || t == MPI_REAL8) && same_size(t, 8)) return libcomm::ElemType::Double;
  if ((t == MPI_REAL || t == MPI_REAL4) && same_size(t, 4)) return libcomm::ElemType::Float;
  if ((t == MPI_INTEGER || t == MPI_INTEGER4) && same_size(t, static_cast<int>(sizeof(int))))
    return libcomm::ElemType::Int;
  if (t == MPI_DOUBLE_COMPLEX && same_size(t, 16)) return libcomm::ElemType::ComplexDouble;
  return std::nullopt;
}

std::optional<libcomm::ReduceOp> reduce_op_of(MPI_Op op) {
  if (op == MPI_SUM) return libcomm::ReduceOp::Sum;
  if (op == MPI_MAX) return libcomm::ReduceOp::Max;
  if (op == MPI_MIN) return libcomm::ReduceOp::Min;
  return std::nullopt;
}

// ---- The six operations, each in all three forms ------------------------------------------

template <class Pmpi>
int alltoall_body(const Call& call, const Pmpi& pmpi, Form form, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  RegularExchange x(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  if (const char* why = x.invalid()) return call.fallback(pmpi, why);
  if (const char* why = nonblocking_fallback_reason(call, form)) return call.fallback(pmpi, why);
  const libcomm::Comm& c = call.comm();
  libcomm::AlltoallOptions opts;
  opts.check_args = libcomm_mpi::check_args();
  // Auto: libcomm's driver applies LIBCOMM_ALLTOALL and the Auto policy.
  constexpr auto requested = libcomm::AlltoallAlgo::Auto;
  Explanation why;
  auto pending = form.pending(call.op(), call.mpi());
  x.stage(c.size(), c.size(), 0, why, StagingSource{pending.get()}, pending != nullptr);
  return run_form(
      call, form, std::move(pending), x.send, x.recv,
      [&] { return libcomm::alltoall(x.send, x.recv, x.block, c, requested, opts); },
      [&] { return libcomm::ialltoall(x.send, x.recv, x.block, c, requested, opts); },
      [&] { return libcomm::plan_alltoall(c, x.block, requested, opts); }, [x] { x.pack(); },
      [x] { x.finish(); }, why);
}

template <class Pmpi>
int alltoallv_body(const Call& call, const Pmpi& pmpi, Form form, const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto rl = libcomm_mpi::layout_of(recvtype);
  const auto sl = in_place ? rl : libcomm_mpi::layout_of(sendtype);
  int p = 0;
  PMPI_Comm_size(comm, &p);
  if (!rl || !sl || recvcounts == nullptr || rdispls == nullptr || any_negative(recvcounts, p) ||
      (!in_place && (sendcounts == nullptr || sdispls == nullptr || any_negative(sendcounts, p))))
    return call.fallback(pmpi, kBadArguments);
  if (const char* why = nonblocking_fallback_reason(call, form)) return call.fallback(pmpi, why);
  const libcomm::Comm& c = call.comm();
  libcomm::AlltoallvOptions opts;
  opts.check_args = libcomm_mpi::check_args();
  // The staged algorithms deal bytes (element_bytes 1), never this rank's element size:
  // ranks may describe one exchange with different types (only the bytes must match), and
  // a unit that differed between ranks would key their decisions apart (a hang).
  // Auto: libcomm's driver applies LIBCOMM_ALLTOALLV and the Auto policy.
  constexpr auto requested = libcomm::AlltoallvAlgo::Auto;
  Explanation why;
  auto pending = form.pending(call.op(), call.mpi());
  const StagingSource staging{pending.get()};
  // With MPI_IN_PLACE the data to send is the receive buffer's, described by the
  // receive arguments; it is copied out first because the exchange overwrites it.
  const void* sbuf = in_place ? recvbuf : sendbuf;
  const int* scounts = in_place ? recvcounts : sendcounts;
  const int* sdisp = in_place ? rdispls : sdispls;
  const MPI_Datatype stype = in_place ? recvtype : sendtype;
  const bool hold = pending != nullptr;
  const auto send = describe_side(sbuf, scounts, sdisp, stype, *sl, p, in_place, 0, staging, hold);
  if (send.staged)
    why.note(in_place ? "MPI_IN_PLACE: input copied first" : "send side packed (non-contiguous type or negative displacements)");
  const auto recv = describe_side(recvbuf, recvcounts, rdispls, recvtype, *rl, p, false, 1, staging, hold);
  if (recv.staged) why.note("receive side unpacked (non-contiguous type or negative displacements)");
  const auto pack = [send] {
    if (send.staged) send.pack();
  };
  const auto unpack = [recv] {
    if (recv.staged) recv.unpack();
  };
  return run_form(
      call, form, std::move(pending), send.base, recv.base,
      [&] {
        return libcomm::alltoallv(send.base, send.counts, send.displs, recv.base, recv.counts, recv.displs, c,
                                  requested, opts);
      },
      [&] {
        return libcomm::ialltoallv(send.base, send.counts, send.displs, recv.base, recv.counts, recv.displs, c,
                                   requested, opts);
      },
      [&] { return libcomm::plan_alltoallv(c, send.counts, send.displs, recv.counts, recv.displs, requested, opts); },
      pack, unpack, why);
}

template <class Pmpi>
int allgather_body(const Call& call, const Pmpi& pmpi, Form form, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  RegularExchange x(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  if (const char* why = x.invalid()) return call.fallback(pmpi, why);
  if (const char* why = nonblocking_fallback_reason(call, form)) return call.fallback(pmpi, why);
  const libcomm::Comm& c = call.comm();
  libcomm::AllgatherOptions opts;
  opts.check_args = libcomm_mpi::check_args();
  opts.allow_fallback = true;
  // Auto: libcomm's driver applies LIBCOMM_ALLGATHER and the Auto policy.
  constexpr auto requested = libcomm::AllgatherAlgo::Auto;
  Explanation why;
  auto pending = form.pending(call.op(), call.mpi());
  // (in place: this rank's block is in recvbuf)
  x.stage(c.size(), 1, c.rank(), why, StagingSource{pending.get()}, pending != nullptr);
  return run_form(
      call, form, std::move(pending), x.send, x.recv,
      [&] { return libcomm::allgather(x.send, x.recv, x.block, c, requested, opts); },
      [&] { return libcomm::iallgather(x.send, x.recv, x.block, c, requested, opts); },
      [&] { return libcomm::plan_allgather(c, x.block, requested, opts); }, [x] { x.pack(); },
      [x] { x.finish(); }, why);
}

template <class Pmpi>
int allgatherv_body(const Call& call, const Pmpi& pmpi, Form form, const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto rl = libcomm_mpi::layout_of(recvtype);
  const auto sl = in_place ? rl : libcomm_mpi::layout_of(sendtype);
  int p = 0, me = 0;
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &me);
  if (!rl || !sl || recvcounts == nullptr || displs == nullptr || any_negative(recvcounts, p) ||
      (!in_place && sendcount < 0))
    return call.fallback(pmpi, kBadArguments);
  const std::size_t mine = static_cast<std::size_t>(recvcounts[me]) * rl->size;
  if (!in_place && static_cast<std::size_t>(sendcount) * sl->size != mine)
    return call.fallback(pmpi, "sendcount does not match recvcounts[rank]: MPI reports it");
  if (const char* why = nonblocking_fallback_reason(call, form)) return call.fallback(pmpi, why);
  const libcomm::Comm& c = call.comm();
  libcomm::AllgatherOptions opts;
  opts.check_args = libcomm_mpi::check_args();
  opts.allow_fallback = true;
  // Auto: libcomm's driver applies LIBCOMM_ALLGATHER and the Auto policy.
  constexpr auto requested = libcomm::AllgatherAlgo::Auto;
  Explanation why;
  auto pending = form.pending(call.op(), call.mpi());
  const StagingSource staging{pending.get()};

  // libcomm places the blocks back to back in rank order: the user's buffer serves when
  // the displacements say the same, otherwise a staging buffer is copied out after.
  bool staged = false;
  std::int64_t packed_at = 0;
  for (int r = 0; r < p && !staged; ++r) {
    staged = static_cast<std::int64_t>(displs[r]) * rl->extent != packed_at;
    packed_at += static_cast<std::int64_t>(recvcounts[r]) * static_cast<std::int64_t>(rl->size);
  }
  const bool hold = pending != nullptr;
  const auto recv = describe_side(recvbuf, recvcounts, displs, recvtype, *rl, p, staged, 1, staging, hold);
  if (recv.staged) why.note("blocks not packed in rank order or non-contiguous type: staged");
  std::byte* send_staging = nullptr;
  const std::byte* send = nullptr;
  if (in_place || !sl->dense) {
    send = send_staging = staging(0, mine);
    why.note(in_place ? "MPI_IN_PLACE: own block copied first" : "sendtype non-contiguous: packed");
  } else {
    send = libcomm_mpi::dense_at(sendbuf, *sl, 0);
  }
  // This rank's own block: sendbuf, or with MPI_IN_PLACE its place in recvbuf (the values
  // copied now: a request packs at every start, when the caller's arrays may be gone).
  const void* own = in_place ? recvbuf : sendbuf;
  const std::int64_t own_index = in_place ? displs[me] : 0;
  const std::int64_t own_count = in_place ? recvcounts[me] : sendcount;
  const Layout own_layout = in_place ? *rl : *sl;
  const HeldType own_type(in_place ? recvtype : sendtype, hold && send_staging != nullptr && !own_layout.dense);
  const auto pack = [=] {
    if (send_staging != nullptr)
      libcomm_mpi::gather_elements(own, own_index, own_count, own_type.get(), own_layout, send_staging);
  };
  const auto unpack = [recv] {
    if (recv.staged) recv.unpack();
  };
  const std::vector<std::size_t> counts(recv.counts.begin(), recv.counts.end());
  return run_form(
      call, form, std::move(pending), send, recv.base,
      [&] { return libcomm::allgatherv(send, mine, recv.base, counts, c, requested, opts); },
      [&] { return libcomm::iallgatherv(send, mine, recv.base, counts, c, requested, opts); },
      [&] { return libcomm::plan_allgatherv(c, counts, requested, opts); }, pack, unpack, why);
}

// Reduce_scatter and Reduce_scatter_block once the counts are known (`counts` elements
// per rank, the same on every rank).
template <class Pmpi>
int reduce_scatter_body(const Call& call, const Pmpi& pmpi, Form form, const void* sendbuf, void* recvbuf,
                        const std::vector<std::size_t>& counts, MPI_Datatype datatype, MPI_Op op) {
  const auto type = elem_type_of(datatype);
  const auto rop = reduce_op_of(op);
  // MPI requires the same datatype and operation on every rank, so all ranks fall back
  // together.
  if (!type) return call.fallback(pmpi, "datatype is not double, float, int or double complex");
  if (!rop) return call.fallback(pmpi, "operation is not MPI_SUM, MPI_MAX or MPI_MIN (user-defined "
                                       "and other operations run in MPI)");
  if (*type == libcomm::ElemType::ComplexDouble && *rop != libcomm::ReduceOp::Sum)
    return call.fallback(pmpi, kBadArguments);
  if (const char* why = nonblocking_fallback_reason(call, form)) return call.fallback(pmpi, why);
  const libcomm::Comm& c = call.comm();
  std::size_t total = 0, largest = 0;
  for (auto n : counts) {
    total += n;
    largest = std::max(largest, n);
  }
  const std::size_t esize = libcomm::elem_size(*type);
  libcomm::ReduceScatterOptions opts;
  opts.check_args = libcomm_mpi::check_args();
  opts.allow_fallback = true;
  // Auto: libcomm's driver applies LIBCOMM_REDUCE_SCATTER and the Auto policy.
  constexpr auto requested = libcomm::ReduceScatterAlgo::Auto;
  Explanation why;
  auto pending = form.pending(call.op(), call.mpi());
  const void* send = sendbuf;
  std::byte* copy = nullptr;
  if (sendbuf == MPI_IN_PLACE) {  // the input is in recvbuf, the result goes there too
    send = copy = StagingSource{pending.get()}(0, total * esize);
    why.note("MPI_IN_PLACE: input copied first");
  }
  const auto pack = [copy, recvbuf, bytes = total * esize] {
    if (copy != nullptr && bytes > 0) std::memcpy(copy, recvbuf, bytes);
  };
  std::vector<std::size_t> count_bytes(counts);
  for (auto& n : count_bytes) n *= esize;
  return run_form(
      call, form, std::move(pending), send, recvbuf,
      [&] { return libcomm::reduce_scatter(send, recvbuf, count_bytes, *type, *rop, c, requested, opts); },
      [&] { return libcomm::ireduce_scatter(send, recvbuf, count_bytes, *type, *rop, c, requested, opts); },
      [&] { return libcomm::plan_reduce_scatter(c, count_bytes, *type, *rop, requested, opts); }, pack, [] {},
      why);
}

// The entry points of one operation share its body; only the form and the MPI library's own
// call (the fallback) differ.
template <class Pmpi, class Body>
int entry(const char* op, MPI_Comm comm, const Pmpi& pmpi, const Body& body) {
  if (InsideWrapper::active()) return pmpi();
  const InsideWrapper inside;
  return libcomm_mpi::intercept(op, comm, pmpi, body);
}

int alltoall_entry(const char* op, Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info) {
  const auto pmpi = [&] {
    switch (form.kind) {
      case Form::Nonblocking:
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, form.request);
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
      case Form::Persistent:
        return PMPIX_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                   form.request);
#endif
      default: return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
  };
  (void)info;
  return entry(op, comm, pmpi, [&](const Call& call) {
    return alltoall_body(call, pmpi, form, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int alltoallv_entry(const char* op, Form form, const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info) {
  const auto pmpi = [&] {
    switch (form.kind) {
      case Form::Nonblocking:
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                               form.request);
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
      case Form::Persistent:
        return PMPIX_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, info, form.request);
#endif
      default:
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    }
  };
  (void)info;
  return entry(op, comm, pmpi, [&](const Call& call) {
    return alltoallv_body(call, pmpi, form, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
  });
}

int allgather_entry(const char* op, Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info) {
  const auto pmpi = [&] {
    switch (form.kind) {
      case Form::Nonblocking:
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, form.request);
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
      case Form::Persistent:
        return PMPIX_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                    form.request);
#endif
      default: return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
  };
  (void)info;
  return entry(op, comm, pmpi, [&](const Call& call) {
    return allgather_body(call, pmpi, form, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int allgatherv_entry(const char* op, Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Info info) {
  const auto pmpi = [&] {
    switch (form.kind) {
      case Form::Nonblocking:
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                form.request);
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
      case Form::Persistent:
        return PMPIX_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                     form.request);
#endif
      default: return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    }
  };
  (void)info;
  return entry(op, comm, pmpi, [&](const Call& call) {
    return allgatherv_body(call, pmpi, form, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
  });
}

int reduce_scatter_entry(const char* op, Form form, const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op mpi_op, MPI_Comm comm, MPI_Info info) {
  const auto pmpi = [&] {
    switch (form.kind) {
      case Form::Nonblocking:
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, mpi_op, comm, form.request);
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
      case Form::Persistent:
        return PMPIX_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, mpi_op, comm, info, form.request);
#endif
      default: return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, mpi_op, comm);
    }
  };
  (void)info;
  return entry(op, comm, pmpi, [&](const Call& call) {
    int p = 0;
    PMPI_Comm_size(comm, &p);
    if (recvcounts == nullptr || any_negative(recvcounts, p)) return call.fallback(pmpi, kBadArguments);
    std::vector<std::size_t> counts(static_cast<std::size_t>(p));
    for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = static_cast<std::size_t>(recvcounts[r]);
    return reduce_scatter_body(call, pmpi, form, sendbuf, recvbuf, counts, datatype, mpi_op);
  });
}

int reduce_scatter_block_entry(const char* op, Form form, const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op mpi_op, MPI_Comm comm, MPI_Info info) {
  const auto pmpi = [&] {
    switch (form.kind) {
      case Form::Nonblocking:
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, mpi_op, comm, form.request);
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
      case Form::Persistent:
        return PMPIX_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, mpi_op, comm, info,
                                               form.request);
#endif
      default: return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, mpi_op, comm);
    }
  };
  (void)info;
  return entry(op, comm, pmpi, [&](const Call& call) {
    int p = 0;
    PMPI_Comm_size(comm, &p);
    if (recvcount < 0) return call.fallback(pmpi, kBadArguments);
    const std::vector<std::size_t> counts(static_cast<std::size_t>(p), static_cast<std::size_t>(recvcount));
    return reduce_scatter_body(call, pmpi, form, sendbuf, recvbuf, counts, datatype, mpi_op);
  });
}

}  // namespace

// ---- The exported C entry points ----------------------------------------------------------

extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall_entry("MPI_Alltoall", kBlocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                        MPI_INFO_NULL);
}
extern "C" int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return alltoall_entry("MPI_Ialltoall", {Form::Nonblocking, request}, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, comm, MPI_INFO_NULL);
}

extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallv_entry("MPI_Alltoallv", kBlocking, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                         rdispls, recvtype, comm, MPI_INFO_NULL);
}
extern "C" int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return alltoallv_entry("MPI_Ialltoallv", {Form::Nonblocking, request}, sendbuf, sendcounts, sdispls, sendtype,
                         recvbuf, recvcounts, rdispls, recvtype, comm, MPI_INFO_NULL);
}

extern "C" int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather_entry("MPI_Allgather", kBlocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         comm, MPI_INFO_NULL);
}
extern "C" int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return allgather_entry("MPI_Iallgather", {Form::Nonblocking, request}, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, recvtype, comm, MPI_INFO_NULL);
}

extern "C" int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv_entry("MPI_Allgatherv", kBlocking, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                          recvtype, comm, MPI_INFO_NULL);
}
extern "C" int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return allgatherv_entry("MPI_Iallgatherv", {Form::Nonblocking, request}, sendbuf, sendcount, sendtype, recvbuf,
                          recvcounts, displs, recvtype, comm, MPI_INFO_NULL);
}

extern "C" int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_entry("MPI_Reduce_scatter", kBlocking, sendbuf, recvbuf, recvcounts, datatype, op, comm,
                              MPI_INFO_NULL);
}
extern "C" int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return reduce_scatter_entry("MPI_Ireduce_scatter", {Form::Nonblocking, request}, sendbuf, recvbuf, recvcounts,
                              datatype, op, comm, MPI_INFO_NULL);
}

extern "C" int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_block_entry("MPI_Reduce_scatter_block", kBlocking, sendbuf, recvbuf, recvcount, datatype,
                                    op, comm, MPI_INFO_NULL);
}
extern "C" int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return reduce_scatter_block_entry("MPI_Ireduce_scatter_block", {Form::Nonblocking, request}, sendbuf, recvbuf,
                                    recvcount, datatype, op, comm, MPI_INFO_NULL);
}

#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
// Open MPI 4.1's persistent collectives (the pcollreq extension; MPI-4 names them
// MPI_<op>_init). The info argument asks nothing of libcomm; MPI gets it on a fallback.
extern "C" int MPIX_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  return alltoall_entry("MPIX_Alltoall_init", {Form::Persistent, request}, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, comm, info);
}
extern "C" int MPIX_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return alltoallv_entry("MPIX_Alltoallv_init", {Form::Persistent, request}, sendbuf, sendcounts, sdispls, sendtype,
                         recvbuf, recvcounts, rdispls, recvtype, comm, info);
}
extern "C" int MPIX_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  return allgather_entry("MPIX_Allgather_init", {Form::Persistent, request}, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, recvtype, comm, info);
}
extern "C" int MPIX_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request* request) {
  return allgatherv_entry("MPIX_Allgatherv_init", {Form::Persistent, request}, sendbuf, sendcount, sendtype, recvbuf,
                          recvcounts, displs, recvtype, comm, info);
}
extern "C" int MPIX_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                        MPI_Request* request) {
  return reduce_scatter_entry("MPIX_Reduce_scatter_init", {Form::Persistent, request}, sendbuf, recvbuf, recvcounts,
                              datatype, op, comm, info);
}
extern "C" int MPIX_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                              MPI_Request* request) {
  return reduce_scatter_block_entry("MPIX_Reduce_scatter_block_init", {Form::Persistent, request}, sendbuf, recvbuf,
                                    recvcount, datatype, op, comm, info);
}
#endif
