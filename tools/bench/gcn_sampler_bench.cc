// Sampler benchmark: tessel's NeighborSampler (parallel row-wise picks, flat relabelling) against a named naive
// baseline (serial, std::unordered_map relabelling, std::sample picks) on the same graph and seeds, same run.
// Prints seed nodes/s and sampled edges/s for both, as a markdown table row or JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/parallel.h"
#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "datasets/native_format.h"
#include "sampling/neighbor_sampler.h"
#include "tools/bench/bench_common.h"

namespace {

using tessel::datasets::AnyGraph;

// The baseline: per layer, serial std::sample of min(k, deg) neighbours and an unordered_map for local ids.
int64_t NaiveSample(const tessel::datasets::CsrGraph32& g, const std::vector<int64_t>& seeds,
                    const std::vector<int>& fanouts, std::mt19937_64& rng) {
  std::vector<int64_t> dst = seeds;
  int64_t edges = 0;
  for (int l = static_cast<int>(fanouts.size()) - 1; l >= 0; --l) {
    std::unordered_map<int64_t, int32_t> local;
    std::vector<int64_t> src = dst;
    for (size_t i = 0; i < dst.size(); ++i) local.emplace(dst[i], static_cast<int32_t>(i));
    std::vector<int32_t> picked;
    for (int64_t u : dst) {
      auto nb = g.Neighbors(u);
      picked.clear();
      std::sample(nb.begin(), nb.end(), std::back_inserter(picked), fanouts[static_cast<size_t>(l)], rng);
      for (int32_t v : picked) {
        auto [it, fresh] = local.emplace(v, static_cast<int32_t>(src.size()));
        if (fresh) src.push_back(v);
        ++edges;
      }
    }
    dst = std::move(src);
  }
  return edges;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"NeighborSampler vs a naive serial sampler (seed nodes/s, sampled edges/s)"};
  std::string dataset;
  int64_t nodes = 1000000;
  int64_t edges = 10000000;
  int64_t batch = 1024;
  int batches = 50;
  std::string fanouts_text = "10,25";
  int threads = 0;
  bool json = false;
  app.add_option("--dataset", dataset, "Native dataset folder (default: generate a random graph)");
  app.add_option("--nodes", nodes, "Nodes of the generated graph")->capture_default_str();
  app.add_option("--edges", edges, "Undirected edges drawn for the generated graph")->capture_default_str();
  app.add_option("--batch-size", batch, "Seed nodes per batch")->capture_default_str();
  app.add_option("--batches", batches, "Batches timed")->capture_default_str();
  app.add_option("--fanouts", fanouts_text, "Fanouts, input layer first")->capture_default_str();
  app.add_option("--threads", threads, "Worker threads (0 = all)")->capture_default_str();
  app.add_flag("--json", json, "JSON output instead of a markdown row");
  CLI11_PARSE(app, argc, argv);
  tessel::ThreadLimit limit(threads);
  std::vector<int> fanouts;
  for (size_t p = 0; p < fanouts_text.size();) {
    const size_t q = std::min(fanouts_text.find(',', p), fanouts_text.size());
    fanouts.push_back(std::stoi(fanouts_text.substr(p, q - p)));
    p = q + 1;
  }
  AnyGraph graph;
  std::string what;
  if (!dataset.empty()) {
    graph = tessel::datasets::LoadNodeDataset(dataset).graph;
    what = dataset;
  } else {
    tessel::Rng rng(1);
    graph = tessel::datasets::GraphBuilder().BuildAny(tessel::bench::UniformRandomEdges(nodes, edges, rng));
    what = fmt::format("uniform random graph, {} nodes, {} edges drawn", nodes, edges);
  }
  const auto& g = std::get<tessel::datasets::CsrGraph32>(graph);
  tessel::sampling::NeighborSampler sampler(graph, {fanouts, false, tessel::sampling::Aggregation::kGcn});
  tessel::Rng rng(2);
  const std::vector<std::vector<int64_t>> seed_sets =
      tessel::bench::DistinctSeedSets(g.num_nodes(), batch, batches, rng);
  auto t0 = std::chrono::steady_clock::now();
  int64_t ours_edges = 0;
  for (int b = 0; b < batches; ++b) {
    auto blocks =
        sampler.Sample(seed_sets[static_cast<size_t>(b)], tessel::StreamKey{.batch = static_cast<uint64_t>(b)});
    for (const auto& blk : blocks) ours_edges += blk.num_edges() - blk.num_dst;  // minus the exact self terms
  }
  const double ours_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::mt19937_64 mt(3);
  t0 = std::chrono::steady_clock::now();
  int64_t naive_edges = 0;
  for (int b = 0; b < batches; ++b) naive_edges += NaiveSample(g, seed_sets[static_cast<size_t>(b)], fanouts, mt);
  const double naive_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double seeds = static_cast<double>(batch) * batches;
  nlohmann::json j{{"graph", what},
                   {"nodes", g.num_nodes()},
                   {"entries", g.num_entries()},
                   {"batch_size", batch},
                   {"batches", batches},
                   {"fanouts", fanouts},
                   {"threads", threads == 0 ? tessel::ThreadLimit::HardwareThreads() : threads},
                   {"tessel_seconds", ours_s},
                   {"tessel_seed_nodes_per_s", seeds / ours_s},
                   {"tessel_edges_per_s", static_cast<double>(ours_edges) / ours_s},
                   {"naive_seconds", naive_s},
                   {"naive_seed_nodes_per_s", seeds / naive_s},
                   {"naive_edges_per_s", static_cast<double>(naive_edges) / naive_s}};
  if (json) {
    std::puts(j.dump().c_str());
  } else {
    std::printf("| %s | %lld | %s | %.3f | %.0f | %.3g | %.3f | %.0f | %.3g | %.1f |\n", what.c_str(),
                static_cast<long long>(batch), fanouts_text.c_str(), ours_s, seeds / ours_s,
                static_cast<double>(ours_edges) / ours_s, naive_s, seeds / naive_s,
                static_cast<double>(naive_edges) / naive_s, naive_s / ours_s);
  }
  return 0;
}
