// Context: device names, and the choice of one CUDA device per rank from the launcher's local rank.
// The environment variables are set and restored inside each test.
#include "core/context.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "core/device.h"

namespace tessel {
namespace {

// Sets (or clears, with nullptr) one environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(Context, ParsesDeviceNamesAndRejectsOthers) {
  EXPECT_EQ(ParseDevice("cpu"), Device::kCpu);
  EXPECT_EQ(ParseDevice("cuda"), Device::kCuda);
  EXPECT_EQ(DeviceName(Device::kCuda), "cuda");
  try {
    ParseDevice("gpu");
    FAIL() << "gpu accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("use cpu or cuda"), std::string::npos) << e.what();
  }
}

TEST(Context, LocalRankComesFromTheLauncher) {
  ScopedEnv a("OMPI_COMM_WORLD_LOCAL_RANK", nullptr);
  ScopedEnv b("MPI_LOCALRANKID", nullptr);
  ScopedEnv c("SLURM_LOCALID", nullptr);
  ScopedEnv d("PMI_LOCAL_RANK", nullptr);
  EXPECT_EQ(LocalRankFromEnvironment(), -1);
  {
    ScopedEnv slurm("SLURM_LOCALID", "5");
    EXPECT_EQ(LocalRankFromEnvironment(), 5);
    ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_RANK", "3");  // Open MPI's variable wins
    EXPECT_EQ(LocalRankFromEnvironment(), 3);
  }
  ScopedEnv junk("OMPI_COMM_WORLD_LOCAL_RANK", "2x");  // not a number: ignored
  EXPECT_EQ(LocalRankFromEnvironment(), -1);
}

TEST(Context, DeviceIsTheRequestedOneOrLocalRankModuloDevices) {
  ScopedEnv a("OMPI_COMM_WORLD_LOCAL_RANK", "7");
  EXPECT_EQ(ChooseCudaDevice(2), 2);
  const int count = device::CudaDeviceCount();
  EXPECT_EQ(ChooseCudaDevice(-1), count > 0 ? 7 % count : 0);
}

}  // namespace
}  // namespace tessel
