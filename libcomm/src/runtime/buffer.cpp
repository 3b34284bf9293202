#include "libcomm/buffer.hpp"

#include <mpi.h>

#include <cstdlib>
#include <new>
#include <utility>

#include "libcomm/error.hpp"

namespace libcomm {
namespace {
// Per process; under SMPI's privatisation, per simulated process.
bool g_simulated_payload = false;
}  // namespace

bool built_for_simulation() {
#ifdef LIBCOMM_SIMGRID
  return true;
#else
  return false;
#endif
}

void set_simulated_payload(bool on) {
  require(!on || built_for_simulation(),
          "simulated payload buffers need a SimGrid build (cmake -DLIBCOMM_SIMGRID=ON)");
  g_simulated_payload = on;
}

bool simulated_payload() { return g_simulated_payload; }

ByteBuffer::ByteBuffer(ByteBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      capacity_(std::exchange(o.capacity_, 0)),
      shared_(o.shared_) {}

ByteBuffer& ByteBuffer::operator=(ByteBuffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    shared_ = o.shared_;
  }
  return *this;
}

ByteBuffer::~ByteBuffer() { release(); }

void ByteBuffer::release() {
  if (data_ == nullptr) return;
#ifdef LIBCOMM_SIMGRID
  if (shared_) {
    SMPI_SHARED_FREE(data_);
    data_ = nullptr;
    return;
  }
#endif
  std::free(data_);
  data_ = nullptr;
}

void ByteBuffer::resize(std::size_t bytes) {
  if (bytes <= capacity_ && shared_ == g_simulated_payload) {
    size_ = bytes;
    return;
  }
  release();
  size_ = capacity_ = 0;
  shared_ = g_simulated_payload;
  if (bytes == 0) return;
  void* p = nullptr;
#ifdef LIBCOMM_SIMGRID
  if (shared_) p = SMPI_SHARED_MALLOC(bytes);
#endif
  if (p == nullptr && !shared_) p = std::malloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
  data_ = static_cast<std::byte*>(p);
  size_ = capacity_ = bytes;
}

}  // namespace libcomm
