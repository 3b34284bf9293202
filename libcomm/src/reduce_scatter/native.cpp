// native: the MPI library's MPI_Reduce_scatter (and MPI_Ireduce_scatter), the reference.
#include <algorithm>
#include <climits>

#include "../runtime/mpi_bytes.hpp"
#include "../runtime/plan_state.hpp"
#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

namespace {

// What MPI_(I)reduce_scatter takes: int counts, the datatype and the operation.
struct NativeArgs {
  std::vector<int> counts;
  MPI_Datatype type = MPI_DOUBLE;
  MPI_Op op = MPI_SUM;
  NativeArgs(const ReduceBlocks& b, MPI_Comm comm) : counts(b.count.begin(), b.count.end()) {
    int me = 0;
    MPI_Comm_rank(comm, &me);
    require(b.total <= static_cast<std::size_t>(INT_MAX),
            "reduce_scatter native: rank " + std::to_string(me) + ": " + std::to_string(b.total) +
                " elements exceed MPI_Reduce_scatter's int counts; use ring, d_cycles or reduce_spread");
    switch (b.type) {
      case ElemType::Double: type = MPI_DOUBLE; break;
      case ElemType::Float: type = MPI_FLOAT; break;
      case ElemType::ComplexDouble: type = MPI_C_DOUBLE_COMPLEX; break;
      case ElemType::Int: type = MPI_INT; break;
    }
    op = b.op == ReduceOp::Sum ? MPI_SUM : b.op == ReduceOp::Max ? MPI_MAX : MPI_MIN;
  }
};

void run(const ReduceScatterOp::Args& args, const ReduceScatterOp::Shape& s, const Comm& comm) {
  NativeArgs a(ReduceBlocks(s), comm.mpi());
  check_mpi(MPI_Reduce_scatter(args.send, args.recv, a.counts.data(), a.type, a.op, comm.mpi()), "MPI_Reduce_scatter");
}

std::shared_ptr<PlanState> plan(const PlanCall<ReduceScatterOp>& call) {
  // The counts live in the plan: MPI reads them until the operation completes.
  const MPI_Comm comm = call.comm.mpi();
  auto a = std::make_shared<NativeArgs>(ReduceBlocks(call.shape), comm);
  return native_plan(call.comm, "native", call.choice.reason(), [a, comm](const void* s, void* r, MPI_Request* q) {
    check_mpi(MPI_Ireduce_scatter(s, r, a->counts.data(), a->type, a->op, comm, q), "MPI_Ireduce_scatter");
  });
}

// Recursive halving (what MPI libraries run for commutative sums): ceil(log2 P) exchanges
// of half the remaining vector, each combined; other P fold into the largest power of two
// first.
double recursive_halving(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  int p2 = 1;
  while (p2 * 2 <= s.p) p2 *= 2;
  double t = 0, part = static_cast<double>(s.total);
  const double fold = cost::nodes_of_first(l, s.p - p2), cube = cost::nodes_of_first(l, p2);  // who sends
  if (p2 != s.p) t += cost::exchange_round(l, c, part, p2, fold) + cost::combine(c, part);
  for (int dist = p2 / 2; dist >= 1; dist /= 2) {
    part /= 2;
    t += cost::xor_round(l, c, part, dist, cube) + cost::combine(c, part);
  }
  if (p2 != s.p) t += cost::exchange_round(l, c, static_cast<double>(s.largest), p2, fold);
  return t;
}

// SMPI's default: the whole vector reduced to rank 0 (every rank's vector to it at once,
// combined there), then the blocks scattered from it.
double reduce_then_scatter(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  // (SMPI does not charge its own reductions' arithmetic: no combine term.)
  return cost::linear_gather(l, c, static_cast<double>(s.total)) + cost::linear_gather(l, c, static_cast<double>(s.largest));
}

// What the MPI library runs. Open MPI's fixed decision as SMPI's ompi selector copies it
// (coll_tuned_decision_fixed of the Open MPI 1.x-3.x era): recursive halving when the whole
// vector is at most 12 KiB, or at most 256 KiB on a power-of-two P, or P >= 0.0012 x bytes
// + 8; the ring beyond; reduce-then-scatter (SMPI's default) when a block is empty. A real
// Open MPI (4.x's tables) and MPICH choose between the ring and recursive halving too,
// taken there as the cheaper.
double predicted_time(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const auto library = cost::mpi_library();
  if (library == cost::MpiLibrary::Smpi) return reduce_then_scatter(s, c);
  const auto& ring = entry_of<ReduceScatterOp>(ReduceScatterAlgo::Ring);
#ifdef LIBCOMM_SIMGRID
  if (library == cost::MpiLibrary::OpenMpi) {
    const bool a_block_empty =
        s.equal ? s.largest == 0 : std::find(s.sizes.begin(), s.sizes.end(), std::size_t{0}) != s.sizes.end();
    if (a_block_empty) return reduce_then_scatter(s, c);
    CostParams free_combine = c;  // (SMPI does not charge its own reductions' arithmetic)
    free_combine.gamma = 0;
    const bool power_of_two = (s.p & (s.p - 1)) == 0;
    const auto bytes = static_cast<double>(s.total);
    const bool halving = bytes <= 12 * 1024 || (bytes <= 256 * 1024 && power_of_two) || s.p >= 0.0012 * bytes + 8;
    return halving ? recursive_halving(s, free_combine) : ring.cost(s, free_combine);
  }
#endif
  return std::min(ring.cost(s, c), recursive_halving(s, c));
}

}  // namespace

extern const ReduceScatterAlgorithm native_reduce_scatter{
    .algo = ReduceScatterAlgo::Native, .name = "native", .summary = "the MPI library's MPI_Reduce_scatter (reference)",
    .paper = "", .cost = predicted_time, .plan = plan, .run = run};

}  // namespace libcomm::detail
