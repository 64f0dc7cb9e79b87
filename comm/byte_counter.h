// ByteCounter: bytes a rank sent through its communicator, split by purpose tag ("features", "gradients", ...).
// One counter per communicator (per rank); not thread-safe, like the communicator it belongs to.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace tessel::comm {

// The tag used when a caller names no purpose.
inline constexpr std::string_view kUntagged = "other";

class ByteCounter {
 public:
  struct Entry {
    uint64_t bytes = 0;  // payload bytes this rank contributed for other ranks (docs/comm.md, "Byte accounting")
    uint64_t calls = 0;  // collectives that completed successfully
  };

  void Add(std::string_view purpose, uint64_t bytes);
  uint64_t Total() const { return total_; }
  uint64_t TotalCalls() const { return total_calls_; }
  // Bytes under one purpose (0 when never used).
  uint64_t Bytes(std::string_view purpose) const;
  const std::map<std::string, Entry, std::less<>>& ByPurpose() const { return by_purpose_; }
  void Reset();

 private:
  std::map<std::string, Entry, std::less<>> by_purpose_;
  uint64_t total_ = 0;
  uint64_t total_calls_ = 0;
};

}  // namespace tessel::comm
