// Test signals and the checks of fft3d: a pseudo-random input checked against a serial
// FFTW 3-D transform of the gathered input, and a few plane waves whose spectrum is a
// handful of known spikes (for grids too large to gather).
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <map>
#include <vector>

#include "grid.hpp"

namespace fft3d {

using cplx = std::complex<double>;

enum class Signal { Random, PlaneWaves };

// Fills the local input box (z over NZ) with the signal: complex values for c2c, the real
// part only for r2c (then the plane waves are cosines).
void fill_input(Signal s, const Extent& g, const Box& box, cplx* out);
void fill_input(Signal s, const Extent& g, const Box& box, double* out);

// Spikes of the forward transform of the plane-wave signal (FFTW sign convention,
// unnormalised), keyed by output index (x, y, z) with z < NZc.
struct Spectrum {
  std::map<std::array<std::size_t, 3>, cplx> spikes;
  double peak = 0;  // largest spike magnitude
};
Spectrum plane_wave_spectrum(const Extent& g, bool r2c);

// Gathers every rank's box of a distributed array to `root` as one global [x][y][z]
// array of dims (empty on the other ranks). Collective.
std::vector<cplx> gather_boxes(const cplx* local, const Box& box,
                               const std::array<std::size_t, 3>& dims, MPI_Comm comm, int root = 0);
std::vector<double> gather_boxes(const double* local, const Box& box,
                                 const std::array<std::size_t, 3>& dims, MPI_Comm comm,
                                 int root = 0);

// Serial FFTW 3-D forward transform (complex, or real-to-complex with NZ/2+1 outputs).
std::vector<cplx> serial_forward(const std::vector<cplx>& in, const Extent& g);
std::vector<cplx> serial_forward(const std::vector<double>& in, const Extent& g);

// max |a - b| / max |b| (0 when b is all zero and a equals it).
double relative_max_error(const std::vector<cplx>& a, const std::vector<cplx>& b);

// max over the ranks of |out - spectrum| / peak over the local output box. Collective.
double analytic_error(const cplx* out, const Box& box, const Spectrum& s, MPI_Comm comm);

// Round trip: max over ranks |back / N - input| / max over ranks |input|. Collective.
double roundtrip_error(const cplx* back, const cplx* input, std::size_t n, double scale,
                       MPI_Comm comm);
double roundtrip_error(const double* back, const double* input, std::size_t n, double scale,
                       MPI_Comm comm);

}  // namespace fft3d
