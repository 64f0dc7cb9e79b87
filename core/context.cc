// Device parsing and the CUDA availability check behind SelectOps (core/device_ops.h).
// Kept out of the header so callers do not pull in the device runtime.
#include "core/context.h"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace tessel {

Device ParseDevice(std::string_view name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  if (name == "sim") return Device::kSim;
  throw Error(fmt::format("unknown device '{}' (use cpu or cuda; sim for the simulated testing device)", name));
}

std::string_view DeviceName(Device device) {
  switch (device) {
    case Device::kCuda:
      return "cuda";
    case Device::kSim:
      return "sim";
    default:
      return "cpu";
  }
}

GemmMath ParseGemmMath(std::string_view name) {
  if (name == "fp32") return GemmMath::kFp32;
  if (name == "tf32") return GemmMath::kTf32;
  throw Error(fmt::format("unknown math '{}': use fp32 (exact float32) or tf32 (tensor cores, CUDA only)", name));
}

int LocalRankFromEnvironment() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r < (1L << 30)) return static_cast<int>(r);
  }
  return -1;
}

int ChooseCudaDevice(int requested) {
  if (requested >= 0) return requested;
  const int local = LocalRankFromEnvironment();
  const int count = device::CudaDeviceCount();
  return (local >= 0 && count > 0) ? local % count : 0;
}

void Context::MakeCurrent() const {
  if (!IsCuda()) return;
  if (device == Device::kSim) device::UseSimulatedDevice();  // from here on, this process's device is simulated
  RequireCuda();
  device::SetDevice(device_id);
}

void Context::RequireCuda() const {
  if (!device::BuiltWithCuda() && !device::Simulated()) {
    throw Error("--device cuda: this tessel was built without CUDA (rebuild with -DTESSEL_CUDA=ON and nvcc on PATH)");
  }
  const int count = device::CudaDeviceCount();
  TESSEL_CHECK(count > 0, "--device cuda: no CUDA device is visible ({})", device::Describe(0));
  TESSEL_CHECK(device_id >= 0 && device_id < count, "--device cuda: device {} does not exist ({} visible)", device_id,
               count);
}

}  // namespace tessel
