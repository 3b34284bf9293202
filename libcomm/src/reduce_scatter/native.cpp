// The MPI library's MPI_Reduce_scatter: the reference.
#include <climits>

#include "../core/mpi_bytes.hpp"
#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

void native_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b, MPI_Comm comm) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  require(b.total <= static_cast<std::size_t>(INT_MAX),
          "reduce_scatter native: rank " + std::to_string(me) + ": " + std::to_string(b.total) +
              " elements exceed MPI_Reduce_scatter's int counts; use ring, d_cycles or reduce_spread");
  std::vector<int> counts(b.count.begin(), b.count.end());
  MPI_Datatype t = MPI_DOUBLE;
  switch (b.type) {
    case ElemType::Double: t = MPI_DOUBLE; break;
    case ElemType::Float: t = MPI_FLOAT; break;
    case ElemType::ComplexDouble: t = MPI_C_DOUBLE_COMPLEX; break;
    case ElemType::Int: t = MPI_INT; break;
  }
  const MPI_Op op = b.op == ReduceOp::Sum ? MPI_SUM : b.op == ReduceOp::Max ? MPI_MAX : MPI_MIN;
  check_mpi(MPI_Reduce_scatter(send, recv, counts.data(), t, op, comm), "MPI_Reduce_scatter");
}

}  // namespace libcomm::detail
