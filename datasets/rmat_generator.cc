// R-MAT (Chakrabarti, Zhan, Faloutsos 2004) with NSKG per-level noise (Seshadhri, Pinar, Kolda 2013): each edge
// descends log2(n) levels of the adjacency matrix, choosing a quadrant with probabilities a, b, c, d per level.
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "datasets/generators.h"

namespace tessel::datasets {
namespace {

using internal::kEdgeChunk;
using internal::kNodeChunk;

// Cumulative quadrant thresholds of one level in units of 2^-32: a 32-bit uniform r picks (0,0) below a, (0,1)
// below ab, (1,0) below abc, else (1,1). Two levels use one 64-bit draw; 2^-32 resolution is far below any
// sampling error.
struct Level {
  uint64_t a;
  uint64_t ab;
  uint64_t abc;
};

uint64_t Fixed32(double p) { return static_cast<uint64_t>(std::llround(std::clamp(p, 0.0, 1.0) * 0x1.0p32)); }

int Levels(int64_t n) { return std::max(1, static_cast<int>(std::bit_width(static_cast<uint64_t>(n - 1)))); }

std::vector<Level> LevelThresholds(const RmatOptions& o) {
  const int levels = Levels(o.num_nodes);
  Rng rng(StreamKey{.seed = o.seed, .purpose = internal::kPurposeLevelNoise});
  std::vector<Level> out(static_cast<size_t>(levels));
  for (auto& l : out) {
    const double mu = o.noise == 0 ? 0.0 : o.noise * (2 * rng.Uniform() - 1);
    const double a = o.a - 2 * mu * o.a / (o.a + o.d);
    const double b = o.b + mu;
    const double c = o.c + mu;
    l = Level{Fixed32(a), Fixed32(a + b), Fixed32(a + b + c)};
  }
  return out;
}

}  // namespace

void ValidateRmatOptions(const RmatOptions& o) {
  TESSEL_CHECK(o.num_nodes >= 2, "--nodes must be at least 2, got {}", o.num_nodes);
  TESSEL_CHECK(o.num_nodes <= int64_t{1} << 62, "--nodes {} is too large (at most 2^62)", o.num_nodes);
  TESSEL_CHECK(o.num_edges >= 0, "--edges must be >= 0, got {}", o.num_edges);
  for (const auto& [name, p] : {std::pair{"-a", o.a}, {"-b", o.b}, {"-c", o.c}, {"-d", o.d}}) {
    TESSEL_CHECK(p >= 0 && p <= 1, "{} must be a probability in [0, 1], got {}", name, p);
  }
  const double sum = o.a + o.b + o.c + o.d;
  TESSEL_CHECK(std::abs(sum - 1) <= 1e-6,
               "R-MAT probabilities must sum to 1: a + b + c + d = {} + {} + {} + {} = {} (Graph500 uses "
               "0.57, 0.19, 0.19, 0.05)",
               o.a, o.b, o.c, o.d, sum);
  TESSEL_CHECK(o.a + o.d > 0, "R-MAT needs a + d > 0, got a = {}, d = {}", o.a, o.d);
  const double max_noise = std::min({o.b, o.c, (o.a + o.d) / 2});
  TESSEL_CHECK(o.noise >= 0 && o.noise <= max_noise,
               "--noise must be in [0, min(b, c, (a+d)/2) = {}] so every level keeps valid probabilities, got {}",
               max_noise, o.noise);
  TESSEL_CHECK(o.feature_dim >= 0 && o.feature_dim <= kMaxFeatureDim,
               "--features must be in [0, {}] (0 = no features; columns are int32 ids), got {}", kMaxFeatureDim,
               o.feature_dim);
  TESSEL_CHECK(o.num_classes == 0 || (o.num_classes >= 2 && o.num_classes <= o.num_nodes),
               "--classes must be 0 (no labels) or in [2, nodes = {}] (one class gives nothing to learn), got {}",
               o.num_nodes, o.num_classes);
  internal::ValidateSplitFractions(o.split);
}

EdgeList GenerateRmatEdges(const RmatOptions& o) {
  ValidateRmatOptions(o);
  const std::string nodes_text = o.nodes_given_as.empty() ? fmt::format("--nodes {}", o.num_nodes)
                                                          : fmt::format("{} = {} nodes", o.nodes_given_as, o.num_nodes);
  const std::string edges_text = o.edges_given_as.empty() ? fmt::format("--edges {}", o.num_edges)
                                                          : fmt::format("{} = {} edges", o.edges_given_as, o.num_edges);
  const std::string sizes = fmt::format("{}, {}, --features {}", nodes_text, edges_text, o.feature_dim);
  internal::CheckGeneratorMemory("an R-MAT graph", o.num_nodes, static_cast<double>(o.num_edges), o.feature_dim, sizes);
  const memory::Activity activity(fmt::format("generating an R-MAT graph ({})", sizes));
  const int64_t n = o.num_nodes;
  const int64_t m = o.num_edges;
  const std::vector<Level> levels = LevelThresholds(o);

  std::vector<int64_t> perm;
  if (o.permute) {
    perm.resize(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    Rng rng(StreamKey{.seed = o.seed, .purpose = internal::kPurposePermutation});
    internal::Shuffle(perm, rng);
  }

  EdgeList edges;
  edges.num_nodes = n;
  edges.src.resize(static_cast<size_t>(m));
  edges.dst.resize(static_cast<size_t>(m));
  // Ids >= n (when n is not a power of two) are redrawn; give up when that almost never succeeds.
  constexpr int kMaxTries = 1000;
  parallel_for<int64_t>(0, (m + kEdgeChunk - 1) / kEdgeChunk, 1, [&](int64_t chunk) {
    Rng rng(StreamKey{.seed = o.seed, .batch = static_cast<uint64_t>(chunk), .purpose = internal::kPurposeEdges});
    const int64_t end = std::min(m, (chunk + 1) * kEdgeChunk);
    for (int64_t e = chunk * kEdgeChunk; e < end; ++e) {
      int64_t u = 0;
      int64_t v = 0;
      for (int tries = 0;; ++tries) {
        TESSEL_CHECK(tries < kMaxTries,
                     "R-MAT: {} draws in a row fell outside [0, {}); with these a, b, c, d use a power-of-two --nodes",
                     kMaxTries, n);
        u = 0;
        v = 0;
        uint64_t bits = 0;
        for (size_t l = 0; l < levels.size(); ++l) {
          if (l % 2 == 0) bits = rng();
          const uint64_t r = l % 2 == 0 ? bits >> 32 : bits & 0xffffffffULL;
          // Branch-free quadrant: row = r >= ab; column = 1 in [a, ab) and [abc, 1).
          const auto ge_a = static_cast<int64_t>(r >= levels[l].a);
          const auto ge_ab = static_cast<int64_t>(r >= levels[l].ab);
          const auto ge_abc = static_cast<int64_t>(r >= levels[l].abc);
          u = (u << 1) | ge_ab;
          v = (v << 1) | (ge_a ^ ge_ab ^ ge_abc);
        }
        if (u < n && v < n) break;
      }
      edges.src[e] = o.permute ? perm[u] : u;
      edges.dst[e] = o.permute ? perm[v] : v;
    }
  });
  log::Debug("rmat: drew {} edges over {} nodes ({} levels)", m, n, levels.size());
  return edges;
}

NodeDataset GenerateRmat(const RmatOptions& o, BuildStats* stats) {
  NodeDataset data;
  data.name = "rmat";
  {
    const EdgeList edges = GenerateRmatEdges(o);
    data.graph = GraphBuilder().BuildAny(edges, stats);
  }
  const int64_t n = o.num_nodes;
  if (o.num_classes > 0) {
    Buffer<int32_t> labels(static_cast<size_t>(n));
    auto lab = labels.MutableHost();
    parallel_for<int64_t>(0, (n + kNodeChunk - 1) / kNodeChunk, 1, [&](int64_t chunk) {
      Rng rng(StreamKey{.seed = o.seed, .batch = static_cast<uint64_t>(chunk), .purpose = internal::kPurposeLabels});
      const int64_t end = std::min(n, (chunk + 1) * kNodeChunk);
      for (int64_t u = chunk * kNodeChunk; u < end; ++u) {
        lab[u] = static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(o.num_classes)));
      }
    });
    data.labels = std::move(labels);
    data.num_classes = o.num_classes;
    AssignRandomSplit(data, o.split, o.seed);
  }
  if (o.feature_dim > 0) {
    data.features = internal::GaussianFeatures(data.labels.Host(), n, o.feature_dim, {}, 1.0, o.seed);
  }
  return data;
}

}  // namespace tessel::datasets
