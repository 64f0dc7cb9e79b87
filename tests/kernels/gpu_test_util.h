// Shared pieces of the device-parameterised kernel tests (*_gpu_test.cc): the fixture over {cpu, cuda} that
// skips cuda without a GPU, NaN poisoning of outputs, and the float32 accumulation bound used as tolerance.
// An instantiation named "Simulated" (TESSEL_SIMULATED_DEVICE_SUITE) runs the cuda cases on the simulated device
// (core/device.h): the CUDA wrappers' data flow over host twins of the raw kernels, in every build.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/context.h"
#include "core/device.h"
#include "kernels/matrix.h"

namespace tessel::kernels::testing {

class OnDevice : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    const std::string suite = ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name();
    if (suite.rfind("Simulated/", 0) == 0) sim_ = std::make_unique<device::ScopedSimulatedDevice>();
    if (GetParam() == Device::kCuda && device::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    ctx_.device = GetParam();
  }
  void TearDown() override { sim_.reset(); }
  std::unique_ptr<device::ScopedSimulatedDevice> sim_;
  bool cuda() const { return ctx_.IsCuda(); }
  Context ctx_;
  const Context cpu_{};  // the CPU twin, the oracle of the CUDA instances
};

// The cuda cases of `fixture` once more on the simulated device.
#define TESSEL_SIMULATED_DEVICE_SUITE(fixture)                                             \
  INSTANTIATE_TEST_SUITE_P(Simulated, fixture, ::testing::Values(::tessel::Device::kCuda), \
                           ::tessel::kernels::testing::DeviceParamName)

inline std::string DeviceParamName(const ::testing::TestParamInfo<Device>& info) {
  return std::string(DeviceName(info.param));
}

// A matrix of the given shape filled with NaN, so a kernel that leaves any output unwritten fails the test.
inline Matrix Poisoned(int64_t rows, int64_t cols) {
  return Matrix(rows, cols,
                std::vector<float>(static_cast<size_t>(rows * cols), std::numeric_limits<float>::quiet_NaN()));
}

// Error bound of a float32 dot product of length k whose terms have absolute sum `abs_sum` (Higham's gamma_k
// with unit roundoff 2^-24, doubled for the reference's own rounding to float and for reordered summation).
inline double DotTolerance(int64_t k, double abs_sum) {
  return 2.0 * static_cast<double>(k + 2) * 0x1.0p-24 * abs_sum + 1e-30;
}

}  // namespace tessel::kernels::testing
