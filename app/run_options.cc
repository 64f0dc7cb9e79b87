#include "app/run_options.h"

#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "core/log.h"
#include "core/memory_budget.h"

namespace tessel::app {

GlobalOptions::GlobalOptions() : max_inflate_ratio(memory::InflateLimits{}.max_ratio) {}

void GlobalOptions::Apply() const {
  try {
    log::SetLevel(log::ParseLevel(log_level));
  } catch (const Error& e) {
    throw Error(fmt::format("--log-level: {}", e.what()));
  }
  memory::SetLimit(memory::ParseSize(max_memory, "--max-memory"));
  memory::SetInflateLimits({max_inflate_ratio});
}

Context MakeContext(const DeviceOptions& device, uint64_t seed, int threads) {
  Context ctx;
  ctx.device = device.device;
  ctx.gemm_math = device.math;
  ctx.device_id = ctx.IsCuda() ? ChooseCudaDevice(device.device_id) : 0;
  ctx.seed = seed;
  ctx.threads = threads;
  ctx.MakeCurrent();  // checks the device exists, and makes it this thread's
  return ctx;
}

void CheckInput(const std::string& path, std::string_view option) {
  std::error_code ec;
  TESSEL_CHECK(path.empty() || std::filesystem::exists(path, ec), "{} {}: no such file or folder", option, path);
}

}  // namespace tessel::app
