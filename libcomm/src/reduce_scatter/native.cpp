// native: the MPI library's MPI_Reduce_scatter (and MPI_Ireduce_scatter), the reference.
#include <algorithm>
#include <climits>

#include "../algorithm/decision_table.hpp"
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
  const int p2 = cost::power_of_two_at_most(s.p);
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

// Open MPI's butterfly (Open MPI 4's choice for most sizes): the fold of P into a power of
// two P' (rank 2i to 2i + 1), log2 P' exchanges of half the remaining vector from the
// nearest partner (XOR 1, 2, ...) outward, then every rank swaps its finished block with the
// rank of its bit-reversed number (mostly on another node), and the folded ranks get theirs.
double butterfly(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  const int p2 = cost::power_of_two_at_most(s.p);
  double t = 0, part = static_cast<double>(s.total);
  const double fold = cost::nodes_of_first(l, 2 * (s.p - p2)), block = static_cast<double>(s.largest);
  if (p2 != s.p) t += cost::exchange_round(l, c, part, 1, fold) + cost::combine(c, part);
  for (int dist = 1; dist < p2; dist *= 2) {
    part /= 2;
    t += cost::xor_round(l, c, part, dist) + cost::combine(c, part);
  }
  if (p2 > 2) t += cost::xor_round(l, c, block, p2 / 2);  // (at P' = 2 both numbers mirror to themselves)
  if (p2 != s.p) t += cost::exchange_round(l, c, block, 1, fold);
  return t;
}

// Open MPI's fixed decision for a commutative operation (coll/tuned, Open MPI 4.1 on;
// SimGrid's ompi selector copies it), by P and the whole vector's bytes: reduce-then-scatter
// (its "non-overlapping"), recursive halving, the ring or the butterfly. (SimGrid's copy
// comments out its test for empty blocks: they change nothing.)
double open_mpi_time(const ReduceScatterOp::Shape& s, const CostParams& c) {
  enum Pick { ReduceThenScatter, Halving, Ring, Butterfly };
  using cost::kAnySize;
  static const cost::DecisionBand<Pick> table[] = {
      {4, {{65536, Ring}, {131072, Butterfly}, {kAnySize, Ring}}},
      {8, {{8, ReduceThenScatter}, {262144, Halving}, {kAnySize, Ring}}},
      {32, {{262144, Halving}, {kAnySize, Ring}}},
      {64, {{64, ReduceThenScatter}, {2048, Halving}, {524288, Butterfly}, {kAnySize, Ring}}},
      {128, {{256, ReduceThenScatter}, {512, Halving}, {2048, Butterfly}, {4096, Halving}, {kAnySize, Butterfly}}},
      {256, {{256, ReduceThenScatter}, {512, Halving}, {kAnySize, Butterfly}}},
      {512, {{256, ReduceThenScatter}, {1024, Halving}, {kAnySize, Butterfly}}},
      {1024, {{512, ReduceThenScatter}, {2048, Halving}, {8192, Butterfly}, {16384, Halving}, {kAnySize, Butterfly}}},
      {2048, {{512, ReduceThenScatter}, {4096, Halving}, {16384, Butterfly}, {32768, Halving}, {kAnySize, Butterfly}}},
      {4096, {{512, ReduceThenScatter}, {4096, Halving}, {kAnySize, Butterfly}}},
      {INT_MAX, {{1024, ReduceThenScatter}, {8192, Halving}, {kAnySize, Butterfly}}}};
  const Pick pick = cost::decide(table, s.p, static_cast<double>(s.total), Butterfly);
  if (pick == ReduceThenScatter) return reduce_then_scatter(s, c);
#ifdef LIBCOMM_SIMGRID
  // SMPI charges neither its own reductions' arithmetic nor its copies.
  CostParams own = c;
  own.gamma = 0;
  const double copies = 0;
#else
  // A real Open MPI's halving, ring and butterfly first copy the whole vector into a buffer
  // of their own; the ring and the butterfly copy the finished block out at the end
  // (coll/base's reduce_scatter). Measured at 2 ranks, 1 MiB blocks: 574 us against 169 us
  // for libcomm's ring (docs/results/auto.md).
  const CostParams& own = c;
  const double copies =
      cost::copy(c, static_cast<double>(s.total)) + (pick == Halving ? 0.0 : cost::copy(c, static_cast<double>(s.largest)));
#endif
  switch (pick) {
    case Halving: return recursive_halving(s, own) + copies;
    case Ring: return entry_of<ReduceScatterOp>(ReduceScatterAlgo::Ring).cost(s, own) + copies;
    default: return butterfly(s, own) + copies;
  }
}

// What the MPI library runs: SMPI's default reduces to rank 0 and scatters; Open MPI (real,
// or SimGrid's ompi selector) its table above. MPICH and others choose among the ring,
// recursive halving and the butterfly, taken here as the cheapest.
double predicted_time(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const auto library = cost::mpi_library();
  if (library == cost::MpiLibrary::Smpi) return reduce_then_scatter(s, c);
  if (library == cost::MpiLibrary::OpenMpi) return open_mpi_time(s, c);
  const auto& ring = entry_of<ReduceScatterOp>(ReduceScatterAlgo::Ring);
  return std::min({ring.cost(s, c), recursive_halving(s, c), butterfly(s, c)});
}

}  // namespace

extern const ReduceScatterAlgorithm native_reduce_scatter{
    .algo = ReduceScatterAlgo::Native, .name = "native", .summary = "the MPI library's MPI_Reduce_scatter (reference)",
    .paper = "", .cost = predicted_time, .plan = plan, .run = run};

}  // namespace libcomm::detail
