// GPU kernel benchmark: device copy bandwidth (the baseline), SpMM by tessel's dispatch against cuSPARSE (the
// baseline) on a generated 1M-node graph for widths 8..256, and the full-batch GCN epoch on CPU vs CUDA; markdown.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/device.h"
#include "core/log.h"
#include "core/rng.h"
#include "datasets/native_format.h"
#include "kernels/sparse.h"
#include "train/gcn/trainer.h"

namespace tessel::bench {
double DeviceCopyBandwidth(size_t bytes, int reps);  // gpu_copy.cu
// cuda/spmm_baseline.cc: seconds per cuSPARSE SpMM of a by x into y, and whether tessel's SpMM takes its row kernel.
double CusparseSpMMSeconds(const kernels::SparseMatrix& a, const kernels::Matrix& x, int reps, kernels::Matrix* y);
bool SpMMUsesRowKernel(const kernels::SparseMatrix& a, int64_t width);
}  // namespace tessel::bench

namespace {

using tessel::kernels::Matrix;
using tessel::kernels::SparseMatrix;

// n x n CSR with `degree` uniformly random columns per row (repeats allowed) and normal values.
SparseMatrix RandomGraph(int64_t n, int64_t degree, uint64_t seed) {
  tessel::Rng rng(seed);
  std::vector<int64_t> p(static_cast<size_t>(n + 1));
  std::vector<int32_t> idx(static_cast<size_t>(n * degree));
  std::vector<float> val(idx.size());
  for (int64_t i = 0; i <= n; ++i) p[static_cast<size_t>(i)] = i * degree;
  for (size_t e = 0; e < idx.size(); ++e) {
    idx[e] = static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(n)));
    val[e] = static_cast<float>(rng.Normal());
  }
  return SparseMatrix{n, n, tessel::Buffer<int64_t>(std::move(p)), tessel::Buffer<int32_t>(std::move(idx)),
                      tessel::Buffer<float>(std::move(val))};
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"GPU kernels: copy bandwidth, SpMM bandwidth, full-batch GCN epoch CPU vs CUDA"};
  int64_t nodes = 1 << 20;
  int64_t degree = 16;
  int reps = 20;
  std::string dataset;
  int epochs = 10;
  app.add_option("--nodes", nodes, "rows of the generated SpMM graph")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--degree", degree, "entries per row of the generated graph")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app.add_option("--reps", reps, "timed repetitions per measurement")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--dataset", dataset, "native dataset folder for the GCN epoch comparison (skipped when empty)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--epochs", epochs, "GCN epochs per device (the first is a warm-up and not counted)")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  CLI11_PARSE(app, argc, argv);
  try {
    if (tessel::device::CudaDeviceCount() == 0) {
      std::fprintf(stderr, "error: no CUDA device (%s)\n", tessel::device::Describe(0).c_str());
      return 2;
    }
    tessel::Context cuda;
    cuda.device = tessel::Device::kCuda;
    std::printf("device: %s\n\n", tessel::device::Describe(0).c_str());

    const double copy_bw = tessel::bench::DeviceCopyBandwidth(size_t{1} << 30, reps);
    std::printf("| measurement | GB/s |\n|---|---:|\n| cudaMemcpy D2D, 1 GiB (read + write) | %.1f |\n\n",
                copy_bw / 1e9);

    tessel::log::Info("generating a {}-node graph with {} entries per row", nodes, degree);
    const SparseMatrix a = RandomGraph(nodes, degree, 1);
    std::printf(
        "SpMM y = A x, A %lld x %lld with %lld entries (uniform random columns). Bytes model: int32\n"
        "offsets (cuSPARSE's copy) + nnz x (4 B column + 4 B value) + nnz x the x row an entry reads\n"
        "(width x 4 B, at least one 32 B sector) + y (rows x width x 4 B). The columns are uniform over a\n"
        "matrix x far larger than L2, so nearly every entry's row comes from memory; counting x once (as an\n"
        "earlier version did) understated the traffic about width-fold (x is %.0f MB at width 128; an H100's\n"
        "L2 holds 50 MB).\n\n",
        static_cast<long long>(nodes), static_cast<long long>(nodes), static_cast<long long>(a.nnz()),
        static_cast<double>(nodes) * 128 * 4 / 1e6);
    std::printf(
        "| width | tessel ms / SpMM | tessel's kernel | cuSPARSE ms / SpMM (baseline) | speed-up | GB/s (model), "
        "tessel | %% of D2D copy |\n|---:|---:|---|---:|---:|---:|---:|\n");
    for (const int64_t width : {8, 16, 32, 64, 128, 256}) {
      Matrix x(nodes, width);
      tessel::Rng rng(2);
      for (float& v : x.Mut()) v = static_cast<float>(rng.Normal());
      Matrix y;
      tessel::kernels::SpMM(cuda, a, x, &y);  // warm-up: uploads, descriptors, work buffer
      tessel::device::Synchronize();
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) tessel::kernels::SpMM(cuda, a, x, &y);
      tessel::device::Synchronize();
      const double s = Seconds(t0) / reps;
      // The baseline: the same product through cuSPARSE's generic SpMM (what every width used before the row
      // kernel), on the same device arrays.
      const double base = tessel::bench::CusparseSpMMSeconds(a, x, reps, &y);
      const double row_bytes = std::max(32.0, static_cast<double>(width) * 4);
      const double bytes = static_cast<double>(nodes + 1) * 4 + static_cast<double>(a.nnz()) * (8 + row_bytes) +
                           static_cast<double>(nodes * width) * 4;
      std::printf("| %lld | %.3f | %s | %.3f | %.2f | %.1f | %.0f |\n", static_cast<long long>(width), s * 1e3,
                  tessel::bench::SpMMUsesRowKernel(a, width) ? "row kernel" : "cuSPARSE", base * 1e3, base / s,
                  bytes / s / 1e9, 100.0 * bytes / s / copy_bw);
    }
    std::printf("\n");

    if (!dataset.empty()) {
      const tessel::datasets::NodeDataset data = tessel::datasets::LoadNodeDataset(dataset);
      std::printf(
          "Full-batch GCN (2 layers, hidden 16, dropout 0.5) on %s: mean train time per epoch over\n"
          "epochs 2..%d (forward, backward, Adam; evaluation excluded)\n\n| device | ms / epoch |\n|---|---:|\n",
          dataset.c_str(), epochs);
      for (const tessel::Device dev : {tessel::Device::kCpu, tessel::Device::kCuda}) {
        tessel::train::gcn::TrainConfig config;
        config.epochs = epochs;
        tessel::Context ctx;
        ctx.device = dev;
        tessel::train::gcn::GcnTrainer trainer(data, config, ctx);
        const auto result = trainer.Train();
        double sum = 0;
        for (size_t e = 1; e < result.epochs.size(); ++e) sum += result.epochs[e].train_seconds;
        std::printf("| %s | %.2f |\n", std::string(tessel::DeviceName(dev)).c_str(),
                    1e3 * sum / static_cast<double>(std::max<size_t>(result.epochs.size() - 1, 1)));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
