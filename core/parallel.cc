// ThreadLimit: a tbb::global_control holding the worker count for the lifetime of a scope.
// Used by the CLI's --threads option and by benchmarks that compare 1 and N threads.
#include "core/parallel.h"

#include <algorithm>
#include <thread>

#include <tbb/global_control.h>
#include <tbb/info.h>

#include "core/error.h"

namespace tessel {

struct ThreadLimit::Impl {
  std::unique_ptr<tbb::global_control> control;
};

ThreadLimit::ThreadLimit(int threads) : impl_(std::make_unique<Impl>()) {
  TESSEL_CHECK(threads >= 0, "--threads must be >= 0 (0 = all hardware threads), got {}", threads);
  if (threads > 0) {
    impl_->control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                           static_cast<size_t>(threads));
  }
}

ThreadLimit::~ThreadLimit() = default;

int ThreadLimit::HardwareThreads() { return tbb::info::default_concurrency(); }

int ThreadLimit::Current() {
  const auto active = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  return std::max(1, std::min(HardwareThreads(), static_cast<int>(active)));
}

double ThreadLimit::CoresPerRank(int local_ranks) {
  const double machine = std::max(1U, std::thread::hardware_concurrency());
  return std::min(static_cast<double>(HardwareThreads()), machine / std::max(local_ranks, 1));
}

}  // namespace tessel
