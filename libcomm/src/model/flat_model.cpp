// Flat cost model of paper 001, section 2 (eq. 1-4), Theorem 2 and Table 1.
#include <algorithm>

#include "libcomm/cost_model.hpp"

namespace libcomm {

const std::vector<FlatPlatform>& flat_platforms() {
  static const std::vector<FlatPlatform> all = {{"CM5", 85, 0.12, 0},
                                                {"SP2", 44, 0.035, 0},
                                                {"T3D", 38, 0.043, 0},
                                                {"T3E", 28, 0.006, 0},
                                                {"Myrinet", 68, 0.027, 0}};
  return all;
}

FlatPlatform flat_platform_from_name(std::string_view name) {
  if (name.starts_with("file:")) return load_flat_platform(std::string(name.substr(5)));
  std::string valid;
  for (const auto& f : flat_platforms()) {
    if (f.name == name) return f;
    valid += (valid.empty() ? "" : ", ") + f.name;
  }
  throw Error("unknown platform '" + std::string(name) + "' (valid: " + valid +
              ", or file:PATH written by commbench --calibrate)");
}

double flat_block_time_us(const FlatPlatform& f, int p, double m) {
  return p * (f.ts_us + m * (f.tc_td_us + f.tm_us));
}
double flat_nonblock_time_us(const FlatPlatform& f, int p, double m) {
  return p * m * f.tm_us + p * std::max({f.ts_us, m * f.tc_us(), m * f.td_us()});
}
double flat_irregular_block_us(const FlatPlatform& f, int p, double l, double fnc) {
  // eq. 3: P Ts_send + Lmax (tc + tm + fnc td); Ts_send taken as Ts.
  return p * f.ts_us + l * (f.tc_us() + f.tm_us + fnc * f.td_us());
}
double flat_irregular_nonblock_us(const FlatPlatform& f, int p, double l, double fnc) {
  return l * f.tm_us + std::max({p * f.ts_us, l * f.tc_us(), l * fnc * f.td_us()});
}
double four_stage_theorem2_us(const FlatPlatform& f, int p, double l) {
  int c = 1;
  while (c * c < p) ++c;
  return (4.0 * c + 2) * f.ts_us + 4.0 * (c + 1) * c * l / p * (f.tm_us + f.tc_td_us);
}

double predict_alltoallv_us(AlltoallvAlgo algo, AlltoallvMode mode, const FlatPlatform& f, int p,
                            std::span<const std::int64_t> counts, std::size_t esize) {
  algo = choose_alltoallv(algo, p);
  if (algo == AlltoallvAlgo::Native) algo = AlltoallvAlgo::Direct;
  const auto stats = simulate_alltoallv(algo, p, counts, esize);
  double worst = 0;
  for (const auto& s : stats) {
    double t = 0;
    for (const auto& st : s.stages) {
      const double bytes = static_cast<double>(st.received_bytes);
      if (mode == AlltoallvMode::Blocking)
        t +=
            st.steps * (f.ts_us + static_cast<double>(st.longest_message) * (f.tm_us + f.tc_td_us));
      else
        t += bytes * f.tm_us + std::max({st.steps * f.ts_us, bytes * f.tc_us(), bytes * f.td_us()});
    }
    worst = std::max(worst, t);
  }
  return worst;
}

}  // namespace libcomm
