// The memory budget: every large allocation is compared, before it is made, with what the machine (or its cgroup)
// has available and with the user's `--max-memory`, so a size read from a damaged or hostile file becomes a message
// naming what needed the memory and the option that reduces it, never an OOM kill or a bare std::bad_alloc.
// Decompression limits live here too: how far a compressed input may inflate. docs/reliability.md.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace tessel::memory {

// Allocations below this are not checked (reading /proc costs a few microseconds; small ones cannot hurt).
constexpr int64_t kCheckThreshold = int64_t{8} << 20;

// Bytes the machine can still give this process: MemAvailable from /proc/meminfo, lowered to the cgroup's
// memory.max minus memory.current when the process runs under a cgroup (v2) limit. -1 when unknown.
int64_t AvailableBytes();
// This process's resident set size in bytes (/proc/self/statm); 0 when unknown.
int64_t ResidentBytes();
// The most this process has held resident since it started (getrusage ru_maxrss, file-backed pages such as mapped
// files included); 0 when unknown.
int64_t PeakResidentBytes();
// The anonymous (private) part of the resident set now: RssAnon from /proc/self/status (heap, copies; not mapped
// files nor shared libraries); -1 when the kernel does not report it.
int64_t AnonResidentBytes();
// The kernel's high-water mark of the resident set (VmHWM in /proc/self/status): what PeakResidentBytes reports, but
// resettable (ResetPeakResident), so one step's peak can be measured; -1 when the kernel does not report it.
int64_t HighWaterResidentBytes();
// Lowers the high-water mark (VmHWM, and with it getrusage's ru_maxrss) to the current resident set (Linux >= 4.0:
// "5" written to /proc/self/clear_refs); false where that is not allowed.
bool ResetPeakResident();
// Asks the OS to reclaim this process's resident pages in [data, data + bytes) (the whole pages inside the range;
// Linux madvise(MADV_PAGEOUT)): pages of a mapped file that were not written are dropped and come back from the file
// when read again; the contents never change (anonymous pages are swapped out or stay). For a mapped array read once
// (copied or checked) and rarely afterwards. Nothing happens where the OS cannot.
void ReleaseMappedPages(const void* data, int64_t bytes);
// Gives the heap's free pages back to the OS (glibc's malloc_trim: freed chunks below the mmap threshold stay
// resident otherwise), so memory a step freed stops counting before the next step allocates. Nothing under
// AddressSanitizer, whose allocator is not glibc's (there malloc_trim would start glibc's own allocator, racing when
// several threads call it first) and where glibc is not the C library.
void ReturnFreeHeap();
// Keeps what the process frees for its next allocations instead of handing every large block back to the OS at once
// (glibc: blocks up to 32 MiB from the heap rather than fresh mappings, and the heap trimmed only by ReturnFreeHeap),
// for a process that allocates and frees arrays of megabytes round after round (the distributed partitioner: every
// fresh page is a page fault and a zeroed page). Process-wide; nothing under AddressSanitizer or without glibc.
void KeepFreedHeap();

// `--max-memory`: the most this process may hold resident (0 = no limit of its own; the machine's available
// memory still applies). Process-wide; set once by the CLI before work starts.
void SetLimit(int64_t bytes);
int64_t Limit();

// Throws tessel::Error when allocating `bytes` more would exceed --max-memory (resident + bytes) or the machine's
// available memory. `what` says what the memory is for ("the CSR index of 300000000 nodes"); the current Activity
// is added when there is one; `fix` is the option or change that needs less (may be empty).
void Check(int64_t bytes, std::string_view what, std::string_view fix = {});
// Check() for count * element_size bytes with the multiplication checked for overflow.
void CheckArray(int64_t count, int64_t element_size, std::string_view what, std::string_view fix = {});

// "1.5 GiB", "512 MiB", "12 KiB", "100 B".
std::string FormatBytes(int64_t bytes);
// "4G", "512M", "1.5GiB", "800k", "1000000" (bytes): binary units (k/K = 1024). Throws tessel::Error naming `flag`
// on anything else, a negative size or one beyond int64. "0" is 0.
int64_t ParseSize(std::string_view text, std::string_view flag);

// What the process is doing, for messages about memory ("reading cora.content", "building the halo of part 3").
// RAII and nested: the innermost live Activity is current. When an exception leaves an Activity's scope, its text
// is kept as FailedActivity(), so main() can say what was running when std::bad_alloc came.
class Activity {
 public:
  explicit Activity(std::string text);
  ~Activity();
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

 private:
  std::string previous_;
  int exceptions_at_start_;
};
std::string CurrentActivity();  // empty when none
std::string FailedActivity();   // the innermost activity an exception left, or empty

// The message main() prints for a std::bad_alloc: what was running, the memory available and the fix.
std::string OutOfMemoryMessage();

// Decompression limits (readers of .gz/.bz2 input): the inflated text may be at most `ratio` times the compressed
// size (0 = no ratio limit) and is checked against the memory budget as it grows. Defaults: ratio 1000.
struct InflateLimits {
  double max_ratio = 1000;
};
void SetInflateLimits(const InflateLimits& limits);
InflateLimits GetInflateLimits();
// Throws tessel::Error naming `file` when `inflated` bytes from `compressed` bytes break the ratio limit. (Readers
// also Check() each growth of the inflated text against the memory budget.)
void CheckInflated(std::string_view file, int64_t compressed, int64_t inflated);

}  // namespace tessel::memory
