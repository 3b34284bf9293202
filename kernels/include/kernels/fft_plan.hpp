// FFTW3 plans for the local work of a distributed 3-D FFT: batched, strided 1-D and 2-D
// complex transforms and real <-> complex ones, planned once on fixed buffers and executed
// many times (FFTW's guru64 interface, so any stride and batch layout fits one plan).
#pragma once

#include <fftw3.h>

#include <complex>
#include <string>
#include <utility>
#include <cstddef>
#include <vector>

namespace kernels {

using cplx = std::complex<double>;

// One dimension of a transform or of its batch: length, input and output stride
// (in elements of the respective array type).
struct FftDim {
  std::ptrdiff_t n = 1, in_stride = 1, out_stride = 1;
};

enum class FftKind { Forward, Backward, RealToComplex, ComplexToReal };

// Owns one fftw_plan. Empty (no-op execute) when the batch or a dimension has length 0.
class FftPlan {
 public:
  FftPlan() = default;
  // Complex-to-complex, sign by kind (Forward = FFTW_FORWARD, e^{-2 pi i jk/n}).
  static FftPlan dft(FftKind kind, const std::vector<FftDim>& dims,
                     const std::vector<FftDim>& batch, cplx* in, cplx* out, unsigned flags);
  // Real-to-complex: the last dim's real length is n, its complex length n/2+1.
  static FftPlan r2c(const std::vector<FftDim>& dims, const std::vector<FftDim>& batch,
                     double* in, cplx* out, unsigned flags);
  static FftPlan c2r(const std::vector<FftDim>& dims, const std::vector<FftDim>& batch,
                     cplx* in, double* out, unsigned flags);

  FftPlan(FftPlan&& o) noexcept : plan_(o.plan_), nominal_flops_(o.nominal_flops_) {
    o.plan_ = nullptr;
    o.nominal_flops_ = 0;
  }
  FftPlan& operator=(FftPlan&& o) noexcept;
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
  ~FftPlan();

  void execute() const {
    if (plan_) fftw_execute(plan_);
  }
  bool empty() const { return plan_ == nullptr; }
  // Nominal floating-point operations of one execute(), in the convention benchFFT and
  // the fft3d GFlop/s column use: 5 n log2 n per complex transform of n points, half that
  // for real ones, times the batch. (fftw_flops is no substitute: it counts a SIMD
  // instruction once.) 0 if empty.
  double nominal_flops() const { return nominal_flops_; }

 private:
  FftPlan(fftw_plan p, double nominal_flops) : plan_(p), nominal_flops_(nominal_flops) {}
  fftw_plan plan_ = nullptr;
  double nominal_flops_ = 0;
};

// FFTW planner rigour by name: "estimate", "measure", "patient", "exhaustive".
// Throws std::invalid_argument naming the valid values.
unsigned fft_plan_flags_from_name(const std::string& name);

// 64-byte aligned storage (fftw_malloc) of n elements of T, freed on destruction.
template <class T>
class FftBuffer {
 public:
  FftBuffer() = default;
  explicit FftBuffer(std::size_t n)
      : data_(static_cast<T*>(fftw_malloc(sizeof(T) * (n ? n : 1)))), size_(n) {}
  FftBuffer(FftBuffer&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  FftBuffer& operator=(FftBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~FftBuffer() {
    if (data_) fftw_free(data_);
  }
  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kernels
