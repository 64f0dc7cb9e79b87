// Contextual stochastic block model (Deshpande et al. 2018) with degree correction (Karrer & Newman 2011):
// classes, Pareto propensities, alias-table edge sampling in seeded parallel chunks, Gaussian class features.
#include <algorithm>
#include <cmath>
#include <limits>
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

// Gamma(shape, 1) by Marsaglia & Tsang (2000), with the shape < 1 boost U^(1/shape).
double SampleGamma(double shape, Rng& rng) {
  if (shape < 1) {
    const double u = 1.0 - rng.Uniform();  // (0, 1]
    return SampleGamma(shape + 1, rng) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = rng.Normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng.Uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

// Balanced sizes, or Dirichlet(concentration) shares with at least one node per class.
std::vector<int64_t> ClassSizes(const CsbmOptions& o) {
  const int64_t n = o.num_nodes;
  const int32_t k = o.num_classes;
  std::vector<int64_t> sizes(static_cast<size_t>(k), n / k);
  if (o.class_concentration <= 0) {
    for (int64_t c = 0; c < n % k; ++c) ++sizes[c];
    return sizes;
  }
  Rng rng(StreamKey{.seed = o.seed, .purpose = internal::kPurposeClassSizes});
  std::vector<double> share(static_cast<size_t>(k));
  double total = 0;
  for (auto& s : share) total += (s = SampleGamma(o.class_concentration, rng));
  int64_t assigned = 0;
  for (int32_t c = 0; c < k; ++c) {
    const double frac = total > 0 ? share[c] / total : 1.0 / k;
    sizes[c] = 1 + static_cast<int64_t>(std::floor(frac * static_cast<double>(n - k)));
    assigned += sizes[c];
  }
  for (int64_t c = 0; assigned < n; c = (c + 1) % k, ++assigned) ++sizes[c];
  return sizes;
}

// Unit-length random directions scaled by `signal`.
std::vector<float> ClassMeans(const CsbmOptions& o) {
  const int64_t dim = o.feature_dim;
  std::vector<float> means(static_cast<size_t>(o.num_classes * dim));
  Rng rng(StreamKey{.seed = o.seed, .purpose = internal::kPurposeClassMeans});
  std::vector<double> g(static_cast<size_t>(dim));
  for (int32_t c = 0; c < o.num_classes; ++c) {
    double norm = 0;
    for (auto& x : g) {
      x = rng.Normal();
      norm += x * x;
    }
    norm = std::sqrt(norm);
    for (int64_t j = 0; j < dim; ++j) means[c * dim + j] = static_cast<float>(o.signal * g[j] / norm);
  }
  return means;
}

std::vector<double> Propensities(const CsbmOptions& o) {
  const int64_t n = o.num_nodes;
  std::vector<double> theta(static_cast<size_t>(n), 1.0);
  if (o.degree_exponent == 0) return theta;
  const double inv_tail = 1.0 / (o.degree_exponent - 1.0);
  parallel_for<int64_t>(0, (n + kNodeChunk - 1) / kNodeChunk, 1, [&](int64_t chunk) {
    Rng rng(StreamKey{.seed = o.seed, .batch = static_cast<uint64_t>(chunk), .purpose = internal::kPurposePropensity});
    const int64_t end = std::min(n, (chunk + 1) * kNodeChunk);
    for (int64_t u = chunk * kNodeChunk; u < end; ++u) theta[u] = std::pow(1.0 - rng.Uniform(), -inv_tail);
  });
  return theta;
}

}  // namespace

void ValidateCsbmOptions(const CsbmOptions& o) {
  TESSEL_CHECK(o.num_nodes >= 2, "--nodes must be at least 2, got {}", o.num_nodes);
  TESSEL_CHECK(o.num_classes >= 2 && o.num_classes <= o.num_nodes,
               "--classes must be in [2, nodes = {}], got {} (a CSBM needs at least two communities)", o.num_nodes,
               o.num_classes);
  TESSEL_CHECK(std::isfinite(o.avg_degree) && o.avg_degree > 0 && o.avg_degree <= static_cast<double>(o.num_nodes - 1),
               "--avg-degree must be in (0, nodes - 1 = {}], got {}", o.num_nodes - 1, o.avg_degree);
  TESSEL_CHECK(o.homophily >= 0 && o.homophily <= 1,
               "--homophily must be in [0, 1] (the share of edges inside a class), got {}", o.homophily);
  TESSEL_CHECK(o.class_concentration >= 0 && std::isfinite(o.class_concentration),
               "--class-concentration must be >= 0 (0 = equal class sizes), got {}", o.class_concentration);
  TESSEL_CHECK(o.degree_exponent == 0 || (o.degree_exponent > 2 && std::isfinite(o.degree_exponent)),
               "--degree-exponent must be 0 (no degree correction) or > 2 (a power law with a finite mean, "
               "e.g. 2.5), got {}",
               o.degree_exponent);
  TESSEL_CHECK(o.feature_dim >= 0 && o.feature_dim <= kMaxFeatureDim,
               "--features must be in [0, {}] (0 = no features; columns are int32 ids), got {}", kMaxFeatureDim,
               o.feature_dim);
  TESSEL_CHECK(o.num_nodes <= std::numeric_limits<int64_t>::max() / std::max<int64_t>(o.feature_dim, 1),
               "--nodes x --features overflows; reduce one of them");
  TESSEL_CHECK(std::isfinite(o.signal) && o.signal >= 0, "--signal must be a finite value >= 0, got {}", o.signal);
  TESSEL_CHECK(std::isfinite(o.noise) && o.noise >= 0, "--noise must be a finite value >= 0, got {}", o.noise);
  internal::ValidateSplitFractions(o.split);
}

NodeDataset GenerateCsbm(const CsbmOptions& o, CsbmDetails* details) {
  ValidateCsbmOptions(o);
  const std::string options =
      fmt::format("--nodes {}, --avg-degree {}, --features {}", o.num_nodes, o.avg_degree, o.feature_dim);
  internal::CheckGeneratorMemory("a CSBM graph", o.num_nodes, static_cast<double>(o.num_nodes) * o.avg_degree / 2,
                                 o.feature_dim, options);
  const memory::Activity activity(fmt::format("generating a CSBM graph ({})", options));
  const int64_t n = o.num_nodes;
  const int32_t k = o.num_classes;

  // Classes: sizes, then labels in random node order; members[] lists the nodes of each class contiguously.
  const std::vector<int64_t> sizes = ClassSizes(o);
  std::vector<int64_t> class_begin(static_cast<size_t>(k) + 1, 0);
  for (int32_t c = 0; c < k; ++c) class_begin[c + 1] = class_begin[c] + sizes[c];
  std::vector<int64_t> members(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) members[i] = i;
  Rng label_rng(StreamKey{.seed = o.seed, .purpose = internal::kPurposeLabels});
  internal::Shuffle(members, label_rng);
  Buffer<int32_t> labels(static_cast<size_t>(n));
  auto lab = labels.MutableHost();
  for (int32_t c = 0; c < k; ++c) {
    for (int64_t i = class_begin[c]; i < class_begin[c + 1]; ++i) lab[members[i]] = c;
  }

  // Alias tables: over the classes by total propensity, and per class over its members by propensity. A source
  // is a class, then a member (so P(s) = theta_s / sum theta and its class is known); a target is a member of
  // the class picked by the homophily coin.
  std::vector<double> theta = Propensities(o);
  std::vector<internal::AliasSlot> class_table(static_cast<size_t>(k));
  std::vector<internal::AliasSlot> member_table(static_cast<size_t>(n));
  {
    std::vector<double> member_theta(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) member_theta[i] = theta[members[i]];
    std::vector<double> class_theta(static_cast<size_t>(k), 0.0);
    parallel_for<int32_t>(0, k, 1, [&](int32_t c) {
      const int64_t b = class_begin[c];
      const auto len = static_cast<size_t>(sizes[c]);
      const auto weights = std::span<const double>(member_theta).subspan(b, len);
      for (double t : weights) class_theta[c] += t;
      internal::BuildAliasTable(weights, std::span<const int64_t>(members).subspan(b, len),
                                std::span(member_table).subspan(b, len));
    });
    internal::BuildAliasTable(class_theta, {}, class_table);
  }
  std::vector<int64_t>().swap(members);

  // Edges, one stream per fixed chunk of edge slots.
  const auto m = static_cast<int64_t>(std::llround(static_cast<double>(n) * o.avg_degree / 2));
  EdgeList edges;
  edges.num_nodes = n;
  edges.src.resize(static_cast<size_t>(m));
  edges.dst.resize(static_cast<size_t>(m));
  const double h = o.homophily;
  auto class_members = [&](int64_t c) {
    return std::span<const internal::AliasSlot>(member_table).subspan(class_begin[c], sizes[c]);
  };
  parallel_for<int64_t>(0, (m + kEdgeChunk - 1) / kEdgeChunk, 1, [&](int64_t chunk) {
    Rng rng(StreamKey{.seed = o.seed, .batch = static_cast<uint64_t>(chunk), .purpose = internal::kPurposeEdges});
    const int64_t end = std::min(m, (chunk + 1) * kEdgeChunk);
    for (int64_t e = chunk * kEdgeChunk; e < end; ++e) {
      const int64_t cs = internal::DrawAlias(class_table, rng);
      int64_t ct = cs;
      if (rng.Uniform() >= h) {
        ct = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(k - 1)));
        ct += ct >= cs ? 1 : 0;
      }
      edges.src[e] = internal::DrawAlias(class_members(cs), rng);
      edges.dst[e] = internal::DrawAlias(class_members(ct), rng);
    }
  });
  // The tables are not needed past this point; free them before the builder allocates.
  std::vector<internal::AliasSlot>().swap(member_table);
  log::Debug("csbm: drew {} edges over {} nodes in {} classes", m, n, k);

  NodeDataset data;
  data.name = "csbm";
  BuildStats stats;
  data.graph = GraphBuilder().BuildAny(edges, &stats);
  edges = EdgeList();

  std::vector<float> means = ClassMeans(o);
  if (o.feature_dim > 0) data.features = internal::GaussianFeatures(lab, n, o.feature_dim, means, o.noise, o.seed);
  data.labels = std::move(labels);
  data.num_classes = k;
  AssignRandomSplit(data, o.split, o.seed);
  if (details != nullptr) {
    details->class_means = std::move(means);
    details->propensity = std::move(theta);
    details->class_sizes = sizes;
    details->build = stats;
  }
  return data;
}

}  // namespace tessel::datasets
