// The options every job shares, declared once (core/params.h) for the command line and Python alike: where it runs
// (--device, --device-id, --math), how many threads, the seed, --force, --json and --timeout. A job's options
// struct lists the pieces it takes in its own Params; `MakeContext` is the one place a Context is built from them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "comm/communicator.h"
#include "core/context.h"
#include "core/params.h"

namespace tessel {

TESSEL_ENUM_NAMES_PARSED(Device, ParseDevice, {Device::kCpu, "cpu"}, {Device::kCuda, "cuda"}, {Device::kSim, "sim"});

TESSEL_ENUM_NAMES_PARSED(GemmMath, ParseGemmMath, {GemmMath::kFp32, "fp32"}, {GemmMath::kTf32, "tf32"});

}  // namespace tessel

namespace tessel::app {

// The most worker threads a --threads option takes: more is a typo (and would fail to start the threads).
inline constexpr int kMaxThreads = 4096;

// --device and --device-id (and --math where dense products run on the device).
struct DeviceOptions {
  Device device = Device::kCpu;
  int device_id = -1;  // -1: the rank's local rank modulo the visible GPUs
  GemmMath math = GemmMath::kFp32;
  bool has_math = false;  // whether the job offers --math (set by the job's options, not by the user)

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"device",
                "cpu or cuda; sim is a testing device: the CUDA code paths on a simulated GPU in host memory (every "
                "kernel a host twin), counting launches, copies, allocations and synchronisations as a GPU would "
                "(slow; no GPU needed)"},
      c.device);
    v(ParamInfo{"device_id",
                "CUDA device ordinal; -1 = the rank's local rank modulo the visible GPUs (one GPU per rank)"}
          .Range(-1, 1 << 20),
      c.device_id);
    if (c.has_math) {
      v(ParamInfo{"math",
                  "Dense products on CUDA: fp32 (exact float32) or tf32 (tensor cores: inputs rounded to 10 mantissa "
                  "bits, faster on Ampere and later); the CPU always computes float32"},
        c.math);
    }
  }
};

// --threads.
struct ThreadOptions {
  int threads = 0;
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"threads", "Worker threads; 0 = all cores (a distributed gcn run: shared among the host's ranks)"}
          .Range(0, kMaxThreads),
      c.threads);
  }
};

// --timeout: how long a rank waits for the others under mpirun.
struct TimeoutOption {
  double timeout = comm::Communicator::kDefaultTimeoutSeconds;
  std::string_view group = {};
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"timeout",
                "Under mpirun: seconds a collective or message may wait for the other ranks before the whole job ends "
                "with a message naming the ranks that did not answer (a stopped or hung rank); 0 = no limit"}
          .Group(c.group)
          .Cli()
          .Range(0),
      c.timeout);
  }
};

// The options of the `tessel` command itself, before or after the subcommand: the log level and the memory limits.
struct GlobalOptions {
  std::string log_level = "info";
  std::string max_memory = "0";
  double max_inflate_ratio = 0;  // set from memory::InflateLimits by the constructor
  GlobalOptions();

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"log_level", "trace, debug, info, warn, error or off"}.Cli(), c.log_level);
    v(ParamInfo{"max_memory",
                "Most memory this process may hold (e.g. 8G, binary units); larger allocations are refused with a "
                "message before they are made. 0: only the machine's available memory limits"}
          .Cli(),
      c.max_memory);
    v(ParamInfo{"max_inflate_ratio",
                "Largest size ratio a .gz/.bz2 input may inflate to before it is refused as a decompression bomb (0: "
                "no limit)"}
          .Cli()
          .Range(0),
      c.max_inflate_ratio);
  }
  // Sets the process's log level and memory limits (each refusal names its option).
  void Apply() const;
};

// LIBSVM's own command lines (svm-train's, svm-predict's): their positional FILES (at most max_files) and -q, both
// for the command line only. Files and quiet are the job's fields (or const fields when describing).
template <typename V, typename Files, typename Quiet>
void LibsvmFormParams(V&& v, std::string_view files_help, int max_files, std::string_view quiet_help, Files& files,
                      Quiet& quiet) {
  v(ParamInfo{"files", files_help}.Flags("files").Cli().Values(max_files), files);
  v(ParamInfo{"quiet", quiet_help}.Flags("-q,--quiet").Cli(), quiet);
}

// The one place a run's Context is built: the device (checked to exist when it is CUDA), its ordinal for this rank,
// the GEMM precision, the seed and the threads.
Context MakeContext(const DeviceOptions& device, uint64_t seed, int threads);

// Where a job writes what the command line prints on stdout (progress and logs go to the log): the CLI passes
// stdout; a caller that wants the text collects it. Called with fmt's format strings: say("nodes {}\n", n).
class Printer {
 public:
  explicit Printer(std::function<void(std::string_view)> sink) : sink_(std::move(sink)) {}
  template <typename... Args>
  void operator()(fmt::format_string<Args...> format, Args&&... args) const {
    sink_(fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  std::function<void(std::string_view)> sink_;
};

// What an input option names: anything that exists (a file or a folder), a regular file, or a regular file or a
// native dataset folder (one with a manifest.json).
enum class InputKind { kAny, kFile, kFileOrDatasetFolder };

// An input path given by `option` must exist and be of `kind`, checked before any work (and before the outputs are
// checked against it: that the input is not a file is the more basic problem). An empty path passes.
void CheckInput(const std::string& path, std::string_view option, InputKind kind = InputKind::kAny);

}  // namespace tessel::app
