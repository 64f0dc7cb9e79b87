// ByteCounter: per-purpose totals of the bytes a rank sent through its communicator.
// A std::map with heterogeneous lookup, so counting a collective allocates only the first time a tag appears.
#include "comm/byte_counter.h"

namespace tessel::comm {

void ByteCounter::Add(std::string_view purpose, uint64_t bytes, const CallCost& cost) {
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

void ByteCounter::Reset() {
  by_purpose_.clear();
  total_ = 0;
  total_calls_ = 0;
  total_cost_ = CallCost{};
}

}  // namespace tessel::comm
