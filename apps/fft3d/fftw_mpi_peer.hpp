// The peer fft3d measures itself against: FFTW's own distributed 3-D transform
// (fftw_mpi_plan_dft_3d), x-slab input, output either as x slabs (FFTW's extra transpose
// back) or, with FFTW_MPI_TRANSPOSED_OUT, as y slabs [y][x][z] like our slab output.
// Complex-to-complex only. Available when built with libfftw3-mpi (LIBCOMM_HAVE_FFTW_MPI).
#pragma once

#include <mpi.h>

#include <complex>
#include <memory>

#include "grid.hpp"

namespace fft3d {

bool fftw_mpi_available();

class FftwMpiPeer {
 public:
  // Collective over comm; call fftw_mpi_startup() first.
  FftwMpiPeer(MPI_Comm comm, const Extent& grid, bool transposed_out, unsigned plan_flags);
  ~FftwMpiPeer();
  FftwMpiPeer(const FftwMpiPeer&) = delete;
  FftwMpiPeer& operator=(const FftwMpiPeer&) = delete;

  Box input_box() const;
  Box output_box() const;
  std::complex<double>* input();
  std::complex<double>* output();
  void forward();   // input -> output (input may be overwritten)
  void backward();  // output -> input, unnormalised

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// fftw_mpi_init once per process (no-op without FFTW MPI).
void fftw_mpi_startup();

}  // namespace fft3d
