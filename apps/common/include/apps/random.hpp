// Seeded random numbers that every rank can regenerate without communication.
#pragma once

#include <cstdint>

namespace apps {

// splitmix64's finaliser (Steele, Lea, Flood, OOPSLA 2014): a bijection of 64-bit words
// whose outputs of consecutive inputs look independent. A value keyed by (seed, stream,
// index) is splitmix64 of them mixed, so any rank computes the piece it owns.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The seed of stream `stream` (a rank, say) of a run seeded `seed`, for std::mt19937_64
// and the like: distinct streams for distinct ranks, the same on every run.
inline std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  return splitmix64(seed * 1000003ULL + stream);
}

}  // namespace apps
