#include "fftw_mpi_peer.hpp"

#include "libcomm/error.hpp"

#ifdef LIBCOMM_HAVE_FFTW_MPI
#include <fftw3-mpi.h>
#endif

namespace fft3d {

#ifdef LIBCOMM_HAVE_FFTW_MPI

bool fftw_mpi_available() { return true; }

void fftw_mpi_startup() {
  static bool done = false;
  if (!done) fftw_mpi_init(), done = true;
}

struct FftwMpiPeer::Impl {
  Extent g;
  bool transposed = false;
  ptrdiff_t n0 = 0, s0 = 0, n1 = 0, s1 = 0;
  fftw_complex* in = nullptr;
  fftw_complex* out = nullptr;
  fftw_plan fwd = nullptr, bwd = nullptr;
};

FftwMpiPeer::FftwMpiPeer(MPI_Comm comm, const Extent& g, bool transposed_out, unsigned flags)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.g = g;
  m.transposed = transposed_out;
  const auto nx = static_cast<ptrdiff_t>(g.nx), ny = static_cast<ptrdiff_t>(g.ny),
             nz = static_cast<ptrdiff_t>(g.nz);
  const ptrdiff_t alloc =
      transposed_out ? fftw_mpi_local_size_3d_transposed(nx, ny, nz, comm, &m.n0, &m.s0, &m.n1, &m.s1)
                     : fftw_mpi_local_size_3d(nx, ny, nz, comm, &m.n0, &m.s0);
  m.in = fftw_alloc_complex(alloc > 0 ? alloc : 1);
  m.out = fftw_alloc_complex(alloc > 0 ? alloc : 1);
  const unsigned tf = transposed_out ? FFTW_MPI_TRANSPOSED_OUT : 0;
  const unsigned tb = transposed_out ? FFTW_MPI_TRANSPOSED_IN : 0;
  // Out-of-place with FFTW_DESTROY_INPUT (the input may serve as scratch): one of the two
  // fastest FFTW-MPI set-ups by FFTW's own performance tips, and fft3d refills the input
  // before every forward transform anyway.
  m.fwd = fftw_mpi_plan_dft_3d(nx, ny, nz, m.in, m.out, comm, FFTW_FORWARD,
                               flags | tf | FFTW_DESTROY_INPUT);
  m.bwd = fftw_mpi_plan_dft_3d(nx, ny, nz, m.out, m.in, comm, FFTW_BACKWARD,
                               flags | tb | FFTW_DESTROY_INPUT);
  libcomm::require(m.fwd && m.bwd, "--fftw-mpi: FFTW MPI could not plan " + g.str());
}

FftwMpiPeer::~FftwMpiPeer() {
  if (impl_->fwd) fftw_destroy_plan(impl_->fwd);
  if (impl_->bwd) fftw_destroy_plan(impl_->bwd);
  fftw_free(impl_->in);
  fftw_free(impl_->out);
}

Box FftwMpiPeer::input_box() const {
  Box b;
  b.lo = {static_cast<std::size_t>(impl_->s0), 0, 0};
  b.n = {static_cast<std::size_t>(impl_->n0), impl_->g.ny, impl_->g.nz};
  return b;
}

Box FftwMpiPeer::output_box() const {
  if (!impl_->transposed) return input_box();
  Box b;  // [y_l][x][z]
  b.lo = {0, static_cast<std::size_t>(impl_->s1), 0};
  b.n = {impl_->g.nx, static_cast<std::size_t>(impl_->n1), impl_->g.nz};
  b.order = {1, 0, 2};
  return b;
}

std::complex<double>* FftwMpiPeer::input() {
  return reinterpret_cast<std::complex<double>*>(impl_->in);
}
std::complex<double>* FftwMpiPeer::output() {
  return reinterpret_cast<std::complex<double>*>(impl_->out);
}
void FftwMpiPeer::forward() { fftw_execute(impl_->fwd); }
void FftwMpiPeer::backward() { fftw_execute(impl_->bwd); }

#else  // built without FFTW MPI (e.g. under SimGrid)

bool fftw_mpi_available() { return false; }
void fftw_mpi_startup() {}
struct FftwMpiPeer::Impl {};
FftwMpiPeer::FftwMpiPeer(MPI_Comm, const Extent&, bool, unsigned) {
  throw libcomm::Error("--fftw-mpi: this build has no FFTW MPI (libfftw3-mpi-dev)");
}
FftwMpiPeer::~FftwMpiPeer() = default;
Box FftwMpiPeer::input_box() const { return {}; }
Box FftwMpiPeer::output_box() const { return {}; }
std::complex<double>* FftwMpiPeer::input() { return nullptr; }
std::complex<double>* FftwMpiPeer::output() { return nullptr; }
void FftwMpiPeer::forward() {}
void FftwMpiPeer::backward() {}

#endif

}  // namespace fft3d
