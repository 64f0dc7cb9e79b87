// The grow-only array that device::Array (device memory from the pool, core/device.h) and device::PinnedArray
// (page-locked host memory, core/pinned_memory.h) both are, written once over where its memory comes from. Plain
// C++17: the .cu side includes it through core/device.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

namespace tessel::device {

// An array of T in memory from Memory::Allocate(bytes), returned by Memory::Release(ptr) (noexcept; given null too)
// when the array dies. Reserve keeps the memory when it is large enough and otherwise grows by at least half, so
// slowly growing sizes do not reallocate every call, dropping the contents. Always backed by memory once reserved,
// even for 0 elements. Moves, never copies.
template <typename T, typename Memory>
class GrowArray {
 public:
  GrowArray() = default;
  ~GrowArray() { Memory::Release(data_); }
  GrowArray(const GrowArray&) = delete;
  GrowArray& operator=(const GrowArray&) = delete;
  GrowArray(GrowArray&& other) noexcept { Swap(other); }
  GrowArray& operator=(GrowArray&& other) noexcept {
    Swap(other);
    return *this;
  }

  // At least n elements; returns data().
  T* Reserve(size_t n) {
    if (n > capacity_ || data_ == nullptr) {
      const size_t want = std::max<size_t>({n, capacity_ + capacity_ / 2, 1});
      Memory::Release(data_);
      data_ = nullptr;
      capacity_ = 0;
      data_ = static_cast<T*>(Memory::Allocate(want * sizeof(T)));
      capacity_ = want;
    }
    return data_;
  }
  T* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  void Swap(GrowArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
  }

 private:
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace tessel::device
