// The SVM device loop's data flow and cost against the host batched solvers, on one binary LIBSVM problem: the host
// reference SolveBinaryBatched (every row recomputed each round: the baseline), the host solver with a kernel-row
// cache (`train svm --solver batch`), the device loop on the simulated device (host twins of its raw operations:
// the CUDA path's own allocations, copies and row-cache behaviour, counted) and, with --cuda on a machine with a
// GPU, the device loop on CUDA. Prints one markdown table: seconds, rounds, kernel evaluations, objective, the
// loop's copies and bytes per round and its allocations (docs/benchmarks.md, "SVM device loop").
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/log.h"
#include "datasets/readers.h"
#include "kernels/svm_kernel.h"
#include "svm/batch_solver.h"
#include "svm/device_loop.h"
#include "svm/dist_solver.h"
#include "svm/svm_ops.h"

namespace {

using namespace tessel;       // NOLINT: a benchmark's main
using namespace tessel::svm;  // NOLINT

struct Row {
  std::string solver;
  double seconds = 0;
  SolverResult r;
  int64_t rounds = 0;
  const devloop::LoopResult* loop = nullptr;
};

std::string PerRound(int64_t total, int64_t rounds) {
  return rounds > 0 ? fmt::format("{:.2f}", static_cast<double>(total) / static_cast<double>(rounds)) : "-";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"SVM device loop vs the host batched solvers on one binary LIBSVM problem"};
  std::string data;
  double c = 1;
  double gamma = 0.05;
  double eps = 1e-3;
  int working_set = 1024;
  int64_t cache_mb = 1000;
  bool cuda = false;
  app.add_option("--data", data, "LIBSVM file of a binary problem (labels > 0 are the positive class)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-c", c, "C")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("-g", gamma, "RBF gamma")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("-e", eps, "stopping tolerance")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--working-set", working_set, "q: samples per round (even, 2..1024)")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  app.add_option("-m", cache_mb, "row cache in MB (host cached solver and device loop)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_flag("--cuda", cuda, "also run the device loop on the GPU (needs a CUDA build and device)");
  CLI11_PARSE(app, argc, argv);
  log::SetLevel(log::Level::kWarn);

  datasets::SparseRowDataset ds = datasets::ReadLibsvm(data);
  const kernels::SparseRowsView view = ds.Rows();
  std::vector<int32_t> rows(static_cast<size_t>(ds.num_rows));
  std::vector<int8_t> y(rows.size());
  const auto labels = ds.labels.Host();
  for (int64_t r = 0; r < ds.num_rows; ++r) {
    rows[static_cast<size_t>(r)] = static_cast<int32_t>(r);
    y[static_cast<size_t>(r)] = labels[static_cast<size_t>(r)] > 0 ? 1 : -1;
  }
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, gamma, 0};
  SolverOptions o;
  o.eps = eps;
  o.cache_bytes = cache_mb << 20;
  BatchOptions b;
  b.working_set = working_set;

  std::vector<Row> out;
  devloop::LoopResult sim_loop;
  devloop::LoopResult cuda_loop;
  const auto time = [&](const std::string& name, auto&& solve) {
    kernels::SvmKernelRows k(view, kp);
    BatchStats stats;
    const auto t0 = std::chrono::steady_clock::now();
    Row row{name, 0, solve(k, &stats), 0, nullptr};
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.rounds = stats.rounds;
    out.push_back(std::move(row));
  };
  time("host batched, rows recomputed (baseline)", [&](kernels::SvmKernelRows& k, BatchStats* s) {
    return SolveBinaryBatched({&k, rows, y, c, c}, o, b, s);
  });
  time("host batched + row cache (--solver batch)", [&](kernels::SvmKernelRows& k, BatchStats* s) {
    return SolveBinaryBatchedCached({&k, rows, y, c, c}, o, b, s);
  });
  time("device loop, simulated device (host twins)", [&](kernels::SvmKernelRows& k, BatchStats* s) {
    device::ScopedSimulatedDevice sim;
    const std::unique_ptr<devloop::LoopDevice> dev = devloop::MakeTwinLoopDevice(k);
    return SolveOnLoopDevice(*dev, {&k, rows, y, c, c}, o, b, s, &sim_loop);
  });
  out.back().loop = &sim_loop;
  if (cuda) {
    time("device loop, CUDA", [&](kernels::SvmKernelRows& k, BatchStats* s) {
      Context gpu;
      gpu.device = Device::kCuda;
      const std::unique_ptr<devloop::LoopDevice> dev = SvmOps(gpu).loop_device(k);
      return SolveOnLoopDevice(*dev, {&k, rows, y, c, c}, o, b, s, &cuda_loop);
    });
    out.back().loop = &cuda_loop;
  }

  fmt::print("{} samples, RBF gamma {}, C {}, eps {}, q {}, cache {} MB\n\n", ds.num_rows, gamma, c, eps, working_set,
             cache_mb);
  fmt::print(
      "| solver | seconds | rounds | kernel evaluations | objective | rel. diff vs baseline | row cache hits / misses "
      "| uploads per round | downloads per round | bytes down per round | allocations in the loop |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
  const double base = out.front().r.obj;
  for (const Row& row : out) {
    const devloop::LoopResult* l = row.loop;
    fmt::print("| {} | {:.2f} | {} | {:.3g} | {:.8g} | {:.1e} | {} | {} | {} | {} | {} |\n", row.solver, row.seconds,
               row.rounds, static_cast<double>(row.r.kernel_evaluations), row.r.obj,
               std::fabs(row.r.obj - base) / std::fabs(base),
               l != nullptr ? fmt::format("{} / {}", l->cache_hits, l->cache_misses) : "-",
               l != nullptr ? PerRound(l->loop.h2d_copies, l->rounds) : "-",
               l != nullptr ? PerRound(l->loop.d2h_copies, l->rounds) : "-",
               l != nullptr ? PerRound(l->loop.d2h_bytes, l->rounds) : "-",
               l != nullptr ? fmt::format("{}", l->loop.allocations) : "-");
  }
  return 0;
}
