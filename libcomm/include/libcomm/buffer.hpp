// Byte buffers for payload and scratch memory.
//
// In a LIBCOMM_SIMGRID build, set_simulated_payload(true) makes every ByteBuffer
// allocated afterwards a SimGrid shared buffer (SMPI_SHARED_MALLOC, "global" mode): all
// simulated processes map the same physical pages and SMPI skips payload copies, so
// 64 ranks x 1 MiB blocks (8 GiB of real buffers) simulate in a few hundred MiB and in
// seconds. The contents are then meaningless, so nothing can be validated: programs
// say so instead of printing PASS. Timing in the simulation is unchanged because it
// depends only on message sizes and the platform.
#pragma once

#include <cstddef>

namespace libcomm {

// Throws libcomm::Error outside a LIBCOMM_SIMGRID build when `on` is true.
void set_simulated_payload(bool on);
bool simulated_payload();
// True in a LIBCOMM_SIMGRID build.
bool built_for_simulation();

// An owning, uninitialised byte buffer; resize() does not keep the old contents.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  explicit ByteBuffer(std::size_t bytes) { resize(bytes); }
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ByteBuffer(ByteBuffer&& o) noexcept;
  ByteBuffer& operator=(ByteBuffer&& o) noexcept;
  ~ByteBuffer();

  // Grows (never shrinks the allocation) to at least `bytes`.
  void resize(std::size_t bytes);
  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool simulated() const { return shared_; }

 private:
  void release();
  std::byte* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
  bool shared_ = false;
};

}  // namespace libcomm
