// A device solve's runtime work (core/device.h counters), kept by the device loop (device_loop.h's LoopResult) and
// handed on in every solver's result (SolverResult::device, smo_solver.h; all zero but on the device loop).
// C++17 (the .cu files include device_loop.h).
#pragma once

#include <cstdint>

#include "core/device.h"

namespace tessel::svm {

struct RoundCounts {
  int64_t rounds = 0;
  // Between the end of the setup and the final downloads, and of that after the first round.
  device::Counters loop;
  device::Counters after_first_round;
  // The most one round (with the selection after it) made.
  int64_t max_round_launches = 0;
  int64_t max_round_downloads = 0;
};

}  // namespace tessel::svm
