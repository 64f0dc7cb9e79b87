// Synthetic graph generators for tests and scale runs: the contextual stochastic block model (CSBM) with
// degree-corrected, heavy-tailed degrees, and R-MAT. Both are seeded and give the same graph at any thread count.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "datasets/dataset.h"
#include "datasets/graph_builder.h"
#include "datasets/split.h"

namespace tessel::datasets {

// Contextual stochastic block model (Deshpande, Sen, Montanari, Mossel 2018, "Contextual Stochastic Block
// Models") with degree correction (Karrer & Newman 2011, "Stochastic blockmodels and community structure in
// networks"). Communities are the classes; features are the class mean vector plus Gaussian noise.
struct CsbmOptions {
  int64_t num_nodes = 10000;
  int32_t num_classes = 5;  // 2 <= classes <= nodes
  double avg_degree = 10;   // target mean degree: n * avg_degree / 2 edges are drawn (before dedupe)
  double homophily = 0.8;   // probability that an edge's second endpoint is drawn from the first one's class
  // 0: equal class sizes; > 0: class shares drawn from a symmetric Dirichlet with this concentration (small =
  // unequal), every class keeping at least one node.
  double class_concentration = 0;
  // 0: equal propensities (plain SBM degrees, close to Poisson). > 2: each node's propensity is Pareto with
  // P(theta >= x) = x^-(gamma - 1), so degrees follow a power law with exponent gamma.
  double degree_exponent = 0;
  int64_t feature_dim = 32;  // 0: no features
  double signal = 1;         // length of each class mean vector (random direction)
  double noise = 1;          // standard deviation of the Gaussian noise added to each feature
  SplitFractions split;      // train/val/test fractions of the nodes (datasets/split.h)
  uint64_t seed = 0;
};

// What the generator drew, for tests and reports (GenerateCsbm fills it when asked).
struct CsbmDetails {
  std::vector<float> class_means;  // num_classes x feature_dim, row-major
  std::vector<double> propensity;  // per node
  std::vector<int64_t> class_sizes;
  BuildStats build;  // edges drawn, self-loops and duplicates removed, adjacency entries kept
};

// Throws tessel::Error naming the option, the value and the accepted range.
void ValidateCsbmOptions(const CsbmOptions& options);
// Edges: each of m = n * avg_degree / 2 draws picks a source by propensity (Walker/Vose alias tables), the
// target's class (the source's with probability h, else another class uniformly) and the target within that
// class by propensity; the graph is symmetrised, deduplicated and has no self-loops. Labels are the classes,
// in random node order; dense float32 features; a random split by `split`.
NodeDataset GenerateCsbm(const CsbmOptions& options, CsbmDetails* details = nullptr);

// R-MAT (Chakrabarti, Zhan, Faloutsos 2004, "R-MAT: A Recursive Model for Graph Mining") with optional
// per-level noise (NSKG: Seshadhri, Pinar, Kolda 2013, "An in-depth analysis of stochastic Kronecker graphs").
struct RmatOptions {
  int64_t num_nodes = int64_t{1} << 20;   // any n >= 2; drawn on 2^ceil(log2 n) ids, out-of-range edges redrawn
  int64_t num_edges = int64_t{16} << 20;  // edges drawn, before symmetrising and dedupe
  double a = 0.57;                        // quadrant probabilities (Graph500 defaults); a + b + c + d = 1
  double b = 0.19;
  double c = 0.19;
  double d = 0.05;
  // NSKG noise: level l uses a - 2 mu a/(a+d), b + mu, c + mu, d - 2 mu d/(a+d) with mu uniform in
  // [-noise, noise]; noise <= min(b, c, (a+d)/2). Smooths the oscillating degree distribution of plain R-MAT.
  double noise = 0;
  bool permute = true;      // relabel ids by a random permutation so degree does not follow id
  int64_t feature_dim = 0;  // > 0: standard-normal features (for scale runs of the trainer)
  int32_t num_classes = 0;  // > 0: uniform random labels and a split by `split`
  SplitFractions split;     // train/val/test fractions of the nodes (datasets/split.h)
  uint64_t seed = 0;
  // The options as the user gave them, for messages that ask to lower them ("--scale 40", "--edge-factor 16");
  // empty: "--nodes N" and "--edges M" from the counts above.
  std::string nodes_given_as;
  std::string edges_given_as;
};

void ValidateRmatOptions(const RmatOptions& options);
// The raw directed edges (ids permuted when `permute`), before any cleaning; for tests and edge-list output.
EdgeList GenerateRmatEdges(const RmatOptions& options);
// The symmetric, deduplicated graph without self-loops, plus the optional random features, labels and split.
NodeDataset GenerateRmat(const RmatOptions& options, BuildStats* stats = nullptr);

// Share of adjacency entries (u, v) with label[u] == label[v], over entries whose both ends are labelled.
double EdgeHomophily(const NodeDataset& data);

// Internals shared by generators.cc, csbm_generator.cc and rmat_generator.cc; not for other callers.
namespace internal {

// Work is cut into fixed chunks, each with its own stream StreamKey{seed, batch = chunk, purpose}, so the
// output does not depend on the number of threads.
inline constexpr int64_t kNodeChunk = 4096;
inline constexpr int64_t kEdgeChunk = int64_t{1} << 16;
enum Purpose : uint64_t {
  kPurposeFeatures = 1,
  kPurposeLabels,
  kPurposeClassSizes,
  kPurposeClassMeans,
  kPurposePropensity,
  kPurposeEdges,
  kPurposePermutation,
  kPurposeLevelNoise,
};

// One slot of a Walker/Vose alias table: a slot drawn uniformly gives `keep` when Uniform() < prob, else `other`.
// Keeping the item ids in the slot makes a draw one random memory access.
struct AliasSlot {
  double prob;
  int64_t keep;
  int64_t other;
};
// Table over `weights` (>= 0, positive sum) for items[i] (or i when `items` is empty); slots.size() = weights.size().
void BuildAliasTable(std::span<const double> weights, std::span<const int64_t> items, std::span<AliasSlot> slots);
inline int64_t DrawAlias(std::span<const AliasSlot> slots, Rng& rng) {
  const AliasSlot& s = slots[rng.UniformInt(slots.size())];
  return rng.Uniform() < s.prob ? s.keep : s.other;
}
void Shuffle(std::span<int64_t> values, Rng& rng);
// Throws unless the three fractions are finite, >= 0 and sum to 1 (as ParseSplitFractions requires).
void ValidateSplitFractions(const SplitFractions& split);
// Checks the memory budget (core/memory_budget.h) for the least a generator holds at once: `edges` drawn pairs,
// their adjacency, `nodes` ids and nodes x feature_dim features. The message names the generator and the options
// (`sizes`, e.g. "--nodes 10, --avg-degree 5, --features 3") and says to lower them.
void CheckGeneratorMemory(std::string_view generator, int64_t nodes, double edges, int64_t feature_dim,
                          std::string_view sizes);
// Row u = class_means[labels[u]] (or 0 when class_means is empty) + noise * N(0, 1) per value.
Features GaussianFeatures(std::span<const int32_t> labels, int64_t num_nodes, int64_t dim,
                          std::span<const float> class_means, double noise, uint64_t seed);

}  // namespace internal

}  // namespace tessel::datasets
