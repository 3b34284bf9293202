#include "kernels/fft_plan.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace kernels {

namespace {

std::vector<fftw_iodim64> to_iodims(const std::vector<FftDim>& dims) {
  std::vector<fftw_iodim64> out;
  for (const auto& d : dims) out.push_back({d.n, d.in_stride, d.out_stride});
  return out;
}

bool any_empty(const std::vector<FftDim>& dims, const std::vector<FftDim>& batch) {
  for (const auto& d : dims)
    if (d.n <= 0) return true;
  for (const auto& d : batch)
    if (d.n <= 0) return true;
  return false;
}

// 5 n log2 n per complex transform of n = product of dims points (2.5 for real data),
// times the number of transforms in the batch.
double transform_flops(const std::vector<FftDim>& dims, const std::vector<FftDim>& batch,
                     bool real_data) {
  double n = 1, transforms = 1;
  for (const auto& d : dims) n *= static_cast<double>(d.n);
  for (const auto& d : batch) transforms *= static_cast<double>(d.n);
  return (real_data ? 2.5 : 5.0) * n * std::log2(n) * transforms;
}

fftw_plan must(fftw_plan p, const char* what) {
  if (!p) throw std::runtime_error(std::string("FFTW could not plan the ") + what + " transform");
  return p;
}

}  // namespace

FftPlan FftPlan::dft(FftKind kind, const std::vector<FftDim>& dims,
                     const std::vector<FftDim>& batch, cplx* in, cplx* out, unsigned flags) {
  if (any_empty(dims, batch)) return {};
  const auto d = to_iodims(dims);
  const auto b = to_iodims(batch);
  const int sign = kind == FftKind::Forward ? FFTW_FORWARD : FFTW_BACKWARD;
  return FftPlan(must(fftw_plan_guru64_dft(static_cast<int>(d.size()), d.data(),
                                           static_cast<int>(b.size()), b.data(),
                                           reinterpret_cast<fftw_complex*>(in),
                                           reinterpret_cast<fftw_complex*>(out), sign, flags),
                      "complex"),
                 transform_flops(dims, batch, false));
}

FftPlan FftPlan::r2c(const std::vector<FftDim>& dims, const std::vector<FftDim>& batch,
                     double* in, cplx* out, unsigned flags) {
  if (any_empty(dims, batch)) return {};
  const auto d = to_iodims(dims);
  const auto b = to_iodims(batch);
  return FftPlan(must(fftw_plan_guru64_dft_r2c(static_cast<int>(d.size()), d.data(),
                                               static_cast<int>(b.size()), b.data(), in,
                                               reinterpret_cast<fftw_complex*>(out), flags),
                      "real-to-complex"),
                 transform_flops(dims, batch, true));
}

FftPlan FftPlan::c2r(const std::vector<FftDim>& dims, const std::vector<FftDim>& batch,
                     cplx* in, double* out, unsigned flags) {
  if (any_empty(dims, batch)) return {};
  const auto d = to_iodims(dims);
  const auto b = to_iodims(batch);
  return FftPlan(must(fftw_plan_guru64_dft_c2r(static_cast<int>(d.size()), d.data(),
                                               static_cast<int>(b.size()), b.data(),
                                               reinterpret_cast<fftw_complex*>(in), out, flags),
                      "complex-to-real"),
                 transform_flops(dims, batch, true));
}

FftPlan& FftPlan::operator=(FftPlan&& o) noexcept {
  std::swap(plan_, o.plan_);
  std::swap(nominal_flops_, o.nominal_flops_);
  return *this;
}

FftPlan::~FftPlan() {
  if (plan_) fftw_destroy_plan(plan_);
}

unsigned fft_plan_flags_from_name(const std::string& name) {
  if (name == "estimate") return FFTW_ESTIMATE;
  if (name == "measure") return FFTW_MEASURE;
  if (name == "patient") return FFTW_PATIENT;
  if (name == "exhaustive") return FFTW_EXHAUSTIVE;
  throw std::invalid_argument("unknown FFTW planner level '" + name +
                              "' (valid: estimate, measure, patient, exhaustive)");
}

}  // namespace kernels
