#include "validation.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "libcomm/error.hpp"

namespace fft3d {

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Deterministic value in [-1, 1) of a grid point and component (splitmix64).
double noise(std::size_t x, std::size_t y, std::size_t z, int comp) {
  std::uint64_t h = (static_cast<std::uint64_t>(x) * 0x9E3779B97F4A7C15ULL) ^
                    (static_cast<std::uint64_t>(y) * 0xC2B2AE3D27D4EB4FULL) ^
                    (static_cast<std::uint64_t>(z) * 0x165667B19E3779F9ULL) ^
                    (static_cast<std::uint64_t>(comp) << 61);
  h += 0x9E3779B97F4A7C15ULL;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

struct Wave {
  std::array<std::size_t, 3> k;  // mode, reduced modulo the grid
  cplx amp;
};

// Three waves with distinct, axis-asymmetric modes, so a transpose that swaps axes or
// misplaces a block moves a spike.
std::vector<Wave> waves(const Extent& g) {
  auto m = [](long k, std::size_t n) {
    const long nn = static_cast<long>(n);
    return static_cast<std::size_t>(((k % nn) + nn) % nn);
  };
  return {{{m(1, g.nx), m(2, g.ny), m(3, g.nz)}, {1.0, 0.0}},
          {{m(static_cast<long>(g.nx / 2), g.nx), m(-1, g.ny), m(static_cast<long>(g.nz / 3), g.nz)},
           {0.5, -0.25}},
          {{m(-3, g.nx), m(static_cast<long>(g.ny / 3) + 1, g.ny), m(5, g.nz)}, {0.0, 0.75}}};
}

// e^{2 pi i k.x / N} with the phase reduced exactly before the sine/cosine.
cplx wave_value(const Wave& w, const Extent& g, std::size_t x, std::size_t y, std::size_t z) {
  const double f = static_cast<double>(w.k[0] * x % g.nx) / static_cast<double>(g.nx) +
                   static_cast<double>(w.k[1] * y % g.ny) / static_cast<double>(g.ny) +
                   static_cast<double>(w.k[2] * z % g.nz) / static_cast<double>(g.nz);
  return w.amp * cplx(std::cos(kTwoPi * f), std::sin(kTwoPi * f));
}

template <class T, class Value>
void fill_box(const Box& box, T* out, Value value) {
  for (std::size_t i = 0; i < box.n[0]; ++i)
    for (std::size_t j = 0; j < box.n[1]; ++j)
      for (std::size_t k = 0; k < box.n[2]; ++k) {
        const std::array<std::size_t, 3> c{box.lo[0] + i, box.lo[1] + j, box.lo[2] + k};
        out[box.local_index(c)] = value(c[0], c[1], c[2]);
      }
}

template <class T>
std::vector<T> gather_impl(const T* local, const Box& box, const std::array<std::size_t, 3>& dims,
                           MPI_Comm comm, int root) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  // Box descriptions: lo[3], n[3], order[3] as 64-bit values.
  std::array<long long, 9> desc{};
  for (int a = 0; a < 3; ++a) {
    desc[a] = static_cast<long long>(box.lo[a]);
    desc[3 + a] = static_cast<long long>(box.n[a]);
    desc[6 + a] = box.order[a];
  }
  std::vector<long long> all(rank == root ? 9 * static_cast<std::size_t>(p) : 0);
  MPI_Gather(desc.data(), 9, MPI_LONG_LONG, all.data(), 9, MPI_LONG_LONG, root, comm);
  const std::size_t bytes = box.count() * sizeof(T);
  libcomm::require(bytes <= (std::size_t{1} << 30),
                   "gather: rank " + std::to_string(rank) + ": box too large to gather");
  std::vector<int> counts(rank == root ? p : 0), displs(rank == root ? p : 0);
  std::vector<Box> boxes(rank == root ? p : 0);
  std::size_t total = 0;
  if (rank == root) {
    for (int s = 0; s < p; ++s) {
      Box& b = boxes[s];
      for (int a = 0; a < 3; ++a) {
        b.lo[a] = static_cast<std::size_t>(all[9 * s + a]);
        b.n[a] = static_cast<std::size_t>(all[9 * s + 3 + a]);
        b.order[a] = static_cast<int>(all[9 * s + 6 + a]);
      }
      counts[s] = static_cast<int>(b.count() * sizeof(T));
      displs[s] = static_cast<int>(total);
      total += b.count() * sizeof(T);
      libcomm::require(total <= (std::size_t{1} << 31) - 1, "gather: grid too large to gather");
    }
  }
  std::vector<T> packed(rank == root ? total / sizeof(T) : 0);
  MPI_Gatherv(local, static_cast<int>(bytes), MPI_BYTE, packed.data(), counts.data(),
              displs.data(), MPI_BYTE, root, comm);
  std::vector<T> global;
  if (rank != root) return global;
  global.assign(dims[0] * dims[1] * dims[2], T{});
  for (int s = 0; s < p; ++s) {
    const Box& b = boxes[s];
    const T* src = packed.data() + displs[s] / static_cast<int>(sizeof(T));
    for (std::size_t i = 0; i < b.n[0]; ++i)
      for (std::size_t j = 0; j < b.n[1]; ++j)
        for (std::size_t k = 0; k < b.n[2]; ++k) {
          const std::array<std::size_t, 3> c{b.lo[0] + i, b.lo[1] + j, b.lo[2] + k};
          global[(c[0] * dims[1] + c[1]) * dims[2] + c[2]] = src[b.local_index(c)];
        }
  }
  return global;
}

template <class T>
double roundtrip_impl(const T* back, const T* input, std::size_t n, double scale, MPI_Comm comm) {
  double m[2] = {0, 0};  // max |diff|, max |input|
  for (std::size_t i = 0; i < n; ++i) {
    m[0] = std::max(m[0], std::abs(back[i] * scale - input[i]));
    m[1] = std::max(m[1], std::abs(input[i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, comm);
  return m[1] > 0 ? m[0] / m[1] : m[0];
}

}  // namespace

void fill_input(Signal s, const Extent& g, const Box& box, cplx* out) {
  if (s == Signal::Random)
    return fill_box(box, out, [](std::size_t x, std::size_t y, std::size_t z) {
      return cplx(noise(x, y, z, 0), noise(x, y, z, 1));
    });
  const auto w = waves(g);
  fill_box(box, out, [&](std::size_t x, std::size_t y, std::size_t z) {
    cplx v = 0;
    for (const auto& wave : w) v += wave_value(wave, g, x, y, z);
    return v;
  });
}

void fill_input(Signal s, const Extent& g, const Box& box, double* out) {
  if (s == Signal::Random)
    return fill_box(box, out,
                    [](std::size_t x, std::size_t y, std::size_t z) { return noise(x, y, z, 0); });
  const auto w = waves(g);
  fill_box(box, out, [&](std::size_t x, std::size_t y, std::size_t z) {
    double v = 0;
    for (const auto& wave : w) v += wave_value(wave, g, x, y, z).real();
    return v;
  });
}

Spectrum plane_wave_spectrum(const Extent& g, bool r2c) {
  Spectrum s;
  const double n = static_cast<double>(g.total());
  const std::size_t nzc = r2c ? g.nz / 2 + 1 : g.nz;
  auto add = [&](std::array<std::size_t, 3> k, cplx v) {
    if (k[2] < nzc) s.spikes[k] += v;
  };
  for (const auto& w : waves(g)) {
    if (!r2c) {
      add(w.k, n * w.amp);
    } else {  // Re(a e^{i t}) = a/2 e^{i t} + conj(a)/2 e^{-i t}
      add(w.k, n * w.amp / 2.0);
      add({(g.nx - w.k[0]) % g.nx, (g.ny - w.k[1]) % g.ny, (g.nz - w.k[2]) % g.nz},
          n * std::conj(w.amp) / 2.0);
    }
  }
  for (const auto& [k, v] : s.spikes) s.peak = std::max(s.peak, std::abs(v));
  return s;
}

std::vector<cplx> gather_boxes(const cplx* local, const Box& box,
                               const std::array<std::size_t, 3>& dims, MPI_Comm comm, int root) {
  return gather_impl(local, box, dims, comm, root);
}
std::vector<double> gather_boxes(const double* local, const Box& box,
                                 const std::array<std::size_t, 3>& dims, MPI_Comm comm, int root) {
  return gather_impl(local, box, dims, comm, root);
}

std::vector<cplx> serial_forward(const std::vector<cplx>& in, const Extent& g) {
  std::vector<cplx> copy = in, out(g.total());
  fftw_plan p = fftw_plan_dft_3d(static_cast<int>(g.nx), static_cast<int>(g.ny),
                                 static_cast<int>(g.nz), reinterpret_cast<fftw_complex*>(copy.data()),
                                 reinterpret_cast<fftw_complex*>(out.data()), FFTW_FORWARD,
                                 FFTW_ESTIMATE);
  libcomm::require(p != nullptr, "serial reference: FFTW could not plan " + g.str());
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

std::vector<cplx> serial_forward(const std::vector<double>& in, const Extent& g) {
  std::vector<double> copy = in;
  std::vector<cplx> out(g.nx * g.ny * (g.nz / 2 + 1));
  fftw_plan p = fftw_plan_dft_r2c_3d(static_cast<int>(g.nx), static_cast<int>(g.ny),
                                     static_cast<int>(g.nz), copy.data(),
                                     reinterpret_cast<fftw_complex*>(out.data()), FFTW_ESTIMATE);
  libcomm::require(p != nullptr, "serial reference: FFTW could not plan " + g.str());
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

double relative_max_error(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  libcomm::require(a.size() == b.size(), "relative_max_error: sizes differ");
  double diff = 0, ref = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    ref = std::max(ref, std::abs(b[i]));
  }
  return ref > 0 ? diff / ref : diff;
}

double analytic_error(const cplx* out, const Box& box, const Spectrum& s, MPI_Comm comm) {
  double err = 0;
  for (std::size_t i = 0; i < box.n[0]; ++i)
    for (std::size_t j = 0; j < box.n[1]; ++j)
      for (std::size_t k = 0; k < box.n[2]; ++k) {
        const std::array<std::size_t, 3> c{box.lo[0] + i, box.lo[1] + j, box.lo[2] + k};
        const auto it = s.spikes.find(c);
        const cplx want = it == s.spikes.end() ? cplx(0) : it->second;
        err = std::max(err, std::abs(out[box.local_index(c)] - want));
      }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, comm);
  return s.peak > 0 ? err / s.peak : err;
}

double roundtrip_error(const cplx* back, const cplx* input, std::size_t n, double scale,
                       MPI_Comm comm) {
  return roundtrip_impl(back, input, n, scale, comm);
}
double roundtrip_error(const double* back, const double* input, std::size_t n, double scale,
                       MPI_Comm comm) {
  return roundtrip_impl(back, input, n, scale, comm);
}

}  // namespace fft3d
