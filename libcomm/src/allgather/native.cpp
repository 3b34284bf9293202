// native: the MPI library's MPI_Allgather / MPI_Allgatherv (and their non-blocking forms),
// the reference.
#include <climits>

#include "../algorithm/decision_table.hpp"
#include "../runtime/mpi_bytes.hpp"
#include "../runtime/plan_state.hpp"
#include "allgather_internal.hpp"

namespace libcomm::detail {

namespace {

// MPI_Allgatherv's int counts and displacements (unequal blocks).
struct IntLayout {
  std::vector<int> count, displ;
  IntLayout(const Blocks& b, MPI_Comm comm) : count(b.count.size()), displ(b.count.size()) {
    int me = 0;
    MPI_Comm_rank(comm, &me);
    require(b.total <= static_cast<std::size_t>(INT_MAX),
            "allgather native: rank " + std::to_string(me) + ": unequal counts adding up to " +
                std::to_string(b.total) + " bytes exceed MPI_Allgatherv's int displacements; use ring, "
                "d_cycles or butterfly");
    for (std::size_t r = 0; r < count.size(); ++r) {
      count[r] = static_cast<int>(b.count[r]);
      displ[r] = static_cast<int>(b.displ[r]);
    }
  }
};

void run(const AllgatherOp::Args& a, const AllgatherOp::Shape& s, const Comm& comm) {
  if (s.equal) {
    const MpiBytes block(s.largest);
    check_mpi(MPI_Allgather(a.send, block.count(), block.type(), a.recv, block.count(), block.type(), comm.mpi()),
              "MPI_Allgather");
    return;
  }
  const IntLayout l(Blocks(s.sizes), comm.mpi());
  check_mpi(MPI_Allgatherv(a.send, l.count[static_cast<std::size_t>(comm.rank())], MPI_BYTE, a.recv, l.count.data(),
                           l.displ.data(), MPI_BYTE, comm.mpi()),
            "MPI_Allgatherv");
}

std::shared_ptr<PlanState> plan(const PlanCall<AllgatherOp>& call) {
  const MPI_Comm comm = call.comm.mpi();
  if (call.shape.equal) {
    const std::size_t n = call.shape.largest;
    return native_plan(call.comm, "native", call.choice.reason(), [n, comm](const void* s, void* r, MPI_Request* q) {
      const MpiBytes block(n);  // freeing the type while the operation is pending is allowed
      check_mpi(MPI_Iallgather(s, block.count(), block.type(), r, block.count(), block.type(), comm, q),
                "MPI_Iallgather");
    });
  }
  // The layout lives in the plan: MPI reads the arrays until the operation completes.
  auto l = std::make_shared<const IntLayout>(Blocks(call.shape.sizes), comm);
  const auto me = static_cast<std::size_t>(call.comm.rank());
  return native_plan(call.comm, "native", call.choice.reason(), [l, me, comm](const void* s, void* r, MPI_Request* q) {
    check_mpi(MPI_Iallgatherv(s, l->count[me], MPI_BYTE, r, l->count.data(), l->displ.data(), MPI_BYTE, comm, q),
              "MPI_Iallgatherv");
  });
}

// Open MPI's fixed decision (coll/tuned, Open MPI 4.1 on; SimGrid's ompi selector copies
// it), its table by P and block: recursive doubling or Bruck (log2 P rounds: the
// butterfly's cost; at P = 2 its two-process exchange, the same one round), the neighbour
// exchange (a block with one neighbour, then P / 2 - 1 rounds of two blocks; even P, else
// the ring) or the ring. (At P >= 1024 the table alternates recursive doubling and Bruck
// below 4 KiB.)
double open_mpi_time(const AllgatherOp::Shape& s, const CostParams& c) {
  enum Pick { LogRounds, Neighbour, Ring };
  using cost::kAnySize;
  static const cost::DecisionBand<Pick> table[] = {
      {32, {{kAnySize, LogRounds}}},
      {64, {{1024, LogRounds}, {65536, Neighbour}, {kAnySize, Ring}}},
      {128, {{512, LogRounds}, {65536, Neighbour}, {kAnySize, Ring}}},
      {256, {{512, LogRounds}, {131072, Neighbour}, {524288, Ring}, {1048576, Neighbour}, {kAnySize, Ring}}},
      {512, {{1024, LogRounds}, {131072, Neighbour}, {524288, Ring}, {1048576, Neighbour}, {kAnySize, Ring}}},
      {1024, {{2048, LogRounds}, {kAnySize, Neighbour}}},
      {INT_MAX, {{4096, LogRounds}, {kAnySize, Neighbour}}}};
  const double b = static_cast<double>(s.largest);
  const Pick pick = cost::decide(table, s.p, b, Ring);
  const double ring = entry_of<AllgatherOp>(AllgatherAlgo::Ring).cost(s, c);
  if (pick == LogRounds) return entry_of<AllgatherOp>(AllgatherAlgo::Butterfly).cost(s, c);
  if (pick == Ring || s.p % 2) return ring;
  const Layout l = layout_of(s);
  return cost::exchange_round(l, c, b, 1) + (s.p / 2 - 1) * cost::exchange_round(l, c, 2 * b, 1);
}

// What the MPI library runs: SMPI's default selector posts every block to every rank at
// once (its non-blocking linear allgather); Open MPI (real, or SimGrid's ompi selector) its
// table above; MPICH chooses among the ring, recursive doubling and Bruck (both log2 P
// steps, the butterfly's cost), taken here as the cheaper of the two, as for another MPI.
double predicted_time(const AllgatherOp::Shape& s, const CostParams& c) {
  if (cost::mpi_library() == cost::MpiLibrary::OpenMpi) return open_mpi_time(s, c);
  if (cost::mpi_library() == cost::MpiLibrary::Smpi)
    return cost::all_at_once(layout_of(s), c, static_cast<double>(s.largest)) + cost::copy(c, s.largest);
  return std::min(entry_of<AllgatherOp>(AllgatherAlgo::Ring).cost(s, c),
                  entry_of<AllgatherOp>(AllgatherAlgo::Butterfly).cost(s, c));
}

}  // namespace

extern const AllgatherAlgorithm native_allgather{.algo = AllgatherAlgo::Native, .name = "native",
                                                 .summary = "the MPI library's MPI_Allgather(v) (reference)",
                                                 .paper = "", .cost = predicted_time, .plan = plan, .run = run};

}  // namespace libcomm::detail
