// Buffer<T>: a contiguous array in host memory with an optional device mirror and a "which side is current"
// flag (XGBoost HostDeviceVector, ThunderSVM SyncArray). Host memory is owned, or borrowed from a mapping
// kept alive by a shared owner (mmap-loaded datasets), or mapped pinned memory the device reads in place (Mapped:
// one array, both sides always current, nothing ever copied). The same header serves CPU-only and CUDA builds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "core/pinned_memory.h"

namespace tessel {

// Host allocations of at least kHugeBytes are 2 MiB aligned and advised for transparent huge pages (Linux
// madvise(MADV_HUGEPAGE); elsewhere only aligned). Throws std::bad_alloc when the memory is not there.
inline constexpr size_t kHugeBytes = size_t{8} << 20;
std::shared_ptr<void> AllocateHuge(size_t bytes);
// A process-wide counter: each call returns a value never returned before (Buffer versions).
uint64_t NextBufferVersion();

template <typename T>
class Buffer {
  static_assert(std::is_trivially_copyable_v<T>, "Buffer<T> holds trivially copyable elements only");

 public:
  using value_type = T;
  Buffer() = default;
  // n value-initialised (zero) elements.
  explicit Buffer(size_t n) { Allocate(n, true); }
  Buffer(size_t n, const T& value) {
    Allocate(n, false);
    std::fill_n(host_, n, value);
  }
  Buffer(std::initializer_list<T> values) : Buffer(std::vector<T>(values)) {}
  // Takes the vector's memory without copying.
  explicit Buffer(std::vector<T>&& values) {
    auto holder = std::make_shared<std::vector<T>>(std::move(values));
    host_ = holder->data();
    size_ = holder->size();
    owner_ = std::move(holder);
    version_ = NextBufferVersion();
  }
  // Borrows n elements at `data`, kept alive by `owner` (for example a file mapping). Writes go to the
  // borrowed memory, so map files privately (copy-on-write) if they must stay unchanged.
  static Buffer Borrow(std::shared_ptr<void> owner, T* data, size_t n) {
    Buffer b;
    b.owner_ = std::move(owner);
    b.host_ = data;
    b.size_ = n;
    b.version_ = NextBufferVersion();
    return b;
  }
  // n elements left uninitialised (for outputs a kernel writes in full: no zero-fill pass over memory).
  static Buffer Uninitialized(size_t n) {
    Buffer b;
    b.Allocate(n, false);
    return b;
  }
  static Buffer CopyOf(std::span<const T> values) {
    Buffer b;
    b.Allocate(values.size(), false);
    if (!values.empty()) std::memcpy(b.host_, values.data(), values.size_bytes());
    return b;
  }
  // A copy of `values` in mapped pinned host memory (core/pinned_memory.h): kernels read and write it in place over
  // the bus, so Device() is its device address and no copy is ever made in either direction. For arrays too large
  // for the device that kernels touch sparsely. Needs a device runtime (CUDA or the simulated device).
  static Buffer MappedCopyOf(std::span<const T> values) {
    Buffer b;
    void* mem = device::MallocMapped(std::max<size_t>(values.size_bytes(), 1));
    b.owner_ = std::shared_ptr<void>(mem, [](void* p) { device::FreePinned(p); });
    b.host_ = static_cast<T*>(mem);
    b.mapped_device_ = static_cast<T*>(device::MappedDevicePointer(mem));
    if (!values.empty()) std::memcpy(b.host_, values.data(), values.size_bytes());
    b.size_ = values.size();
    b.capacity_ = values.size();
    b.version_ = NextBufferVersion();
    return b;
  }

  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      owner_ = std::move(other.owner_);
      host_ = std::exchange(other.host_, nullptr);
      size_ = std::exchange(other.size_, 0);
      device_ = std::move(other.device_);
      host_current_ = std::exchange(other.host_current_, true);
      device_current_ = std::exchange(other.device_current_, false);
      capacity_ = std::exchange(other.capacity_, 0);
      reusable_ = std::exchange(other.reusable_, false);
      version_ = std::exchange(other.version_, 0);
      mapped_device_ = std::exchange(other.mapped_device_, nullptr);
      mapped_written_ = std::exchange(other.mapped_written_, false);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;  // copies are explicit: Clone()
  Buffer& operator=(const Buffer&) = delete;

  Buffer Clone() const { return CopyOf(Host()); }

  // Sets the size to n, keeping the memory when this buffer allocated it itself and it holds at least n elements
  // (a workspace reused from step to step: no allocation, no page faults, no zero-fill); otherwise new
  // uninitialised memory. Contents are undefined afterwards; a device mirror is dropped.
  void ResizeUninitialized(size_t n) {
    if (n == size_) return;
    if (mapped_device_ != nullptr && n <= capacity_) {  // stays mapped
      size_ = n;
      version_ = NextBufferVersion();
      return;
    }
    if (reusable_ && n <= capacity_ && host_current_) {
      size_ = n;
      device_.reset();
      device_current_ = false;
      version_ = NextBufferVersion();
      return;
    }
    *this = Uninitialized(n);
  }

  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }

  // Host view for reading; brings the host copy up to date first.
  std::span<const T> Host() const {
    SyncToHost();
    return {host_, size_};
  }
  // Host view for writing; the device mirror becomes stale.
  std::span<T> MutableHost() {
    SyncToHost();
    if (mapped_device_ != nullptr) device::Synchronize();  // kernels still reading it finish before the host writes
    if (mapped_device_ == nullptr) device_current_ = false;
    host_current_ = true;
    version_ = NextBufferVersion();
    return {host_, size_};
  }
  const T& operator[](size_t i) const { return Host()[i]; }

  // Device pointer for reading (allocates and uploads when needed). CUDA builds only; throws otherwise.
  const T* Device() const {
    if (mapped_device_ != nullptr) return mapped_device_;
    SyncToDevice();
    return static_cast<const T*>(device_.get());
  }
  // Device pointer for writing; the host copy becomes stale.
  T* MutableDevice() {
    if (mapped_device_ != nullptr) {
      version_ = NextBufferVersion();
      mapped_written_ = true;  // the next host read waits for the device
      return mapped_device_;
    }
    SyncToDevice();
    host_current_ = false;
    device_current_ = true;
    version_ = NextBufferVersion();
    return static_cast<T*>(device_.get());
  }
  // Device pointer for a kernel that writes every element: allocated when needed, the host copy never uploaded
  // (it is stale afterwards). Only for full overwrites; a kernel that reads or keeps some elements takes
  // MutableDevice(). An input aliasing this buffer is brought to the device first by its Device() call.
  T* OverwriteDevice() {
    if (mapped_device_ != nullptr) return MutableDevice();
    if (!device_) device_.reset(device::Malloc(std::max<size_t>(bytes(), 1)));
    host_current_ = false;
    device_current_ = true;
    version_ = NextBufferVersion();
    return static_cast<T*>(device_.get());
  }
  // Keeps the first n elements (n <= size()) of a buffer last written on the device, in place (nothing copied or
  // freed): for an output allocated at a bound before a kernel wrote its real size (the GPU sampler's blocks).
  void ShrinkOnDevice(size_t n) {
    TESSEL_CHECK(n <= size_ && mapped_device_ == nullptr && device_current_ && !host_current_,
                 "Buffer::ShrinkOnDevice: {} of {} elements of a buffer not written on the device", n, size_);
    size_ = n;
    version_ = NextBufferVersion();
  }
  bool HostCurrent() const { return host_current_; }
  // Changes whenever the contents may have: a new buffer, a mutable access (host or device), a resize. Unique in
  // the process, so (version) alone tells a cache whether what it derived from this buffer is still valid. 0 only
  // for an empty default-constructed or moved-from buffer.
  uint64_t version() const { return version_; }
  bool DeviceCurrent() const { return mapped_device_ != nullptr || (device_current_ && device_ != nullptr); }
  // True for MappedCopyOf's memory (until a resize beyond its size replaces it).
  bool Mapped() const { return mapped_device_ != nullptr; }

  std::vector<T> ToVector() const {
    auto h = Host();
    return std::vector<T>(h.begin(), h.end());
  }

 private:
  struct DeviceFree {
    void operator()(void* p) const noexcept { device::Free(p); }
  };

  void Allocate(size_t n, bool zero) {
    TESSEL_CHECK(n <= (size_t{1} << 62) / sizeof(T), "a buffer of {} values of {} bytes is larger than any memory", n,
                 sizeof(T));
    if (n * sizeof(T) >= kHugeBytes) {
      // Large arrays (feature matrices, full-graph activations) on 2 MiB pages where the kernel allows it: rows
      // read at random (mini-batch gathers) then miss the TLB far less often.
      std::shared_ptr<void> mem = AllocateHuge(n * sizeof(T));
      host_ = static_cast<T*>(mem.get());
      owner_ = std::move(mem);
    } else {
      std::shared_ptr<T[]> mem(new T[n]);
      host_ = mem.get();
      owner_ = std::move(mem);
    }
    if (zero && n > 0) std::memset(static_cast<void*>(host_), 0, n * sizeof(T));
    size_ = n;
    capacity_ = n;
    reusable_ = true;
    version_ = NextBufferVersion();
  }
  void SyncToHost() const {
    if (mapped_written_) {  // a kernel may still be writing the mapped memory: wait for the device
      device::Synchronize();
      mapped_written_ = false;
    }
    if (host_current_) return;
    if (size_ > 0) device::CopyToHost(host_, device_.get(), bytes());
    host_current_ = true;
  }
  void SyncToDevice() const {
    if (!device_) {
      device_.reset(device::Malloc(std::max<size_t>(bytes(), 1)));
      device_current_ = false;
    }
    if (device_current_) return;
    if (size_ > 0) device::CopyToDevice(device_.get(), host_, bytes());
    device_current_ = true;
  }

  std::shared_ptr<void> owner_;
  T* host_ = nullptr;
  size_t size_ = 0;
  mutable std::unique_ptr<void, DeviceFree> device_;
  mutable bool host_current_ = true;
  mutable bool device_current_ = false;
  size_t capacity_ = 0;    // elements at host_ (Allocate only)
  bool reusable_ = false;  // host_ is this buffer's own allocation (not borrowed, not a moved-in vector)
  uint64_t version_ = 0;
  T* mapped_device_ = nullptr;           // MappedCopyOf: the device's address of host_ (then device_ stays null)
  mutable bool mapped_written_ = false;  // mapped: handed to the device for writing since the last host access
};

}  // namespace tessel
