// Memory budget, activities and decompression limits (core/memory_budget.h).
#include "core/memory_budget.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"

namespace tessel::memory {
namespace {

std::atomic<int64_t> g_limit{0};
std::atomic<double> g_max_ratio{1000};

std::mutex g_activity_mutex;
std::string g_activity;         // innermost live Activity
std::string g_failed_activity;  // innermost Activity an exception left

// A number from a one-value file (cgroup memory.max / memory.current); -1 for "max", a missing file or junk.
int64_t ReadCgroupValue(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return -1;
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    return used == text.size() && v >= 0 ? static_cast<int64_t>(v) : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

std::string WithActivity(std::string_view what) {
  const std::string activity = CurrentActivity();
  if (activity.empty()) return std::string(what);
  return fmt::format("{} (while {})", what, activity);
}

}  // namespace

int64_t AvailableBytes() {
  int64_t available = -1;
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") {
      available = kib * 1024;
      break;
    }
  }
  const int64_t cg_max = ReadCgroupValue("/sys/fs/cgroup/memory.max");
  if (cg_max >= 0) {
    const int64_t cg_used = std::max<int64_t>(ReadCgroupValue("/sys/fs/cgroup/memory.current"), 0);
    const int64_t cg_left = std::max<int64_t>(cg_max - cg_used, 0);
    available = available < 0 ? cg_left : std::min(available, cg_left);
  }
  return available;
}

int64_t ResidentBytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size_pages = 0;
  int64_t resident_pages = 0;
  if (!(in >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

int64_t PeakResidentBytes() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

namespace {

// A "Key:   1234 kB" line of /proc/self/status in bytes; -1 when absent.
int64_t StatusBytes(std::string_view key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(key)) continue;
    int64_t kib = -1;
    std::istringstream(line.substr(key.size())) >> kib;
    return kib < 0 ? -1 : kib * 1024;
  }
  return -1;
}

}  // namespace

int64_t AnonResidentBytes() { return StatusBytes("RssAnon:"); }
int64_t HighWaterResidentBytes() { return StatusBytes("VmHWM:"); }

bool ResetPeakResident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

// AddressSanitizer: GCC defines __SANITIZE_ADDRESS__, Clang answers __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define TESSEL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSEL_ASAN 1
#endif
#endif

void ReturnFreeHeap() {
#if defined(__GLIBC__) && !defined(TESSEL_ASAN)
  malloc_trim(0);
#endif
}

void KeepFreedHeap() {
#if defined(__GLIBC__) && !defined(TESSEL_ASAN)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

void ReleaseMappedPages(const void* data, int64_t bytes) {
#ifdef MADV_PAGEOUT
  if (data == nullptr || bytes <= 0) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + static_cast<uintptr_t>(bytes)) / page * page;
  if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_PAGEOUT);
#else
  (void)data;
  (void)bytes;
#endif
}

void SetLimit(int64_t bytes) {
  TESSEL_CHECK(bytes >= 0, "--max-memory must not be negative, got {}", bytes);
  g_limit.store(bytes);
}
int64_t Limit() { return g_limit.load(); }

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

void Check(int64_t bytes, std::string_view what, std::string_view fix) {
  if (bytes < kCheckThreshold) return;
  const std::string fix_text = fix.empty() ? std::string() : fmt::format("; {}", fix);
  const int64_t limit = Limit();
  if (limit > 0) {
    const int64_t resident = ResidentBytes();
    if (bytes > limit - resident) {
      throw Error(fmt::format("{} needs {}, but --max-memory is {} and the process already holds {}{}",
                              WithActivity(what), FormatBytes(bytes), FormatBytes(limit), FormatBytes(resident),
                              fix.empty() ? "; raise --max-memory if the machine has the memory" : fix_text));
    }
  }
  const int64_t available = AvailableBytes();
  if (available >= 0 && bytes > available) {
    throw Error(fmt::format("{} needs {}, but the machine has only {} available{}", WithActivity(what),
                            FormatBytes(bytes), FormatBytes(available),
                            fix.empty() ? "; free memory or use a machine with more" : fix_text));
  }
}

void CheckArray(int64_t count, int64_t element_size, std::string_view what, std::string_view fix) {
  TESSEL_CHECK(count >= 0 && element_size > 0, "{}: {} elements of {} bytes is not a size", WithActivity(what), count,
               element_size);
  if (count > std::numeric_limits<int64_t>::max() / element_size) {
    throw Error(fmt::format("{} needs {} x {} bytes, more than any machine has{}", WithActivity(what), count,
                            element_size, fix.empty() ? "" : fmt::format("; {}", fix)));
  }
  Check(count * element_size, what, fix);
}

int64_t ParseSize(std::string_view text, std::string_view flag) {
  const std::string original(text);
  auto bad = [&]() -> Error {
    return Error(fmt::format("{} '{}' is not a size: give bytes or a number with K, M, G or T (binary units), e.g. 8G",
                             flag, original));
  };
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  // Unit suffix: K/M/G/T, optionally followed by "iB" or "B".
  if (text.ends_with("iB") || text.ends_with("ib"))
    text.remove_suffix(2);
  else if (text.size() >= 2 && (text.back() == 'B' || text.back() == 'b') &&
           std::string_view("kKmMgGtT").find(text[text.size() - 2]) != std::string_view::npos) {
    text.remove_suffix(1);
  }
  int shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        shift = 10;
        break;
      case 'm':
      case 'M':
        shift = 20;
        break;
      case 'g':
      case 'G':
        shift = 30;
        break;
      case 't':
      case 'T':
        shift = 40;
        break;
      default:
        break;
    }
    if (shift != 0) text.remove_suffix(1);
  }
  if (text.empty()) throw bad();
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.')) throw bad();
  }
  const std::string number(text);
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value)) throw bad();
  value *= std::ldexp(1.0, shift);
  if (value >= 9.2e18) throw Error(fmt::format("{} '{}' is beyond any machine's memory", flag, original));
  return static_cast<int64_t>(value);
}

Activity::Activity(std::string text) : exceptions_at_start_(std::uncaught_exceptions()) {
  std::lock_guard<std::mutex> lock(g_activity_mutex);
  previous_ = std::move(g_activity);
  g_activity = std::move(text);
}

Activity::~Activity() {
  std::lock_guard<std::mutex> lock(g_activity_mutex);
  // An exception is leaving this scope: keep the innermost such activity (the first one to unwind).
  if (std::uncaught_exceptions() > exceptions_at_start_ && g_failed_activity.empty()) g_failed_activity = g_activity;
  g_activity = std::move(previous_);
}

std::string CurrentActivity() {
  std::lock_guard<std::mutex> lock(g_activity_mutex);
  return g_activity;
}

std::string FailedActivity() {
  std::lock_guard<std::mutex> lock(g_activity_mutex);
  return g_failed_activity;
}

std::string OutOfMemoryMessage() {
  const std::string activity = FailedActivity();
  const int64_t available = AvailableBytes();
  const int64_t limit = Limit();
  return fmt::format(
      "out of memory{} (an allocation failed; the process holds {}, the machine has {} available{}); lower the "
      "sizes that drive it (more partitions; a smaller --batch-size, --fanouts, --hidden or --layers for training, "
      "-m for the SVM kernel cache, --nodes, --edges or --features for generators), or use a machine with more "
      "memory or fewer ranks per machine",
      activity.empty() ? "" : fmt::format(" while {}", activity), FormatBytes(ResidentBytes()),
      available < 0 ? std::string("an unknown amount") : FormatBytes(available),
      limit > 0 ? fmt::format(", --max-memory {}", FormatBytes(limit)) : "");
}

void SetInflateLimits(const InflateLimits& limits) {
  TESSEL_CHECK(std::isfinite(limits.max_ratio) && limits.max_ratio >= 0,
               "--max-inflate-ratio must be a finite number >= 0 (0 = no limit), got {}", limits.max_ratio);
  g_max_ratio.store(limits.max_ratio);
}

InflateLimits GetInflateLimits() { return InflateLimits{g_max_ratio.load()}; }

void CheckInflated(std::string_view file, int64_t compressed, int64_t inflated) {
  const double ratio = g_max_ratio.load();
  if (ratio > 0 && static_cast<double>(inflated) > ratio * static_cast<double>(std::max<int64_t>(compressed, 1))) {
    throw Error::InFile(
        file, fmt::format("decompresses to more than {} times its {} compressed bytes (stopped at {}): a "
                          "decompression bomb or a damaged file; if the file is genuine, raise --max-inflate-ratio "
                          "(0 = no limit) or decompress it first",
                          ratio, compressed, FormatBytes(inflated)));
  }
}

}  // namespace tessel::memory
