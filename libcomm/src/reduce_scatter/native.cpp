// The MPI library's MPI_Reduce_scatter (and MPI_Ireduce_scatter): the reference.
#include <climits>

#include "../core/mpi_bytes.hpp"
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

}  // namespace

void native_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b, MPI_Comm comm) {
  NativeArgs a(b, comm);
  check_mpi(MPI_Reduce_scatter(send, recv, a.counts.data(), a.type, a.op, comm), "MPI_Reduce_scatter");
}

std::function<void(const void*, void*, MPI_Request*)> native_ireduce_scatter(const ReduceBlocks& b,
                                                                             MPI_Comm comm) {
  // The counts live in the plan: MPI reads them until the operation completes.
  auto a = std::make_shared<NativeArgs>(b, comm);
  return [a, comm](const void* s, void* r, MPI_Request* q) {
    check_mpi(MPI_Ireduce_scatter(s, r, a->counts.data(), a->type, a->op, comm, q), "MPI_Ireduce_scatter");
  };
}

}  // namespace libcomm::detail
