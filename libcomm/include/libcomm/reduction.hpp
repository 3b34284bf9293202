// What a reduction combines: the element types and operations of libcomm's reductions,
// and the local combiner the executor's Reduce steps run (libcomm/program.hpp).
#pragma once

#include <complex>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace libcomm {

enum class ReduceOp { Sum, Max, Min };
enum class ElemType { Double, Float, ComplexDouble, Int };

template <class T>
constexpr ElemType elem_type_of() {
  if constexpr (std::is_same_v<T, double>) return ElemType::Double;
  else if constexpr (std::is_same_v<T, float>) return ElemType::Float;
  else if constexpr (std::is_same_v<T, std::complex<double>>) return ElemType::ComplexDouble;
  else {
    static_assert(std::is_same_v<T, int>, "reduce_scatter: double, float, complex<double> or int");
    return ElemType::Int;
  }
}
std::size_t elem_size(ElemType t);
std::string_view elem_type_name(ElemType t);
std::string_view reduce_op_name(ReduceOp op);
ReduceOp reduce_op_from_name(std::string_view name);  // "sum" | "max" | "min"
ElemType elem_type_from_name(std::string_view name);  // "double" | "float" | "complex" | "int"

// inout[k] = in[k] op inout[k] for n elements (the local combiner; a typed functor).
// Throws Error for max/min on complex double (no order).
void reduce_local(const void* in, void* inout, std::size_t n, ElemType type, ReduceOp op);

}  // namespace libcomm
