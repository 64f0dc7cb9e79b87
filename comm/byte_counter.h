// ByteCounter: bytes a rank sent through its communicator, split by purpose tag ("features", "gradients", ...).
// One counter per communicator (per rank); not thread-safe, like the communicator it belongs to.
#pragma once

#include <chrono>
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
  double modeled = 0;  // the calls' seconds on the network attached to the counter (SetCallModel); 0 without one
  double cpu = 0;      // CPU seconds the calling thread spent inside the calls (recorded with a call model only)
  void Add(const CallCost& o) {
    seconds += o.seconds;
    latency += o.latency;
    volume += o.volume;
    modeled += o.modeled;
    cpu += o.cpu;
  }
  // What was recorded since `before`, a running total taken earlier (term by term).
  CallCost Since(const CallCost& before) const {
    return {seconds - before.seconds, latency - before.latency, volume - before.volume, modeled - before.modeled,
            cpu - before.cpu};
  }
};

// Times one call on a modelled network: given the call's measured cost and the seconds since the previous modelled
// call ended (the link idle meanwhile), its seconds there (comm::NetworkModel::Attach; a token bucket keeps state).
using CallModel = std::function<double(const CallCost& cost, double idle_seconds)>;

class ByteCounter {
 public:
  struct Entry {
    uint64_t bytes = 0;  // payload bytes this rank contributed for other ranks (docs/comm.md, "Byte accounting")
    uint64_t calls = 0;  // collectives that completed successfully
    CallCost cost;
  };

  // Records one call; with a call model its cost's `modeled` is filled in first (a call that cost nothing is not
  // modelled: a message to itself).
  void Add(std::string_view purpose, uint64_t bytes, CallCost cost = {});
  // Every call recorded from now on is also timed on this model (NetworkModel::Attach); kept by Reset.
  void SetCallModel(CallModel model);
  bool Modelled() const { return static_cast<bool>(model_); }  // a call model is set (calls' CPU is then recorded)
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
  CallModel model_;
  std::chrono::steady_clock::time_point last_end_{};  // when the previous modelled call ended
};

}  // namespace tessel::comm
