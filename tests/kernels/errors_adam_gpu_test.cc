// Device errors and Adam on {cpu, cuda}: CUDA / cuBLAS / cuSPARSE failures become tessel::Error carrying the
// library's own message, cuda in a CPU-only build throws "built without CUDA", and Adam matches a float64 loop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/build_config.h"
#include "core/device.h"
#include "kernels/dense.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "train/gcn/optimizer.h"
#if TESSEL_HAVE_CUDA
#include "core/cuda_check.h"
#endif

namespace tessel::kernels {
namespace {

using ::testing::HasSubstr;
using testing::RandomMatrix;

std::string MessageOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(DeviceErrors, CudaInACpuOnlyBuildSaysBuiltWithoutCuda) {
  if (device::BuiltWithCuda()) GTEST_SKIP() << "this build has CUDA";
  Context ctx;
  ctx.device = Device::kCuda;
  Matrix c;
  EXPECT_THAT(MessageOf([&] { Gemm(ctx, Matrix(2, 2), false, Matrix(2, 2), false, 1.0F, 0.0F, &c); }),
              HasSubstr("built without CUDA"));
}

TEST(DeviceErrors, CudaWithoutADeviceSaysSoBeforeRunning) {
  if (!device::BuiltWithCuda() || device::CudaDeviceCount() > 0) GTEST_SKIP() << "needs a CUDA build without GPU";
  Context ctx;
  ctx.device = Device::kCuda;
  Matrix y;
  EXPECT_THAT(MessageOf([&] { Relu(ctx, Matrix(2, 2), &y); }), HasSubstr("no CUDA device"));
}

#if TESSEL_HAVE_CUDA
TEST(DeviceErrors, LibraryStatusesCarryTheLibraryMessage) {
  // The checking macros need no device: each status becomes an Error naming the status and the call.
  EXPECT_THAT(MessageOf([] { TESSEL_CUBLAS_CHECK(CUBLAS_STATUS_INVALID_VALUE); }),
              HasSubstr("CUBLAS_STATUS_INVALID_VALUE"));
  EXPECT_THAT(MessageOf([] { TESSEL_CUSPARSE_CHECK(CUSPARSE_STATUS_NOT_SUPPORTED); }),
              HasSubstr("CUSPARSE_STATUS_NOT_SUPPORTED"));
  EXPECT_THAT(MessageOf([] { TESSEL_CUDA_CHECK(cudaErrorInvalidValue); }), HasSubstr("cudaErrorInvalidValue"));
}

// cuBLAS and cuSPARSE are opened at their first call (core/cuda_libs.cu): a fresh process maps neither, and the first
// call of each maps that library alone and reaches its real function. The threadsafe death-test style runs the check
// in a child that re-executes only this test, so nothing earlier in this binary has touched the libraries.
bool Mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(LazyCudaLibraries, MappedOnlyAfterTheirFirstCall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        bool ok = !Mapped("libcublas") && !Mapped("libcusparse");
        ok = ok && std::string(cusparseGetErrorName(CUSPARSE_STATUS_SUCCESS)) == "CUSPARSE_STATUS_SUCCESS";
        ok = ok && Mapped("libcusparse") && !Mapped("libcublas");
        ok = ok && std::string(cublasGetStatusName(CUBLAS_STATUS_SUCCESS)) == "CUBLAS_STATUS_SUCCESS";
        ok = ok && Mapped("libcublas");
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(DeviceErrors, AFailingCudaCallBecomesAnError) {
  if (device::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  // 2^50 bytes cannot be allocated: cudaMalloc fails and its message reaches the caller.
  EXPECT_THAT(MessageOf([] { device::Malloc(size_t{1} << 50); }), HasSubstr("cudaErrorMemoryAllocation"));
  // The runtime is still usable afterwards (allocation failures are not sticky).
  Context ctx;
  ctx.device = Device::kCuda;
  Matrix y;
  Relu(ctx, RandomMatrix(3, 3, 1), &y);
  EXPECT_EQ(y.rows, 3);
}
#endif

class AdamOnDevice : public testing::OnDevice {};

TEST_P(AdamOnDevice, ThreeStepsMatchFloat64Loop) {
  train::gcn::AdamConfig config;
  config.lr = 0.05F;
  config.weight_decay = 0.01F;
  std::vector<train::gcn::Param> params;
  params.push_back({"w", RandomMatrix(33, 7, 1), RandomMatrix(33, 7, 2), true});
  params.push_back({"b", RandomMatrix(1, 1, 3), RandomMatrix(1, 1, 4), false});
  params.push_back({"empty", Matrix(0, 3), Matrix(0, 3), true});
  std::vector<std::vector<double>> w, m, v;
  for (const auto& p : params) {
    w.push_back(testing::ToDouble(p.value));
    m.emplace_back(w.back().size(), 0.0);
    v.emplace_back(w.back().size(), 0.0);
  }
  train::gcn::Adam adam(config);
  for (int step = 1; step <= 3; ++step) {
    for (size_t k = 0; k < params.size(); ++k)
      params[k].grad =
          RandomMatrix(params[k].grad.rows, params[k].grad.cols, 100 + static_cast<uint64_t>(step * 10 + k));
    adam.Step(ctx_, params);
    const double c1 = 1.0 - std::pow(0.9, step);
    const double c2 = 1.0 - std::pow(0.999, step);
    for (size_t k = 0; k < params.size(); ++k) {
      const double wd = params[k].decay ? 0.01 : 0.0;
      for (size_t i = 0; i < w[k].size(); ++i) {
        const double g = params[k].grad.View()[i] + wd * w[k][i];
        m[k][i] = 0.9 * m[k][i] + 0.1 * g;
        v[k][i] = 0.999 * v[k][i] + 0.001 * g * g;
        w[k][i] -= 0.05 / c1 * m[k][i] / (std::sqrt(v[k][i] / c2) + 1e-8);
        // Each step moves w by at most about lr; float32 arithmetic keeps it within a few ulps of that scale.
        ASSERT_NEAR(params[k].value.View()[i], w[k][i], 1e-5) << params[k].name << " step " << step << " i=" << i;
      }
    }
  }
  if (cuda()) {  // same float32 operation order as the CPU: bit-identical
    std::vector<train::gcn::Param> cpu_params;
    for (const auto& p : params) cpu_params.push_back({p.name, p.value.Clone(), p.grad.Clone(), p.decay});
    train::gcn::Adam cpu_adam(config);
    cpu_adam.Restore(adam.steps(), {});
    for (auto& mm : adam.moments()) cpu_adam.moments().push_back(mm.Clone());
    adam.Step(ctx_, params);
    cpu_adam.Step(cpu_, cpu_params);
    for (size_t k = 0; k < params.size(); ++k)
      for (size_t i = 0; i < params[k].value.data.size(); ++i)
        ASSERT_EQ(params[k].value.View()[i], cpu_params[k].value.View()[i]) << params[k].name << " " << i;
  }
}

// AdamStepMany over more tensors than one batch holds (with an empty one): each tensor bit for bit as its own
// AdamStep on the same device, with its own weight decay; on a device one launch per 8 tensors with elements.
TEST_P(AdamOnDevice, ManyTensorsInOneLaunchMatchOneStepEach) {
  const AdamStepParams hp{0.0F, 0.9F, 0.999F, 0.07F, 1.3F, 1e-8F};
  constexpr int kTensors = 11;
  std::vector<Matrix> w, g, m, v, w1, m1, v1;
  std::vector<AdamTensor> tensors;
  for (int t = 0; t < kTensors; ++t) {
    const int64_t rows = t == 4 ? 0 : 3 + t * 7;  // tensor 4 empty
    const auto seed = static_cast<uint64_t>(10 * t);
    w.push_back(RandomMatrix(rows, 5, seed + 1));
    g.push_back(RandomMatrix(rows, 5, seed + 2));
    m.push_back(RandomMatrix(rows, 5, seed + 3));
    v.push_back(RandomMatrix(rows, 5, seed + 4));
    for (float& x : v.back().data.MutableHost()) x = std::fabs(x);
    w1.push_back(w.back().Clone());
    m1.push_back(m.back().Clone());
    v1.push_back(v.back().Clone());
  }
  for (int t = 0; t < kTensors; ++t) tensors.push_back({&g[t], &w[t], &m[t], &v[t], t % 3 == 0 ? 0.01F : 0.0F});
  const device::Counters before = device::ReadCounters();
  AdamStepMany(ctx_, hp, tensors);
  const device::Counters d = device::ReadCounters() - before;
  if (cuda()) {
    EXPECT_EQ(d.launches, 2) << "10 tensors with elements: 8, then 2";
  }
  for (int t = 0; t < kTensors; ++t) {
    AdamStepParams one = hp;
    one.weight_decay = tensors[static_cast<size_t>(t)].weight_decay;
    AdamStep(ctx_, one, g[t], &w1[t], &m1[t], &v1[t]);
    EXPECT_EQ(w[t].data.ToVector(), w1[t].data.ToVector()) << "tensor " << t;
    EXPECT_EQ(m[t].data.ToVector(), m1[t].data.ToVector()) << "tensor " << t;
    EXPECT_EQ(v[t].data.ToVector(), v1[t].data.ToVector()) << "tensor " << t;
  }
  Matrix short_grad(2, 5);
  const AdamTensor bad{&short_grad, &w[0], &m[0], &v[0], 0.0F};
  EXPECT_THROW(AdamStepMany(ctx_, hp, std::span<const AdamTensor>(&bad, 1)), Error);
}

INSTANTIATE_TEST_SUITE_P(Devices, AdamOnDevice, ::testing::Values(Device::kCpu, Device::kCuda),
                         testing::DeviceParamName);
TESSEL_SIMULATED_DEVICE_SUITE(AdamOnDevice);

}  // namespace
}  // namespace tessel::kernels
