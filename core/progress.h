// Progress of long work on stderr: a Progress scope logs "what: done/total unit (p%), elapsed, about T left" from a
// background thread every interval (10 s by default) while it is alive, so sampling a hub's whole neighbourhood,
// partitioning or an SVM solve never leaves the user without a line for long. Work that ends within the first
// interval prints nothing. Add() is a relaxed atomic increment, cheap enough for inner loops.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace tessel {

class Progress {
 public:
  // total 0: the amount of work is unknown (done and elapsed are shown, no percentage or estimate).
  explicit Progress(std::string what, int64_t total = 0, std::string unit = "");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Add(int64_t n = 1) { done_.fetch_add(n, std::memory_order_relaxed); }
  void Set(int64_t done) { done_.store(done, std::memory_order_relaxed); }
  int64_t Done() const { return done_.load(std::memory_order_relaxed); }
  // Lines logged so far (tests).
  int Reports() const { return reports_.load(); }

  // The line a report prints after `elapsed` seconds (tests).
  std::string Line(double elapsed) const;

  // Seconds between reports, process-wide (tests lower it). Default 10.
  static void SetInterval(double seconds);
  static double Interval();

 private:
  void Run();

  std::string what_;
  int64_t total_;
  std::string unit_;
  std::atomic<int64_t> done_{0};
  std::atomic<int> reports_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tessel
