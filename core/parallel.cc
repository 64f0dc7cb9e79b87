// ThreadLimit: a tbb::global_control holding the worker count for the lifetime of a scope.
// Used by the CLI's --threads option and by benchmarks that compare 1 and N threads.
#include "core/parallel.h"

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

}  // namespace tessel
