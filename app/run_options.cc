#include "app/run_options.h"

#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "core/file_io.h"
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

void CheckInput(const std::string& path, std::string_view option, InputKind kind) {
  if (path.empty()) return;
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(path, ec);
  if (kind == InputKind::kFile || (kind == InputKind::kFileOrDatasetFolder && !folder)) {
    CheckInputIsFile(path, option);  // a folder, device, pipe or socket is named as what it is
    return;
  }
  TESSEL_CHECK(std::filesystem::exists(path, ec), "{} {}: no such file or folder", option, path);
  TESSEL_CHECK(kind != InputKind::kFileOrDatasetFolder || std::filesystem::exists(path + "/manifest.json", ec),
               "{} {} is a folder but not a dataset folder (no manifest.json); give the data file, or a folder "
               "written by tessel convert",
               option, path);
}

}  // namespace tessel::app
