// Large host allocations for Buffer<T> (core/buffer.h): 2 MiB aligned, advised for transparent huge pages.
#include "core/buffer.h"

#include <atomic>

#include <cstdlib>
#include <new>

#include "core/memory_budget.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tessel {

uint64_t NextBufferVersion() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<void> AllocateHuge(size_t bytes) {
  constexpr size_t kPage = size_t{2} << 20;
  const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  memory::Check(static_cast<int64_t>(rounded), "a buffer");
  void* p = std::aligned_alloc(kPage, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__)
  (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the pages stay 4 KiB
#endif
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

}  // namespace tessel
