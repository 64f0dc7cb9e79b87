// core/device.h's functions over the device runtime's table: the CUDA runtime's (core/device_cuda.cu) when this
// build compiled it, a simulated one while a test installs it, none otherwise (the one place in core that asks).
// Without a runtime the queries answer "none" and memory calls throw, so Buffer<T> and every caller compile and
// link the same way in every build. Memory goes through a caching pool; every call is counted.
#include "core/device.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <unordered_map>

#include <unistd.h>

#include "core/build_config.h"
#include "core/error.h"
#include "core/pinned_memory.h"

namespace tessel::device {

#if TESSEL_HAVE_CUDA
extern const RuntimeOps kCudaRuntime;
extern const PinnedOps kCudaPinned;
#endif

namespace {

// ---- the simulated runtime: host memory, memcpy.
std::atomic<int> g_sim_devices{1};
thread_local int g_sim_current = 0;
int SimDeviceCount() { return g_sim_devices.load(); }
std::string SimDescribe(int device_id) {
  return device_id >= 0 && device_id < g_sim_devices.load()
             ? std::string("simulated device, host memory")
             : fmt::format("no simulated device {} ({} visible)", device_id, g_sim_devices.load());
}
void SimSetDevice(int device_id) {
  TESSEL_CHECK(device_id >= 0 && device_id < g_sim_devices.load(), "simulated device: no device {} ({} visible)",
               device_id, g_sim_devices.load());
  g_sim_current = device_id;
}
int SimCurrentDevice() { return g_sim_current; }
// Memory of the simulated device: its capacity (-1: the host's) and the bytes live. Each block carries its size in a
// 16-byte header, so a release knows what it gives back.
std::atomic<int64_t> g_sim_capacity{-1};
std::atomic<int64_t> g_sim_live{0};
constexpr size_t kSimHeader = 16;
void* SimAlloc(size_t bytes) {
  const auto want = static_cast<int64_t>(bytes);
  const int64_t capacity = g_sim_capacity.load();
  if (capacity >= 0 && g_sim_live.load() + want > capacity) {
    throw Error(fmt::format("simulated device: out of memory ({} bytes asked, {} of {} in use)", bytes,
                            g_sim_live.load(), capacity));
  }
  auto* p = static_cast<std::byte*>(std::malloc(bytes + kSimHeader));
  if (p == nullptr) throw Error(fmt::format("simulated device: cannot allocate {} bytes", bytes));
  std::memcpy(p, &want, sizeof(want));
  g_sim_live += want;
  return p + kSimHeader;
}
void SimRelease(void* ptr) noexcept {
  if (ptr == nullptr) return;
  std::byte* p = static_cast<std::byte*>(ptr) - kSimHeader;
  int64_t bytes = 0;
  std::memcpy(&bytes, p, sizeof(bytes));
  g_sim_live -= bytes;
  std::free(p);
}
void SimCopy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}
void SimSynchronize() {}
// A capacity gives its unused part as free; without one, the host's physical memory stands for the device (all
// of it free: a fixed answer, so a test's placement does not follow the host's load).
MemoryInfo SimMemoryInfo() {
  const int64_t capacity = g_sim_capacity.load();
  if (capacity >= 0) return MemoryInfo{std::max<int64_t>(0, capacity - g_sim_live.load()), capacity};
  const auto bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
  return MemoryInfo{bytes, bytes};
}
const RuntimeOps kSimulatedRuntime{SimDeviceCount, SimDescribe, SimSetDevice, SimCurrentDevice, SimAlloc,
                                   SimRelease,     SimCopy,     SimCopy,      SimSynchronize,   SimMemoryInfo};

std::atomic<const RuntimeOps*> g_override{nullptr};

const RuntimeOps* Runtime() {
  if (const RuntimeOps* o = g_override.load(std::memory_order_acquire); o != nullptr) return o;
#if TESSEL_HAVE_CUDA
  return &kCudaRuntime;
#else
  return nullptr;
#endif
}

const RuntimeOps& Required() {
  const RuntimeOps* r = Runtime();
  if (r == nullptr) throw Error("this tessel was built without CUDA (rebuild with -DTESSEL_CUDA=ON)");
  return *r;
}

struct AtomicCounters {
  std::atomic<int64_t> allocations{0}, runtime_allocations{0}, allocated_bytes{0}, frees{0}, h2d_copies{0},
      h2d_bytes{0}, d2h_copies{0}, d2h_bytes{0}, synchronizations{0}, launches{0}, launches_seen{0}, in_use_bytes{0},
      cached_bytes{0};
};
AtomicCounters& Count() {
  static AtomicCounters c;
  return c;
}
// Updates that move several counters together (a download is a copy, its bytes and a synchronisation) hold this
// shared; ReadCounters holds it exclusively, so a snapshot never sees half of one. Thread ranks share the counters,
// and a rank reading them at its epoch's end while another is mid-download saw d2h_copies one ahead of
// synchronizations (the CI failure of GcnTrainerOnParts.OnADeviceOnlyFetchedRowsGoUpAndSteadyEpochsPinNothing).
std::shared_mutex& CountMutex() {
  static std::shared_mutex m;
  return m;
}

// Block sizes: one class for everything up to 64 KiB (labels, offsets, a layer's bias: any free small block serves
// any small request; a few dozen live ones cost a few MiB of device memory); above, eight steps per power of two
// (2^k, 1.125 x 2^k, ..., at most 12.5% unused). The varying shapes of sampled batches, a few percent apart from
// step to step, then share blocks instead of each new maximum missing the cache.
constexpr size_t kSmallBlock = size_t{64} << 10;
size_t RoundUp(size_t bytes) {
  if (bytes <= kSmallBlock) return kSmallBlock;
  size_t power = kSmallBlock;
  while (power * 2 < bytes) power *= 2;  // power < bytes <= 2 * power
  const size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

// The caching pool. Blocks belong to the runtime that allocated them; switching runtimes (a simulated device in a
// test) empties the cache first. Leaked at exit on purpose: buffers in static objects may be freed after it would
// have been destroyed, and the driver releases device memory with the process.
class Pool {
 public:
  void* Allocate(size_t bytes) {
    const RuntimeOps& rt = Required();
    const size_t size = RoundUp(bytes);
    const int dev = rt.current_device();  // blocks serve the device they were allocated on only
    {
      std::lock_guard<std::mutex> lock(mu_);
      // The smallest cached block of this device that fits and wastes at most half of itself.
      auto it = free_.lower_bound({dev, size});
      if (it != free_.end() && it->first.first == dev && it->first.second <= 2 * size) {
        void* p = it->second;
        live_[p] = it->first;
        Count().cached_bytes -= static_cast<int64_t>(it->first.second);
        Count().in_use_bytes += static_cast<int64_t>(it->first.second);
        free_.erase(it);
        return p;
      }
    }
    // A miss allocates a quarter more than asked (above the small class): a sampled batch's shapes reach new maxima
    // a few percent above the last now and then, and each would otherwise miss again. When the device lacks the
    // headroom, the exact size is tried.
    const size_t grown = size > kSmallBlock ? RoundUp(size + size / 4) : size;
    void* p = nullptr;
    size_t got = grown;
    try {
      p = rt.alloc(grown);
    } catch (const Error&) {
      ReleaseCached();  // cached blocks may be what the device lacks
      got = size;
      p = rt.alloc(size);
    }
    Count().runtime_allocations += 1;
    std::lock_guard<std::mutex> lock(mu_);
    live_[p] = {dev, got};
    Count().in_use_bytes += static_cast<int64_t>(got);
    return p;
  }

  void Release(void* p) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(p);
    if (it == live_.end()) return;  // not ours (freed twice, or from before a runtime switch)
    Count().in_use_bytes -= static_cast<int64_t>(it->second.second);
    Count().cached_bytes += static_cast<int64_t>(it->second.second);
    free_.emplace(it->second, p);
    live_.erase(it);
  }

  void ReleaseCached() noexcept {
    const RuntimeOps* rt = Runtime();
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, p] : free_) {
      if (rt != nullptr) rt->release(p);  // cudaFree finds the block's device from its address
      Count().cached_bytes -= static_cast<int64_t>(key.second);
    }
    free_.clear();
  }

  // Forgets the live blocks (their runtime is going away) after releasing the cached ones.
  void Reset() noexcept {
    ReleaseCached();
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [p, key] : live_) Count().in_use_bytes -= static_cast<int64_t>(key.second);
    live_.clear();
  }

 private:
  using Key = std::pair<int, size_t>;  // (device, block size)
  std::mutex mu_;
  std::multimap<Key, void*> free_;       // (device, size) -> cached block
  std::unordered_map<void*, Key> live_;  // block -> (device, size)
};

Pool& ThePool() {
  static Pool* pool = new Pool();
  return *pool;
}

}  // namespace

bool BuiltWithCuda() {
#if TESSEL_HAVE_CUDA
  return true;
#else
  return false;
#endif
}
int CudaDeviceCount() { return Runtime() != nullptr ? Runtime()->device_count() : 0; }
std::string Describe(int device_id) {
  return Runtime() != nullptr ? Runtime()->describe(device_id) : std::string("built without CUDA");
}
void SetDevice(int device_id) { Required().set_device(device_id); }
int CurrentDevice() { return Required().current_device(); }

void* Malloc(size_t bytes) {
  void* p = ThePool().Allocate(bytes);
  const std::shared_lock lock(CountMutex());
  Count().allocations += 1;
  Count().allocated_bytes += static_cast<int64_t>(bytes);
  return p;
}
void Free(void* ptr) noexcept {
  if (ptr == nullptr) return;
  ThePool().Release(ptr);
  Count().frees += 1;
}
void CopyToDevice(void* dst, const void* src, size_t bytes) {
  Required().copy_to_device(dst, src, bytes);
  const std::shared_lock lock(CountMutex());
  Count().h2d_copies += 1;
  Count().h2d_bytes += static_cast<int64_t>(bytes);
}
void CopyToHost(void* dst, const void* src, size_t bytes) {
  Required().copy_to_host(dst, src, bytes);
  const std::shared_lock lock(CountMutex());
  Count().d2h_copies += 1;
  Count().d2h_bytes += static_cast<int64_t>(bytes);
  Count().synchronizations += 1;
}
void CountLaunches(int64_t n) { Count().launches += n; }
void NoteLaunchesSeen(int64_t n) { Count().launches_seen += n; }
void Synchronize() {
  if (Runtime() == nullptr) return;
  Runtime()->synchronize();
  Count().synchronizations += 1;
}

void ReleaseCachedMemory() { ThePool().ReleaseCached(); }

// ---- pinned host memory (core/pinned_memory.h): the simulated device's is the host heap.
namespace {
struct AtomicPinnedCounters {
  std::atomic<int64_t> allocations{0}, allocated_bytes{0}, frees{0}, in_use_bytes{0};
};
AtomicPinnedCounters& PinnedCount() {
  static AtomicPinnedCounters c;
  return c;
}
void* SimAllocPinned(size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr) throw Error(fmt::format("simulated device: cannot pin {} bytes of host memory", bytes));
  return p;
}
void SimReleasePinned(void* ptr) noexcept { std::free(ptr); }
void* SimDevicePointer(void* host) { return host; }  // the simulated device's memory is host memory
const PinnedOps kSimulatedPinned{SimAllocPinned, SimReleasePinned, SimAllocPinned, SimDevicePointer};
// Pinned blocks remember their size and the table that made them (a simulated block may outlive the simulation).
struct PinnedBlock {
  size_t bytes;
  const PinnedOps* ops;
};
std::mutex g_pinned_mu;
std::unordered_map<void*, PinnedBlock>& PinnedLive() {
  static auto* live = new std::unordered_map<void*, PinnedBlock>();  // leaked, as the pool is
  return *live;
}

const PinnedOps& PinnedRuntime() {
  if (Simulated()) return kSimulatedPinned;
#if TESSEL_HAVE_CUDA
  return kCudaPinned;
#else
  throw Error("this tessel was built without CUDA (rebuild with -DTESSEL_CUDA=ON)");
#endif
}

void* AllocPinned(size_t bytes, bool mapped) {
  const PinnedOps* ops = &PinnedRuntime();
  void* p = mapped ? ops->alloc_mapped(std::max<size_t>(bytes, 1)) : ops->alloc(std::max<size_t>(bytes, 1));
  {
    std::lock_guard<std::mutex> lock(g_pinned_mu);
    PinnedLive()[p] = PinnedBlock{bytes, ops};
  }
  PinnedCount().allocations += 1;
  PinnedCount().allocated_bytes += static_cast<int64_t>(bytes);
  PinnedCount().in_use_bytes += static_cast<int64_t>(bytes);
  return p;
}
}  // namespace

void* MallocPinned(size_t bytes) { return AllocPinned(bytes, false); }
void* MallocMapped(size_t bytes) { return AllocPinned(bytes, true); }
void* MappedDevicePointer(void* host) {
  const PinnedOps* ops = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_pinned_mu);
    auto it = PinnedLive().find(host);
    TESSEL_CHECK(it != PinnedLive().end(), "MappedDevicePointer: not the start of a pinned block");
    ops = it->second.ops;
  }
  return ops->device_pointer(host);
}

void FreePinned(void* ptr) noexcept {
  if (ptr == nullptr) return;
  PinnedBlock block{0, nullptr};
  {
    std::lock_guard<std::mutex> lock(g_pinned_mu);
    auto it = PinnedLive().find(ptr);
    if (it == PinnedLive().end()) return;  // not ours
    block = it->second;
    PinnedLive().erase(it);
  }
  block.ops->release(ptr);
  PinnedCount().frees += 1;
  PinnedCount().in_use_bytes -= static_cast<int64_t>(block.bytes);
}

PinnedCounters ReadPinnedCounters() {
  const AtomicPinnedCounters& c = PinnedCount();
  return PinnedCounters{c.allocations.load(), c.allocated_bytes.load(), c.frees.load(), c.in_use_bytes.load()};
}

MemoryInfo ReadMemoryInfo() {
  MemoryInfo info = Required().memory_info();
  info.free_bytes += Count().cached_bytes.load();  // the pool's cached blocks are free to whoever asks next
  info.free_bytes = std::min(info.free_bytes, info.total_bytes);
  return info;
}

Counters ReadCounters() {
  const std::unique_lock lock(CountMutex());
  const AtomicCounters& c = Count();
  Counters out;
  out.allocations = c.allocations.load();
  out.runtime_allocations = c.runtime_allocations.load();
  out.allocated_bytes = c.allocated_bytes.load();
  out.frees = c.frees.load();
  out.h2d_copies = c.h2d_copies.load();
  out.h2d_bytes = c.h2d_bytes.load();
  out.d2h_copies = c.d2h_copies.load();
  out.d2h_bytes = c.d2h_bytes.load();
  out.synchronizations = c.synchronizations.load();
  out.launches = c.launches.load();
  out.launches_seen = c.launches_seen.load();
  out.in_use_bytes = c.in_use_bytes.load();
  out.cached_bytes = c.cached_bytes.load();
  return out;
}

Counters Counters::operator-(const Counters& earlier) const {
  Counters d = *this;  // gauges stay as read
  d.allocations -= earlier.allocations;
  d.runtime_allocations -= earlier.runtime_allocations;
  d.allocated_bytes -= earlier.allocated_bytes;
  d.frees -= earlier.frees;
  d.h2d_copies -= earlier.h2d_copies;
  d.h2d_bytes -= earlier.h2d_bytes;
  d.d2h_copies -= earlier.d2h_copies;
  d.d2h_bytes -= earlier.d2h_bytes;
  d.synchronizations -= earlier.synchronizations;
  d.launches -= earlier.launches;
  d.launches_seen -= earlier.launches_seen;
  return d;
}

ScopedSimulatedDevice::ScopedSimulatedDevice(int64_t capacity_bytes, int devices) {
  TESSEL_CHECK(g_override.load() == nullptr, "a simulated device is already installed");
  TESSEL_CHECK(devices >= 1, "a simulated runtime needs at least one device, got {}", devices);
  ThePool().Reset();
  g_sim_capacity.store(capacity_bytes);
  g_sim_devices.store(devices);
  g_sim_current = 0;
  g_override.store(&kSimulatedRuntime, std::memory_order_release);
}
ScopedSimulatedDevice::~ScopedSimulatedDevice() {
  ThePool().Reset();
  g_override.store(nullptr, std::memory_order_release);
}
bool Simulated() { return g_override.load() != nullptr; }

void UseSimulatedDevice() {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (Simulated()) return;
  ThePool().Reset();
  g_sim_capacity.store(-1);
  g_sim_devices.store(1);
  g_sim_current = 0;
  g_override.store(&kSimulatedRuntime, std::memory_order_release);
}

}  // namespace tessel::device
