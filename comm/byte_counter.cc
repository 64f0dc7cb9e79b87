// ByteCounter: per-purpose totals of the bytes a rank sent through its communicator.
// A std::map with heterogeneous lookup, so counting a collective allocates only the first time a tag appears.
#include "comm/byte_counter.h"

#include <algorithm>
#include <utility>

namespace tessel::comm {

void ByteCounter::Add(std::string_view purpose, uint64_t bytes, CallCost cost) {
  if (model_ && (cost.seconds > 0 || cost.latency > 0 || cost.volume > 0)) {
    const auto now = std::chrono::steady_clock::now();
    const auto start = now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(cost.seconds));
    // Before the first call last_end_ is the clock's epoch: a long idle spell (a bucket starts full anyway).
    cost.modeled = model_(cost, std::max(0.0, std::chrono::duration<double>(start - last_end_).count()));
    last_end_ = now;
  }
  auto it = by_purpose_.find(purpose);
  if (it == by_purpose_.end()) it = by_purpose_.emplace(std::string(purpose), Entry{}).first;
  it->second.bytes += bytes;
  it->second.calls += 1;
  it->second.cost.Add(cost);
  total_ += bytes;
  total_calls_ += 1;
  total_cost_.Add(cost);
}

uint64_t ByteCounter::Bytes(std::string_view purpose) const {
  auto it = by_purpose_.find(purpose);
  return it == by_purpose_.end() ? 0 : it->second.bytes;
}

void ByteCounter::SetCallModel(CallModel model) { model_ = std::move(model); }

void ByteCounter::Reset() {
  by_purpose_.clear();
  total_ = 0;
  total_calls_ = 0;
  total_cost_ = CallCost{};
}

}  // namespace tessel::comm
