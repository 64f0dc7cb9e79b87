// Helpers for the comm tests: a watchdog that turns a hang into a failure, and per-rank data every rank can
// regenerate (so each rank checks its result against a serial reference over all ranks' inputs).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "core/rng.h"

namespace tessel::comm::testing {

// Runs fn on its own thread and waits at most `limit`. A hang cannot be recovered (blocked threads cannot be
// joined), so on timeout it reports and aborts the test binary; otherwise it rethrows what fn threw.
inline void WithWatchdog(std::chrono::seconds limit, const std::function<void()>& fn) {
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::thread worker([&] {
    try {
      fn();
      done.set_value();
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  if (finished.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "watchdog: the ranks did not finish within %lld s (a rank hangs)\n",
                 static_cast<long long>(limit.count()));
    std::abort();
  }
  worker.join();
  finished.get();
}

// Deterministic inputs of (trial, rank, what) in [lo, hi].
inline std::vector<int64_t> Ints(uint64_t trial, int rank, uint64_t what, int64_t n, int64_t lo, int64_t hi) {
  Rng rng(StreamKey{.seed = trial, .rank = static_cast<uint64_t>(rank), .purpose = what});
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t& x : v) x = lo + static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(hi - lo + 1)));
  return v;
}
inline std::vector<double> Doubles(uint64_t trial, int rank, uint64_t what, int64_t n) {
  Rng rng(StreamKey{.seed = trial, .rank = static_cast<uint64_t>(rank), .purpose = what});
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = rng.Normal();
  return v;
}
// A size in [0, max] shared by all ranks of a trial (0 and 1 come up often on purpose).
inline int64_t SharedSize(uint64_t trial, uint64_t what, int64_t max) {
  Rng rng(StreamKey{.seed = trial, .purpose = 1000 + what});
  const uint64_t pick = rng.UniformInt(4);
  if (pick == 0) return 0;
  if (pick == 1) return 1;
  return static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(max) + 1));
}

// The size of the point-to-point message rank s sends to rank d in trial t (0 and 1 come up often), known to every
// rank, and its payload: values encode (s, d, position), so a message delivered to the wrong rank or place shows.
inline int64_t MessageSize(uint64_t trial, int s, int d) {
  return SharedSize(trial * 1009 + static_cast<uint64_t>(s * 17 + d), 20, 300);
}
inline std::vector<int64_t> MessagePayload(uint64_t trial, int s, int d) {
  std::vector<int64_t> v = Ints(trial, s, 200 + static_cast<uint64_t>(d), MessageSize(trial, s, d), 0, 999);
  for (size_t k = 0; k < v.size(); ++k) v[k] += 1000 * (s * 100 + d) + 10000000 * static_cast<int64_t>(k);
  return v;
}

}  // namespace tessel::comm::testing
