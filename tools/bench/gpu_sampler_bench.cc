// GPU sampler benchmark: GpuNeighborSampler against the CPU NeighborSampler (the named baseline) on the same
// generated graph, seeds and keys, same run; checks the blocks are identical first, then prints sampled edges/s.
// Needs a CUDA build and a GPU (exits with a message otherwise). Output: a markdown table, or JSON with --json.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "sampling/gpu_sampler.h"
#include "sampling/neighbor_sampler.h"
#include "tools/bench/bench_common.h"

namespace {

using tessel::sampling::Block;

// "15,10,5" -> {15, 10, 5}; throws tessel::Error naming the bad text.
std::vector<int> ParseFanouts(const std::string& text) {
  std::vector<int> fanouts;
  for (size_t p = 0; p <= text.size();) {
    const size_t q = std::min(text.find(',', p), text.size());
    const std::string item = text.substr(p, q - p);
    int f = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), f);
    TESSEL_CHECK(ec == std::errc() && end == item.data() + item.size() && !item.empty(),
                 "--fanouts: '{}' in '{}' is not a fanout (give comma-separated counts such as 15,10,5)", item, text);
    fanouts.push_back(f);
    p = q + 1;
  }
  return fanouts;
}

int64_t SampledEdges(const std::vector<Block>& blocks, bool gcn) {
  int64_t edges = 0;
  for (const auto& b : blocks) edges += b.num_edges() - (gcn ? b.num_dst : 0);  // minus the exact self terms
  return edges;
}

bool SameBlocks(const std::vector<Block>& a, const std::vector<Block>& b) {
  if (a.size() != b.size()) return false;
  for (size_t l = 0; l < a.size(); ++l) {
    if (a[l].src_nodes != b[l].src_nodes || a[l].adj.indptr.ToVector() != b[l].adj.indptr.ToVector() ||
        a[l].adj.indices.ToVector() != b[l].adj.indices.ToVector() ||
        a[l].adj.values.ToVector() != b[l].adj.values.ToVector())
      return false;
  }
  return true;
}

struct Timing {
  double seconds = 0;
  int64_t edges = 0;
};

template <typename Sampler>
Timing TimeSampler(Sampler& sampler, const std::vector<std::vector<int64_t>>& seed_sets, bool gcn) {
  Timing t;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t b = 0; b < seed_sets.size(); ++b) {
    t.edges += SampledEdges(sampler.Sample(seed_sets[b], tessel::StreamKey{.batch = b}), gcn);
  }
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

int Run(int64_t nodes, int64_t edges, int64_t batch, int batches, const std::vector<std::string>& fanout_sets,
        bool replace, double skew, int device_id, int threads, bool json);

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"GpuNeighborSampler vs the CPU NeighborSampler (sampled edges/s), identical blocks checked first"};
  int64_t nodes = 1000000;
  int64_t edges = 10000000;
  int64_t batch = 1024;
  int batches = 50;
  std::vector<std::string> fanout_sets{"10,25", "15,10,5"};
  bool replace = false;
  double skew = 1.0;
  int device_id = 0;
  int threads = 0;
  bool json = false;
  app.add_option("--nodes", nodes, "Nodes of the generated graph")
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 30));
  app.add_option("--edges", edges, "Undirected edges drawn for the generated graph")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--batch-size", batch, "Seed nodes per batch")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--batches", batches, "Batches timed per sampler")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--fanouts", fanout_sets, "Fanout sets (input layer first), one table row each")
      ->default_str("10,25 15,10,5");
  app.add_flag("--replace", replace, "Sample with replacement");
  app.add_option("--skew", skew, "Skewed sampling with s for owned neighbours (3 random parts, part 0 local); 1 = off")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--device", device_id, "CUDA device id")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "CPU worker threads (0 = all)")->capture_default_str();
  app.add_flag("--json", json, "JSON lines instead of a markdown table");
  CLI11_PARSE(app, argc, argv);
  if (device_id >= tessel::device::CudaDeviceCount()) {
    std::fprintf(stderr, "error: no CUDA device %d (%s); this benchmark needs a GPU\n", device_id,
                 tessel::device::Describe(device_id).c_str());
    return 1;
  }
  tessel::ThreadLimit limit(threads);
  try {
    return Run(nodes, edges, std::min(batch, nodes), batches, fanout_sets, replace, skew, device_id, threads, json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

namespace {

int Run(int64_t nodes, int64_t edges, int64_t batch, int batches, const std::vector<std::string>& fanout_sets,
        bool replace, double skew, int device_id, int threads, bool json) {
  tessel::Rng rng(1);
  const tessel::datasets::AnyGraph graph =
      tessel::datasets::GraphBuilder().BuildAny(tessel::bench::UniformRandomEdges(nodes, edges, rng));
  const int64_t entries = tessel::datasets::NumEntries(graph);
  std::vector<int32_t> owners(static_cast<size_t>(entries));
  for (auto& o : owners) o = static_cast<int32_t>(rng.UniformInt(3));
  const std::vector<std::vector<int64_t>> seed_sets = tessel::bench::DistinctSeedSets(nodes, batch, batches, rng);
  const std::string device_name = tessel::device::Describe(device_id);
  const int cpu_threads = threads == 0 ? tessel::ThreadLimit::HardwareThreads() : threads;
  if (!json) {
    std::printf("GPU: %s; CPU: %d threads; graph: %lld nodes, %lld stored edges; batch %lld x %d%s%s\n\n",
                device_name.c_str(), cpu_threads, static_cast<long long>(nodes), static_cast<long long>(entries),
                static_cast<long long>(batch), batches, replace ? ", with replacement" : "",
                skew != 1.0 ? fmt::format(", skew {}", skew).c_str() : "");
    std::printf("| fanouts | CPU s | CPU edges/s | GPU s | GPU edges/s | speed-up |\n|---|---|---|---|---|---|\n");
  }
  for (const std::string& text : fanout_sets) {
    const tessel::sampling::SamplerOptions options{ParseFanouts(text), replace, tessel::sampling::Aggregation::kGcn};
    std::shared_ptr<const tessel::sampling::PickPolicy> policy;
    std::optional<tessel::sampling::GpuSkew> gpu_skew;
    if (skew != 1.0) {
      const tessel::sampling::SkewOptions so{.skew = skew};
      policy = std::make_shared<tessel::sampling::SkewedPolicy>(owners, 0, so);
      gpu_skew = tessel::sampling::GpuSkew{owners, 0, so};
    }
    tessel::sampling::NeighborSampler cpu(graph, options, policy);
    tessel::sampling::GpuNeighborSampler gpu(graph, options, gpu_skew, device_id);
    // Identical blocks first (and a warm-up of both).
    for (size_t b = 0; b < std::min<size_t>(3, seed_sets.size()); ++b) {
      const tessel::StreamKey key{.batch = b};
      if (!SameBlocks(gpu.Sample(seed_sets[b], key), cpu.Sample(seed_sets[b], key))) {
        std::fprintf(stderr, "error: GPU and CPU blocks differ for fanouts %s batch %zu\n", text.c_str(), b);
        return 2;
      }
    }
    const Timing c = TimeSampler(cpu, seed_sets, true);
    const Timing g = TimeSampler(gpu, seed_sets, true);
    const double cpu_rate = static_cast<double>(c.edges) / c.seconds;
    const double gpu_rate = static_cast<double>(g.edges) / g.seconds;
    if (json) {
      nlohmann::json j{{"device", device_name},
                       {"cpu_threads", cpu_threads},
                       {"nodes", nodes},
                       {"entries", entries},
                       {"batch_size", batch},
                       {"batches", batches},
                       {"fanouts", text},
                       {"replace", replace},
                       {"skew", skew},
                       {"cpu_seconds", c.seconds},
                       {"cpu_edges_per_s", cpu_rate},
                       {"gpu_seconds", g.seconds},
                       {"gpu_edges_per_s", gpu_rate}};
      std::puts(j.dump().c_str());
    } else {
      std::printf("| %s | %.3f | %.3g | %.3f | %.3g | %.2f |\n", text.c_str(), c.seconds, cpu_rate, g.seconds, gpu_rate,
                  gpu_rate / cpu_rate);
    }
  }
  return 0;
}

}  // namespace
