// Wall-clock seconds for the timings every layer reports (epochs, exchanges, codecs): one steady clock, one helper.
#pragma once

#include <chrono>

namespace tessel {

// Seconds elapsed on the steady clock since `since`.
inline double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace tessel
