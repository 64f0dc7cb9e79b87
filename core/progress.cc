// Progress reports (core/progress.h).
#include "core/progress.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/log.h"

namespace tessel {
namespace {
std::atomic<double> g_interval{10.0};

std::string Duration(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}
}  // namespace

void Progress::SetInterval(double seconds) { g_interval.store(std::max(seconds, 0.001)); }
double Progress::Interval() { return g_interval.load(); }

Progress::Progress(std::string what, int64_t total, std::string unit)
    : what_(std::move(what)),
      total_(std::max<int64_t>(total, 0)),
      unit_(std::move(unit)),
      start_(std::chrono::steady_clock::now()) {
  thread_ = std::thread([this] { Run(); });
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

std::string Progress::Line(double elapsed) const {
  const int64_t done = Done();
  const std::string unit = unit_.empty() ? "" : " " + unit_;
  if (total_ <= 0) return fmt::format("{}: {}{} done, {} elapsed", what_, done, unit, Duration(elapsed));
  const double fraction = std::clamp(static_cast<double>(done) / static_cast<double>(total_), 0.0, 1.0);
  std::string eta;
  if (done > 0 && fraction < 1) eta = fmt::format(", about {} left", Duration(elapsed * (1 - fraction) / fraction));
  return fmt::format("{}: {}/{}{} ({:.0f}%), {} elapsed{}", what_, done, total_, unit, 100 * fraction,
                     Duration(elapsed), eta);
}

void Progress::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    const auto wait = std::chrono::duration<double>(Interval());
    if (cv_.wait_for(lock, wait, [this] { return stop_; })) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    log::Info("{}", Line(elapsed));
    reports_.fetch_add(1);
  }
}

}  // namespace tessel
