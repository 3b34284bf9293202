// The "flat" communication model of paper 001 (section 2): a message of m bytes costs a
// start-up Ts plus m (tm + tc + td); Table 1's platforms as presets; eq. 1-4, Theorem 2,
// and a per-algorithm prediction from the simulated stage figures.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/alltoallv.hpp"

namespace libcomm {

struct FlatPlatform {
  std::string name;
  double ts_us = 0;     // T_s = T_s_send + T_s_recv (Table 1: "T_d")
  double tc_td_us = 0;  // t_c + t_d per byte (Table 1)
  double tm_us = 0;     // t_m per byte (local copy; not in Table 1, 0 in the presets)
  // Split of tc + td for the non-blocking pipeline of eq. 2 and 4 (Table 1 gives the sum):
  // the presets take td = tc + td, tc = 0.
  double tc_us() const { return 0.0; }
  double td_us() const { return tc_td_us; }
};

// Table 1: CM5, SP2, T3D, T3E, Myrinet.
const std::vector<FlatPlatform>& flat_platforms();
// Throws Error naming the value and listing the valid names.
FlatPlatform flat_platform_from_name(std::string_view name);

// Eq. 1 and 2: a regular all-to-all of m-byte messages among P nodes.
double flat_block_time_us(const FlatPlatform& f, int nprocs, double m_bytes);
double flat_nonblock_time_us(const FlatPlatform& f, int nprocs, double m_bytes);
// Eq. 3 and 4: irregular, with L_max bytes and node-contention factors (>= 1).
double flat_irregular_block_us(const FlatPlatform& f, int nprocs, double lmax_bytes,
                               double fnc_b = 1);
double flat_irregular_nonblock_us(const FlatPlatform& f, int nprocs, double lmax_bytes,
                                  double fnc_nb = 1);
// Theorem 2: (4 ceil(sqrt P) + 2) Ts + 4 (ceil(sqrt P) + 1) ceil(sqrt P) L_max / P (tm + tc + td).
double four_stage_theorem2_us(const FlatPlatform& f, int nprocs, double lmax_bytes);

// Prediction of one algorithm on a P x P count matrix (elements) with the method of
// Theorem 2's proof: per stage, blocking: steps x (Ts + longest message x (tm + tc + td));
// non-blocking: received bytes x tm + max(steps x Ts, bytes x tc, bytes x td) (eq. 2);
// stages add up; the slowest rank counts. Native is predicted as direct.
double predict_alltoallv_us(AlltoallvAlgo algo, AlltoallvMode mode, const FlatPlatform& f,
                            int nprocs, std::span<const std::int64_t> counts,
                            std::size_t element_bytes);

}  // namespace libcomm
