// Device parsing and the CUDA availability check behind Context::Dispatch.
// Kept out of the header so callers do not pull in the device runtime.
#include "core/context.h"

#include <fmt/format.h>

namespace tessel {

Device ParseDevice(std::string_view name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  throw Error(fmt::format("unknown device '{}' (use cpu or cuda)", name));
}

std::string_view DeviceName(Device device) { return device == Device::kCuda ? "cuda" : "cpu"; }

void Context::RequireCuda() const {
  if (!device::BuiltWithCuda()) {
    throw Error("--device cuda: this tessel was built without CUDA (rebuild with -DTESSEL_CUDA=ON and nvcc on PATH)");
  }
  const int count = device::CudaDeviceCount();
  TESSEL_CHECK(count > 0, "--device cuda: no CUDA device is visible ({})", device::Describe(0));
  TESSEL_CHECK(device_id >= 0 && device_id < count, "--device cuda: device {} does not exist ({} visible)", device_id,
               count);
}

}  // namespace tessel
