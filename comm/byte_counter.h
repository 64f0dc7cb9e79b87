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

// What calls cost this rank: the seconds spent inside them (waiting for peers included) and the terms of the
// alpha-beta model of the standard algorithm for each call (comm/net_model.h; docs/comm.md, "Time model").
struct CallCost {
  double seconds = 0;  // measured inside the calls
  double latency = 0;  // message latencies (alpha) on this rank's critical path
  double volume = 0;   // bytes through this rank's busiest link (each costs 1 / bandwidth)
  void Add(const CallCost& o) {
    seconds += o.seconds;
    latency += o.latency;
    volume += o.volume;
  }
  // What was recorded since `before`, a running total taken earlier (term by term).
  CallCost Since(const CallCost& before) const {
    return {seconds - before.seconds, latency - before.latency, volume - before.volume};
  }
};

class ByteCounter {
 public:
  struct Entry {
    uint64_t bytes = 0;  // payload bytes this rank contributed for other ranks (docs/comm.md, "Byte accounting")
    uint64_t calls = 0;  // collectives that completed successfully
    CallCost cost;
  };

  void Add(std::string_view purpose, uint64_t bytes, const CallCost& cost = {});
  const CallCost& TotalCost() const { return total_cost_; }
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
  CallCost total_cost_;
};

}  // namespace tessel::comm
