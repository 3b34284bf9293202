// splitmix64's finaliser (Steele, Lea, Flood, OOPSLA 2014), the kernels' one hash: seeded
// matrix entries (dense.cpp) and traffic patterns (traffic.cpp) are it of their keys, so
// every rank computes the part it owns. (The apps have their own, apps/random.hpp: kernels
// are not installed.)
#pragma once

#include <cstdint>

namespace kernels::detail {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace kernels::detail
