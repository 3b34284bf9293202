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
#include "libcomm/comm.hpp"
#include "libcomm/cost_params.hpp"

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
// A Table 1 name, or "file:PATH" for a platform written by save_flat_platform (e.g. by
// commbench --calibrate). Throws Error naming the value and listing the valid names.
FlatPlatform flat_platform_from_name(std::string_view name);

// Platform files: "key = value" lines (name, ts_us, tc_td_us, tm_us), '#' comments.
// load_flat_platform throws Error naming the file and line of a missing, unknown,
// negative or non-finite value.
void save_flat_platform(const FlatPlatform& f, const std::string& path, const std::string& comment);
FlatPlatform load_flat_platform(const std::string& path);

// Weighted least squares y = intercept + slope x with weights 1 / y^2, so that every
// point counts by its relative error (a 0-byte and a 1 MiB time alike);
// rms_relative = sqrt(mean(((y - fit) / y)^2)). Points with y <= 0 get weight 1.
struct LineFit {
  double intercept = 0, slope = 0, rms_relative = 0;
};
LineFit fit_line_relative(std::span<const double> x, std::span<const double> y);

// Measures the flat model's parameters on the machine it runs on (collective over comm,
// at least 2 ranks; throws Error otherwise). Ts and tc + td: fit of the one-way time of a
// ping-pong between rank 0 and the last rank (the two most likely on different nodes)
// against the message size; tm: fit of a local memcpy by rank 0's node, out of cache (and
// the same copies in cache beside it, copy_in_cache_s). Each point is the
// median of `reps` timings (each timing averages several round trips). Every rank gets
// the same result. Times come from MPI_Wtime (simulated time under SimGrid).
struct FlatCalibration {
  FlatPlatform platform;          // name "calibrated"; td = tc + td as in the presets
  LineFit transfer, copy;         // seconds against bytes
  std::vector<double> sizes;      // bytes
  std::vector<double> one_way_s;  // median one-way time per size
  std::vector<double> copy_s;     // median memcpy time per size, out of cache
  std::vector<double> copy_in_cache_s;  // the same on buffers used again and again
  int peer = 1;                   // rank that answered the ping-pong
};
FlatCalibration calibrate_flat_platform(const Comm& comm, std::span<const std::size_t> sizes, int reps);
// Auto's cost parameters (libcomm/cost_params.hpp) on the machine it runs on: alpha, beta and
// copy from the flat calibration (rank 0 and the last rank: different nodes where the node
// map has several), alpha_intra and beta_intra from a ping-pong of rank 0 with another rank
// of its node (the inter-node figures when it has none), the posting overhead from bursts of
// empty messages, gamma from a local sum of doubles (the copy rate where a simulation with
// a simulated payload charges reductions so). Collective; every rank gets the same.
CostParams calibrate_cost_params(const Comm& comm, const FlatCalibration& flat, int reps);

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
