// The MPI library's own MPI_Alltoallv: the reference every test and benchmark compares with.
// Counts and displacements are bytes. When some count or displacement on some rank exceeds INT_MAX (decided collectively by the
// caller), the exchange runs as MPI_Alltoallw with, per peer, one datatype that carries the
// 64-bit byte offset and length itself (count 1, displacement 0).
#include <climits>
#include <vector>

#include "../runtime/mpi_bytes.hpp"
#include "alltoallv_internal.hpp"

namespace libcomm::detail {

bool native_fits_int(std::span<const std::int64_t> sc, std::span<const std::int64_t> sd,
                     std::span<const std::int64_t> rc, std::span<const std::int64_t> rd) {
  for (auto s : {sc, sd, rc, rd})
    for (std::int64_t v : s)
      if (v > INT_MAX) return false;
  return true;
}

namespace {

// One element of this type is `bytes` bytes at byte offset `offset` from the buffer.
MPI_Datatype block_type(std::size_t offset, std::size_t bytes) {
  const MpiBytes body(bytes);
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int len = body.count();
  MPI_Aint disp = static_cast<MPI_Aint>(offset);
  MPI_Datatype ty = body.type();
  check_mpi(MPI_Type_create_struct(1, &len, &disp, &ty, &t), "MPI_Type_create_struct");
  check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  return t;
}

}  // namespace

// The arguments of MPI_(I)alltoallv, or of MPI_(I)alltoallw when `large`; the types are
// freed with the object (a non-blocking call reads them until it completes).
struct NativeAlltoallvArgs {
  std::vector<int> sc, sd, rc, rd;
  std::vector<MPI_Datatype> st, rt;  // large: one type per peer
  bool large = false;

  NativeAlltoallvArgs(std::span<const std::int64_t> scount, std::span<const std::int64_t> sdispl,
                      std::span<const std::int64_t> rcount, std::span<const std::int64_t> rdispl,
                      bool large_counts)
      : large(large_counts) {
    const std::size_t p = scount.size();
    if (large) {
      sc.assign(p, 1);
      sd.assign(p, 0);
      for (std::size_t k = 0; k < p; ++k) {
        st.push_back(block_type(static_cast<std::size_t>(sdispl[k]), static_cast<std::size_t>(scount[k])));
        rt.push_back(block_type(static_cast<std::size_t>(rdispl[k]), static_cast<std::size_t>(rcount[k])));
      }
      return;
    }
    require(native_fits_int(scount, sdispl, rcount, rdispl),
            "native alltoallv: a count or displacement exceeds INT_MAX bytes; call with check_args on "
            "(or make a plan_alltoallv) so that every rank takes the large-count path");
    const auto ints = [](std::span<const std::int64_t> v) { return std::vector<int>(v.begin(), v.end()); };
    sc = ints(scount);
    sd = ints(sdispl);
    rc = ints(rcount);
    rd = ints(rdispl);
  }
  NativeAlltoallvArgs(const NativeAlltoallvArgs&) = delete;
  NativeAlltoallvArgs& operator=(const NativeAlltoallvArgs&) = delete;
  ~NativeAlltoallvArgs() {
    for (auto* v : {&st, &rt})
      for (auto& t : *v) MPI_Type_free(&t);
  }

  // Blocking (req null) or non-blocking.
  void run(const void* send, void* recv, MPI_Comm comm, MPI_Request* req) {
    if (large) {
      check_mpi(req ? MPI_Ialltoallw(send, sc.data(), sd.data(), st.data(), recv, sc.data(), sd.data(), rt.data(),
                                     comm, req)
                    : MPI_Alltoallw(send, sc.data(), sd.data(), st.data(), recv, sc.data(), sd.data(), rt.data(), comm),
                req ? "MPI_Ialltoallw" : "MPI_Alltoallw");
      return;
    }
    check_mpi(req ? MPI_Ialltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(), rd.data(), MPI_BYTE, comm, req)
                  : MPI_Alltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(), rd.data(), MPI_BYTE, comm),
              req ? "MPI_Ialltoallv" : "MPI_Alltoallv");
  }
};

void native_alltoallv(const std::byte* send, std::span<const std::int64_t> sc,
                      std::span<const std::int64_t> sd, std::byte* recv,
                      std::span<const std::int64_t> rc, std::span<const std::int64_t> rd,
                      MPI_Comm comm, bool large) {
  NativeAlltoallvArgs(sc, sd, rc, rd, large).run(send, recv, comm, nullptr);
}

std::function<void(const void*, void*, MPI_Request*)> native_ialltoallv(
    std::span<const std::int64_t> sc, std::span<const std::int64_t> sd, std::span<const std::int64_t> rc,
    std::span<const std::int64_t> rd, MPI_Comm comm, bool large) {
  auto args = std::make_shared<NativeAlltoallvArgs>(sc, sd, rc, rd, large);
  return [args, comm](const void* s, void* r, MPI_Request* q) { args->run(s, r, comm, q); };
}

namespace {

// What the MPI library runs: SMPI's default selector posts every message at once; Open MPI
// chooses by P alone between that and pairwise exchange (below 4 ranks, 64-127 and
// 256-1023: pairwise); MPICH posts at once; otherwise the cheaper of the two.
double predicted_time(const AlltoallvOp::Shape& s, const CostParams& c) {
  const double linear = alltoallv_cost::posted_at_once(s, c);
  const double pairwise = alltoallv_cost::ring_order_steps(s, c);  // (its long messages chain as direct's)
  switch (cost::mpi_library()) {
    case cost::MpiLibrary::Smpi:
    case cost::MpiLibrary::Mpich: return linear;
    case cost::MpiLibrary::OpenMpi: {
      const int p = s.p;
      const bool pair = p < 4 || (p >= 64 && p < 128) || (p >= 256 && p < 1024);
#ifdef LIBCOMM_SIMGRID
      // SMPI runs Open MPI's pairwise as its XOR pair on a power-of-two P (partners on the
      // node first), as the ring elsewhere (scripts/simulate.sh). A step of XOR pairs is a
      // matching: a delayed rank passes its delay to one rank a step, where the ring order's
      // sendrecv passes it to two, and about half as many long messages chain (simulated on
      // flat512 under pattern1 at 1 MiB: 4.6 against direct's 9.4 spikes' worth at 64 ranks,
      // 7 against 19.5 at 256).
      if (pair && cost::is_power_of_two(p)) {
        const double m = alltoallv_cost::mean(s);
        return cost::xor_exchange_rounds(layout_of(s), c, m) +
               std::max(1.0, alltoallv_cost::chained_spikes(s) / 2) * alltoallv_cost::spike(s, c) + cost::copy(c, m);
      }
#endif
      return pair ? pairwise : linear;
    }
    case cost::MpiLibrary::Other: break;
  }
  return std::min(linear, pairwise);
}

void run(const AlltoallvOp::Args& a, const AlltoallvOp::Shape& s, const Comm& comm) {
  native_alltoallv(static_cast<const std::byte*>(a.send), s.sc, s.sd, static_cast<std::byte*>(a.recv), s.rc, s.rd,
                   comm.mpi(), beyond_int(s));
}

std::shared_ptr<PlanState> plan(const PlanCall<AlltoallvOp>& call) {
  const AlltoallvOp::Shape& s = call.shape;
  return native_plan(call.comm, "native", call.choice.reason(),
                     native_ialltoallv(s.sc, s.sd, s.rc, s.rd, call.comm.mpi(), beyond_int(s)));
}

}  // namespace

extern const AlltoallvAlgorithm native_alltoallv_entry{
    .algo = AlltoallvAlgo::Native, .name = "native", .summary = "the MPI library's MPI_Alltoallv (reference)",
    .paper = "", .cost = predicted_time, .plan = plan, .run = run};

}  // namespace libcomm::detail
