// Context: where and how a computation runs (device, seed, threads, rank, GEMM precision). Libraries pick their CPU
// or CUDA operation table from it with SelectOps (core/device_ops.h); asking a CPU-only build for CUDA fails at run
// time with "built without CUDA".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/device.h"
#include "core/error.h"
#include "core/gemm_math.h"

namespace tessel {

// kSim: the simulated device (core/device.h), a testing device that runs the CUDA code paths on host memory.
enum class Device { kCpu, kCuda, kSim };

Device ParseDevice(std::string_view name);
// The rank's index among the ranks of its node, from the launcher's environment (Open MPI's
// OMPI_COMM_WORLD_LOCAL_RANK, MPICH's MPI_LOCALRANKID, Slurm's SLURM_LOCALID); -1 when not launched by one.
int LocalRankFromEnvironment();
// The CUDA device of this rank: `requested` when >= 0, else local rank modulo the visible devices (one GPU per
// rank on a node; ranks share GPUs round-robin when there are more ranks than GPUs), else 0.
int ChooseCudaDevice(int requested);  // "cpu" | "cuda"; throws naming the accepted values
std::string_view DeviceName(Device device);

struct Context {
  Device device = Device::kCpu;
  int device_id = 0;  // CUDA device ordinal (one GPU per rank: local rank -> device)
  uint64_t seed = 0;  // root of every RNG stream of the run
  int threads = 0;    // 0 = all hardware threads
  int rank = 0;
  int world_size = 1;
  // Dense products on CUDA (--math): the kernels' GEMM reads it from the context it runs with, so two contexts in
  // one process (two Python calls, two tests) keep their own; the CPU computes float32 either way.
  GemmMath gemm_math = GemmMath::kFp32;

  bool IsCuda() const { return device == Device::kCuda || device == Device::kSim; }  // the device code paths

  // Throws tessel::Error unless this build has CUDA and device_id names an existing device.
  void RequireCuda() const;
  // On a device, makes device_id the calling thread's current device (one GPU per rank: every allocation, copy and
  // kernel goes there, not to device 0; throws the --device error when it does not exist); nothing on the CPU.
  void MakeCurrent() const;
};

}  // namespace tessel
