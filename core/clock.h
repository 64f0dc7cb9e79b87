// Wall-clock seconds for the timings every layer reports (epochs, exchanges, codecs): one steady clock, one helper.
#pragma once

#include <chrono>
#include <ctime>

namespace tessel {

// Seconds elapsed on the steady clock since `since`.
inline double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// CPU seconds this thread (or this process, every thread) has run: what work costs, as against the wall time that
// also counts waiting and being descheduled (the time model's CPU bound, docs/comm.md "Time model").
inline double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
inline double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace tessel
