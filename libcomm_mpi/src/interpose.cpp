// The six MPI collectives that libcomm_mpi replaces, defined under their MPI names so that
// an unmodified program linked with the library (before libmpi) or started with
// LD_PRELOAD runs libcomm's algorithms. The MPI library's own collectives stay reachable
// under their PMPI_ names (MPI standard, "Profiling Interface").
//
// Each entry point: (1) when it is re-entered from inside libcomm (whose `native`
// algorithms and argument checks call these very functions), go straight to PMPI;
// (2) fall back to PMPI where libcomm cannot give exact MPI semantics (inter-communicators,
// reductions other than sum/max/min on double, float, int and double complex, arguments
// MPI itself must reject); (3) otherwise describe the user's buffers as bytes (staging
// MPI_IN_PLACE and non-contiguous datatypes through a local copy) and run the algorithm
// named by LIBCOMM_<OP> (default auto). Every rank decides (2) from values MPI requires to
// agree across ranks, so no rank runs libcomm while another runs PMPI.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "datatype_layout.hpp"
#include "libcomm/allgather.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/reduce_scatter.hpp"
#include "libcomm/tuning.hpp"
#include "runtime.hpp"

using libcomm_mpi::Call;
using libcomm_mpi::InsideWrapper;
using libcomm_mpi::Layout;

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
  // `requested`: the algorithm asked for, named only when the log is on.
  template <class Algo>
  explicit Explanation(Algo requested) : on_(libcomm_mpi::verbose()) {
    if (on_) requested_ = name_of(requested);
  }
  void note(const char* what) {
    if (on_) notes_ += std::string("; ") + what;
  }
  std::string text(const std::string& reason) const {
    if (!on_) return {};
    return (reason == "requested" ? "requested " + std::string(requested_) : reason) + notes_;
  }

 private:
  std::string_view requested_;
  bool on_;
  std::string notes_;
};

bool any_negative(const int* values, int n) {
  for (int k = 0; k < n; ++k)
    if (values[k] < 0) return true;
  return false;
}

// One side of an irregular exchange (alltoallv, allgatherv) as libcomm sees it: a base
// pointer and per-rank byte counts and displacements. Dense layouts with non-negative
// displacements use the user's buffer; anything else goes through `staging` packed in
// rank order.
struct VectorSide {
  std::vector<std::int64_t> counts, displs;  // bytes
  std::byte* base = nullptr;
  bool staged = false;
};

VectorSide describe_side(const void* buf, const int* counts, const int* displs, const Layout& l,
                         int p, bool force_staging, int staging_slot) {
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
  s.base = s.staged ? libcomm_mpi::staging(staging_slot, static_cast<std::size_t>(packed))
                    : libcomm_mpi::dense_at(buf, l, 0);
  return s;
}

void pack_side(const VectorSide& s, const void* buf, const int* counts, const int* displs,
               MPI_Datatype type, const Layout& l) {
  for (std::size_t r = 0; r < s.counts.size(); ++r)
    libcomm_mpi::gather_elements(buf, displs[r], counts[r], type, l, s.base + s.displs[r]);
}

void unpack_side(const VectorSide& s, void* buf, const int* counts, const int* displs,
                 MPI_Datatype type, const Layout& l) {
  for (std::size_t r = 0; r < s.counts.size(); ++r)
    libcomm_mpi::scatter_elements(s.base + s.displs[r], buf, displs[r], counts[r], type, l);
}

// A regular exchange (alltoall, allgather) as libcomm sees it: `block` bytes per block,
// `send_blocks` blocks going out (P for alltoall, 1 for allgather) and P coming in.
// Dense buffers are used as they are; MPI_IN_PLACE input and non-contiguous layouts go
// through staging buffers.
struct RegularExchange {
  RegularExchange(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype)
      : sendbuf(sbuf), sendcount(scount), sendtype(stype), recvbuf(rbuf), recvcount(rcount),
        recvtype(rtype) {}
  const void* sendbuf;
  int sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  int recvcount;
  MPI_Datatype recvtype;

  std::optional<Layout> rl, sl;
  std::size_t block = 0;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
  std::int64_t recv_elements = 0;

  bool in_place() const { return sendbuf == MPI_IN_PLACE; }

  // Why MPI, not libcomm, must handle the call, or nullptr.
  const char* invalid() {
    rl = libcomm_mpi::layout_of(recvtype);
    sl = in_place() ? rl : libcomm_mpi::layout_of(sendtype);
    if (!rl || !sl || recvcount < 0 || (!in_place() && sendcount < 0)) return kBadArguments;
    block = static_cast<std::size_t>(recvcount) * rl->size;
    if (!in_place() && static_cast<std::size_t>(sendcount) * sl->size != block)
      return "send and receive blocks differ in size: MPI reports it";
    return nullptr;
  }

  // Sets send and recv. With MPI_IN_PLACE the outgoing blocks start at block
  // `in_place_block` of recvbuf.
  void stage(int p, int send_blocks, std::int64_t in_place_block, Explanation& why) {
    const auto out = static_cast<std::int64_t>(send_blocks);
    if (in_place() || !sl->dense) {
      auto* staged = libcomm_mpi::staging(0, block * static_cast<std::size_t>(send_blocks));
      if (in_place())
        libcomm_mpi::gather_elements(recvbuf, in_place_block * recvcount, out * recvcount, recvtype,
                                     *rl, staged);
      else
        libcomm_mpi::gather_elements(sendbuf, 0, out * sendcount, sendtype, *sl, staged);
      send = staged;
      why.note(in_place() ? "MPI_IN_PLACE: input copied first" : "sendtype non-contiguous: packed");
    } else {
      send = libcomm_mpi::dense_at(sendbuf, *sl, 0);
    }
    recv_elements = static_cast<std::int64_t>(recvcount) * p;
    if (rl->dense) {
      recv = libcomm_mpi::dense_at(recvbuf, *rl, 0);
    } else {
      recv = libcomm_mpi::staging(1, block * static_cast<std::size_t>(p));
      why.note("recvtype non-contiguous: unpacked");
    }
  }

  // After the exchange: unpacks a staged receive buffer into the user's.
  void finish() const {
    if (!rl->dense) libcomm_mpi::scatter_elements(recv, recvbuf, 0, recv_elements, recvtype, *rl);
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

// Reduce_scatter and Reduce_scatter_block once the counts are known (`counts` elements
// per rank, the same on every rank).
template <class Pmpi>
int reduce_scatter_common(const Call& call, const Pmpi& pmpi, const void* sendbuf, void* recvbuf,
                          const std::vector<std::size_t>& counts, MPI_Datatype datatype,
                          MPI_Op op) {
  const auto type = elem_type_of(datatype);
  const auto rop = reduce_op_of(op);
  // MPI requires the same datatype and operation on every rank, so all ranks fall back
  // together.
  if (!type) return call.fallback(pmpi, "datatype is not double, float, int or double complex");
  if (!rop) return call.fallback(pmpi, "operation is not MPI_SUM, MPI_MAX or MPI_MIN (user-defined "
                                       "and other operations run in MPI)");
  if (*type == libcomm::ElemType::ComplexDouble && *rop != libcomm::ReduceOp::Sum)
    return call.fallback(pmpi, kBadArguments);
  const libcomm::Comm& c = call.comm();
  std::size_t total = 0;
  for (auto n : counts) total += n;
  const std::size_t esize = libcomm::elem_size(*type);
  libcomm::ReduceScatterOptions opts;
  opts.check_args = libcomm_mpi::check_args();
  opts.allow_fallback = true;
  const auto requested = libcomm_mpi::settings().reduce_scatter.get();
  Explanation why(requested);
  const void* send = sendbuf;
  if (sendbuf == MPI_IN_PLACE) {  // the input is in recvbuf, the result goes there too
    auto* copy = libcomm_mpi::staging(0, total * esize);
    if (total > 0) std::memcpy(copy, recvbuf, total * esize);
    send = copy;
    why.note("MPI_IN_PLACE: input copied first");
  }
  std::vector<std::size_t> count_bytes(counts);
  for (auto& n : count_bytes) n *= esize;
  const auto ran = libcomm::reduce_scatter(send, recvbuf, count_bytes, *type, *rop, c, requested, opts);
  call.route(libcomm::reduce_scatter_algo_name(ran), why.text(ran.reason()));
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const auto pmpi = [&] {
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  };
  if (InsideWrapper::active()) return pmpi();
  const InsideWrapper inside;
  return libcomm_mpi::intercept("MPI_Alltoall", comm, pmpi, [&](const Call& call) {
    RegularExchange x(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    if (const char* why = x.invalid()) return call.fallback(pmpi, why);
    const libcomm::Comm& c = call.comm();
    libcomm::AlltoallOptions opts;
    opts.check_args = libcomm_mpi::check_args();
    const auto requested = libcomm_mpi::settings().alltoall.get();
    Explanation why(requested);
    x.stage(c.size(), c.size(), 0, why);
    const auto ran = libcomm::alltoall(x.send, x.recv, x.block, c, requested, opts);
    call.route(libcomm::alltoall_algo_name(ran), why.text(ran.reason()));
    x.finish();
    return MPI_SUCCESS;
  });
}

extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const auto pmpi = [&] {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
  };
  if (InsideWrapper::active()) return pmpi();
  const InsideWrapper inside;
  return libcomm_mpi::intercept("MPI_Alltoallv", comm, pmpi, [&](const Call& call) {
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const auto rl = libcomm_mpi::layout_of(recvtype);
    const auto sl = in_place ? rl : libcomm_mpi::layout_of(sendtype);
    int p = 0;
    PMPI_Comm_size(comm, &p);
    if (!rl || !sl || recvcounts == nullptr || rdispls == nullptr || any_negative(recvcounts, p) ||
        (!in_place && (sendcounts == nullptr || sdispls == nullptr || any_negative(sendcounts, p))))
      return call.fallback(pmpi, kBadArguments);
    const libcomm::Comm& c = call.comm();
    libcomm::AlltoallvOptions opts;
    opts.check_args = libcomm_mpi::check_args();
    const auto requested = libcomm_mpi::settings().alltoallv.get();
    Explanation why(requested);
    // With MPI_IN_PLACE the data to send is the receive buffer's, described by the
    // receive arguments; it is copied out first because the exchange overwrites it.
    const void* sbuf = in_place ? recvbuf : sendbuf;
    const int* scounts = in_place ? recvcounts : sendcounts;
    const int* sdisp = in_place ? rdispls : sdispls;
    const MPI_Datatype stype = in_place ? recvtype : sendtype;
    const auto send = describe_side(sbuf, scounts, sdisp, *sl, p, in_place, 0);
    if (send.staged) {
      pack_side(send, sbuf, scounts, sdisp, stype, *sl);
      why.note(in_place ? "MPI_IN_PLACE: input copied first" : "send side packed (non-contiguous type or negative displacements)");
    }
    const auto recv = describe_side(recvbuf, recvcounts, rdispls, *rl, p, false, 1);
    if (recv.staged) why.note("receive side unpacked (non-contiguous type or negative displacements)");
    const auto ran = libcomm::alltoallv(send.base, send.counts, send.displs, recv.base,
                                        recv.counts, recv.displs, c, requested, opts);
    call.route(libcomm::alltoallv_algo_name(ran), why.text(ran.reason()));
    if (recv.staged) unpack_side(recv, recvbuf, recvcounts, rdispls, recvtype, *rl);
    return MPI_SUCCESS;
  });
}

extern "C" int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const auto pmpi = [&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  };
  if (InsideWrapper::active()) return pmpi();
  const InsideWrapper inside;
  return libcomm_mpi::intercept("MPI_Allgather", comm, pmpi, [&](const Call& call) {
    RegularExchange x(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    if (const char* why = x.invalid()) return call.fallback(pmpi, why);
    const libcomm::Comm& c = call.comm();
    libcomm::AllgatherOptions opts;
    opts.check_args = libcomm_mpi::check_args();
    opts.allow_fallback = true;
    const auto requested = libcomm_mpi::settings().allgather.get();
    Explanation why(requested);
    x.stage(c.size(), 1, c.rank(), why);  // in place: this rank's block is in recvbuf
    const auto ran = libcomm::allgather(x.send, x.recv, x.block, c, requested, opts);
    call.route(libcomm::allgather_algo_name(ran), why.text(ran.reason()));
    x.finish();
    return MPI_SUCCESS;
  });
}

extern "C" int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm) {
  const auto pmpi = [&] {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
  };
  if (InsideWrapper::active()) return pmpi();
  const InsideWrapper inside;
  return libcomm_mpi::intercept("MPI_Allgatherv", comm, pmpi, [&](const Call& call) {
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
    const libcomm::Comm& c = call.comm();
    libcomm::AllgatherOptions opts;
    opts.check_args = libcomm_mpi::check_args();
    opts.allow_fallback = true;
    const auto requested = libcomm_mpi::settings().allgather.get();
    Explanation why(requested);

    // libcomm places the blocks back to back in rank order: the user's buffer serves when
    // the displacements say the same, otherwise a staging buffer is copied out after.
    auto recv = describe_side(recvbuf, recvcounts, displs, *rl, p, false, 1);
    std::int64_t packed_at = 0;
    for (std::size_t r = 0; r < recv.counts.size() && !recv.staged; ++r) {
      recv.staged = recv.displs[r] != packed_at;
      packed_at += recv.counts[r];
    }
    if (recv.staged) {
      recv = describe_side(recvbuf, recvcounts, displs, *rl, p, true, 1);
      why.note("blocks not packed in rank order or non-contiguous type: staged");
    }
    const std::byte* send = nullptr;
    if (in_place || !sl->dense) {
      auto* staged = libcomm_mpi::staging(0, mine);
      if (in_place)
        libcomm_mpi::gather_elements(recvbuf, displs[me], recvcounts[me], recvtype, *rl, staged);
      else
        libcomm_mpi::gather_elements(sendbuf, 0, sendcount, sendtype, *sl, staged);
      send = staged;
      why.note(in_place ? "MPI_IN_PLACE: own block copied first" : "sendtype non-contiguous: packed");
    } else {
      send = libcomm_mpi::dense_at(sendbuf, *sl, 0);
    }
    const std::vector<std::size_t> counts(recv.counts.begin(), recv.counts.end());
    const auto ran = libcomm::allgatherv(send, mine, recv.base, counts, c, requested, opts);
    call.route(libcomm::allgather_algo_name(ran), why.text(ran.reason()));
    if (recv.staged) unpack_side(recv, recvbuf, recvcounts, displs, recvtype, *rl);
    return MPI_SUCCESS;
  });
}

extern "C" int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const auto pmpi = [&] {
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  };
  if (InsideWrapper::active()) return pmpi();
  const InsideWrapper inside;
  return libcomm_mpi::intercept("MPI_Reduce_scatter", comm, pmpi, [&](const Call& call) {
    int p = 0;
    PMPI_Comm_size(comm, &p);
    if (recvcounts == nullptr || any_negative(recvcounts, p)) return call.fallback(pmpi, kBadArguments);
    std::vector<std::size_t> counts(static_cast<std::size_t>(p));
    for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = static_cast<std::size_t>(recvcounts[r]);
    return reduce_scatter_common(call, pmpi, sendbuf, recvbuf, counts, datatype, op);
  });
}

extern "C" int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const auto pmpi = [&] {
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
  };
  if (InsideWrapper::active()) return pmpi();
  const InsideWrapper inside;
  return libcomm_mpi::intercept("MPI_Reduce_scatter_block", comm, pmpi, [&](const Call& call) {
    int p = 0;
    PMPI_Comm_size(comm, &p);
    if (recvcount < 0) return call.fallback(pmpi, kBadArguments);
    const std::vector<std::size_t> counts(static_cast<std::size_t>(p), static_cast<std::size_t>(recvcount));
    return reduce_scatter_common(call, pmpi, sendbuf, recvbuf, counts, datatype, op);
  });
}
