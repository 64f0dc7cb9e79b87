// CSBM and R-MAT generators against their definitions: reproducibility per seed and across thread counts,
// homophily, degrees and tails, class features, R-MAT quadrant shares per level, and option checks.
#include "datasets/generators.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/parallel.h"
#include "datasets/native_format.h"

namespace tessel::datasets {
namespace {

const CsrGraph32& Graph(const NodeDataset& d) { return std::get<CsrGraph32>(d.graph); }

void ExpectSameDataset(const NodeDataset& x, const NodeDataset& y) {
  ASSERT_EQ(Graph(x).indptr().ToVector(), Graph(y).indptr().ToVector());
  ASSERT_EQ(Graph(x).indices().ToVector(), Graph(y).indices().ToVector());
  EXPECT_EQ(x.labels.ToVector(), y.labels.ToVector());
  EXPECT_EQ(x.features.dense.ToVector(), y.features.dense.ToVector());
  EXPECT_EQ(x.train.ToVector(), y.train.ToVector());
  EXPECT_EQ(x.val.ToVector(), y.val.ToVector());
  EXPECT_EQ(x.test.ToVector(), y.test.ToVector());
}

void ExpectCleanGraph(const NodeDataset& d) {
  d.Validate();
  const CsrGraph32& g = Graph(d);
  EXPECT_TRUE(g.RowsSortedUnique());
  EXPECT_TRUE(g.IsSymmetric());
  EXPECT_EQ(g.CountSelfLoops(), 0);
}

// Serial oracle: share of adjacency entries whose ends share a label.
double SerialHomophily(const NodeDataset& d) {
  const CsrGraph32& g = Graph(d);
  auto lab = d.labels.Host();
  int64_t same = 0;
  for (int64_t u = 0; u < g.num_nodes(); ++u) {
    for (int32_t v : g.Neighbors(u)) same += lab[u] == lab[v];
  }
  return static_cast<double>(same) / static_cast<double>(g.num_entries());
}

CsbmOptions SmallCsbm() {
  CsbmOptions o;
  o.num_nodes = 20000;
  o.num_classes = 5;
  o.avg_degree = 10;
  o.homophily = 0.8;
  o.feature_dim = 8;
  o.seed = 7;
  return o;
}

TEST(AliasTable, ImpliedProbabilitiesEqualTheWeights) {
  const std::vector<double> w = {5, 0, 1, 0.25, 3, 3, 10, 0.5};
  const std::vector<int64_t> items = {100, 101, 102, 103, 104, 105, 106, 107};
  std::vector<internal::AliasSlot> slots(w.size());
  internal::BuildAliasTable(w, items, slots);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  const auto k = static_cast<double>(w.size());
  // P(item) = sum over slots of (prob if it is kept, 1 - prob if it is the alias) / k, exactly w / total.
  std::vector<double> implied(w.size(), 0.0);
  for (const auto& s : slots) {
    ASSERT_GE(s.prob, 0.0);
    ASSERT_LE(s.prob, 1.0);
    ASSERT_TRUE(s.keep >= 100 && s.keep < 108 && s.other >= 100 && s.other < 108);
    implied[static_cast<size_t>(s.keep - 100)] += s.prob / k;
    implied[static_cast<size_t>(s.other - 100)] += (1 - s.prob) / k;
  }
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(implied[i], w[i] / total, 1e-12) << "entry " << i;
  // Draws follow the same law (5 standard errors at 200000 draws).
  Rng rng(11);
  std::vector<double> freq(w.size(), 0.0);
  const int draws = 200000;
  for (int i = 0; i < draws; ++i) freq[static_cast<size_t>(internal::DrawAlias(slots, rng) - 100)] += 1.0 / draws;
  for (size_t i = 0; i < w.size(); ++i) {
    const double p = w[i] / total;
    EXPECT_NEAR(freq[i], p, 5 * std::sqrt(p * (1 - p) / draws) + 1e-12) << "entry " << i;
  }
  EXPECT_THROW(internal::BuildAliasTable(std::vector<double>{0, 0}, {}, std::span(slots).first(2)), Error);
}

TEST(Csbm, SameSeedSameDatasetDifferentSeedDifferent) {
  const CsbmOptions o = SmallCsbm();
  const NodeDataset a = GenerateCsbm(o);
  const NodeDataset b = GenerateCsbm(o);
  ExpectSameDataset(a, b);
  CsbmOptions o2 = o;
  o2.seed = 8;
  const NodeDataset c = GenerateCsbm(o2);
  EXPECT_NE(Graph(a).indices().ToVector(), Graph(c).indices().ToVector());
  EXPECT_NE(a.labels.ToVector(), c.labels.ToVector());
  EXPECT_NE(a.features.dense.ToVector(), c.features.dense.ToVector());
}

TEST(Csbm, IndependentOfThreadCount) {
  CsbmOptions o = SmallCsbm();
  o.degree_exponent = 2.5;  // exercise the propensity chunks too
  o.num_nodes = 30000;      // several edge and node chunks
  NodeDataset one;
  {
    ThreadLimit limit(1);
    one = GenerateCsbm(o);
  }
  ThreadLimit limit(2);
  ExpectSameDataset(one, GenerateCsbm(o));
}

TEST(Csbm, GraphIsCleanAndLabelsSplitsFeaturesFit) {
  const CsbmOptions o = SmallCsbm();
  CsbmDetails details;
  const NodeDataset d = GenerateCsbm(o, &details);
  ExpectCleanGraph(d);
  EXPECT_EQ(d.num_nodes(), o.num_nodes);
  EXPECT_EQ(d.num_classes, o.num_classes);
  EXPECT_EQ(d.features.num_rows, o.num_nodes);
  EXPECT_EQ(d.features.dim, o.feature_dim);
  EXPECT_EQ(static_cast<int64_t>(d.train.size()), 12000);
  EXPECT_EQ(static_cast<int64_t>(d.val.size()), 4000);
  EXPECT_EQ(static_cast<int64_t>(d.test.size()), 4000);
  // Balanced classes: 4000 each.
  std::vector<int64_t> counts(static_cast<size_t>(o.num_classes), 0);
  for (int32_t l : d.labels.Host()) ++counts[l];
  for (int64_t c : counts) EXPECT_EQ(c, 4000);
  EXPECT_EQ(details.class_sizes, counts);
  // Labels are not in blocks of ids: the first 100 nodes hold more than one class.
  auto lab = d.labels.Host();
  EXPECT_GT(std::count_if(lab.begin(), lab.begin() + 100, [&](int32_t l) { return l != lab[0]; }), 0);
  EXPECT_EQ(details.build.input_edges, 100000);
}

TEST(Csbm, MeasuredHomophilyMatchesH) {
  for (double h : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    CsbmOptions o = SmallCsbm();
    o.homophily = h;
    o.feature_dim = 0;
    const NodeDataset d = GenerateCsbm(o);
    const double measured = SerialHomophily(d);
    EXPECT_NEAR(measured, h, 0.015) << "h = " << h;
    EXPECT_NEAR(EdgeHomophily(d), measured, 1e-12);
  }
}

TEST(Csbm, MeanDegreeCloseToTarget) {
  for (double target : {4.0, 10.0, 30.0}) {
    CsbmOptions o = SmallCsbm();
    o.avg_degree = target;
    o.feature_dim = 0;
    const NodeDataset d = GenerateCsbm(o);
    const double mean = static_cast<double>(Graph(d).num_entries()) / static_cast<double>(d.num_nodes());
    EXPECT_NEAR(mean, target, 0.02 * target) << "target " << target;
  }
}

int64_t MaxDegree(const CsrGraph32& g) {
  int64_t best = 0;
  for (int64_t u = 0; u < g.num_nodes(); ++u) best = std::max(best, g.Degree(u));
  return best;
}

TEST(Csbm, DegreeExponentGivesHeavyTail) {
  CsbmOptions o = SmallCsbm();
  o.feature_dim = 0;
  const NodeDataset plain = GenerateCsbm(o);
  const double mean = static_cast<double>(Graph(plain).num_entries()) / static_cast<double>(o.num_nodes);
  EXPECT_LT(static_cast<double>(MaxDegree(Graph(plain))), 3 * mean);  // Poisson-like: no hubs

  o.degree_exponent = 2.5;
  CsbmDetails details;
  const NodeDataset heavy = GenerateCsbm(o, &details);
  ExpectCleanGraph(heavy);
  const double heavy_mean = static_cast<double>(Graph(heavy).num_entries()) / static_cast<double>(o.num_nodes);
  EXPECT_NEAR(heavy_mean, o.avg_degree, 0.1 * o.avg_degree);  // a few hub multi-edges merge
  EXPECT_GT(static_cast<double>(MaxDegree(Graph(heavy))), 20 * heavy_mean);

  // The propensities are Pareto with tail index gamma - 1: the maximum-likelihood (Hill) estimate with x_min = 1.
  double log_sum = 0;
  for (double t : details.propensity) {
    ASSERT_GE(t, 1.0);
    log_sum += std::log(t);
  }
  const double alpha = static_cast<double>(details.propensity.size()) / log_sum;
  EXPECT_NEAR(alpha, o.degree_exponent - 1, 0.05);

  // Degrees follow the propensities: the top 1% by propensity hold far more than 1% of the entries.
  std::vector<int64_t> order(static_cast<size_t>(o.num_nodes));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(),
            [&](int64_t x, int64_t y) { return details.propensity[x] > details.propensity[y]; });
  int64_t top = 0;
  for (size_t i = 0; i < order.size() / 100; ++i) top += Graph(heavy).Degree(order[i]);
  EXPECT_GT(static_cast<double>(top), 0.08 * static_cast<double>(Graph(heavy).num_entries()));
  // A smaller exponent gives a heavier tail.
  o.degree_exponent = 2.1;
  EXPECT_GT(MaxDegree(Graph(GenerateCsbm(o))), MaxDegree(Graph(heavy)));
}

TEST(Csbm, ClassFeatureMeansMatchTheClassVectors) {
  CsbmOptions o = SmallCsbm();
  o.feature_dim = 16;
  o.signal = 2.0;
  o.noise = 0.5;
  CsbmDetails details;
  const NodeDataset d = GenerateCsbm(o, &details);
  const int64_t dim = o.feature_dim;
  ASSERT_EQ(static_cast<int64_t>(details.class_means.size()), o.num_classes * dim);
  for (int32_t c = 0; c < o.num_classes; ++c) {
    double norm = 0;
    for (int64_t j = 0; j < dim; ++j) norm += std::pow(details.class_means[c * dim + j], 2);
    EXPECT_NEAR(std::sqrt(norm), o.signal, 1e-5);
  }
  std::vector<double> sum(static_cast<size_t>(o.num_classes * dim), 0.0);
  std::vector<int64_t> count(static_cast<size_t>(o.num_classes), 0);
  auto x = d.features.dense.Host();
  auto lab = d.labels.Host();
  for (int64_t u = 0; u < o.num_nodes; ++u) {
    ++count[lab[u]];
    for (int64_t j = 0; j < dim; ++j) sum[lab[u] * dim + j] += x[u * dim + j];
  }
  double sq_dev = 0;
  for (int32_t c = 0; c < o.num_classes; ++c) {
    for (int64_t j = 0; j < dim; ++j) {
      const double mean = sum[c * dim + j] / static_cast<double>(count[c]);
      // Standard error 0.5 / sqrt(4000) = 0.008; 0.04 is 5 of them.
      EXPECT_NEAR(mean, details.class_means[c * dim + j], 0.04) << "class " << c << " dim " << j;
    }
  }
  for (int64_t u = 0; u < o.num_nodes; ++u) {
    for (int64_t j = 0; j < dim; ++j) sq_dev += std::pow(x[u * dim + j] - details.class_means[lab[u] * dim + j], 2);
  }
  EXPECT_NEAR(std::sqrt(sq_dev / static_cast<double>(o.num_nodes * dim)), o.noise, 0.01);
}

TEST(Csbm, DirichletClassSizesAreUnequalAndCoverEveryClass) {
  CsbmOptions o = SmallCsbm();
  o.feature_dim = 0;
  o.num_classes = 8;
  o.class_concentration = 0.5;
  CsbmDetails details;
  const NodeDataset d = GenerateCsbm(o, &details);
  d.Validate();
  ASSERT_EQ(details.class_sizes.size(), 8U);
  EXPECT_EQ(std::accumulate(details.class_sizes.begin(), details.class_sizes.end(), int64_t{0}), o.num_nodes);
  for (int64_t s : details.class_sizes) EXPECT_GE(s, 1);
  const auto [lo, hi] = std::minmax_element(details.class_sizes.begin(), details.class_sizes.end());
  EXPECT_GT(*hi, 2 * *lo);
  // Tiny classes still work: every class keeps a node even when the shares round to zero.
  o.num_nodes = 10;
  o.avg_degree = 2;
  o.class_concentration = 0.01;
  const NodeDataset tiny = GenerateCsbm(o, &details);
  tiny.Validate();
  for (int64_t s : details.class_sizes) EXPECT_GE(s, 1);
}

TEST(Csbm, BadOptionsAreRejected) {
  auto expect_error = [](CsbmOptions o, const std::string& needle) {
    try {
      ValidateCsbmOptions(o);
      ADD_FAILURE() << "accepted, expected an error about " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  CsbmOptions o = SmallCsbm();
  EXPECT_NO_THROW(ValidateCsbmOptions(o));
  auto with = [&](auto change) {
    CsbmOptions x = o;
    change(x);
    return x;
  };
  expect_error(with([](CsbmOptions& x) { x.homophily = 1.5; }), "--homophily");
  expect_error(with([](CsbmOptions& x) { x.homophily = -0.1; }), "--homophily");
  expect_error(with([](CsbmOptions& x) { x.num_classes = 1; }), "--classes");
  expect_error(with([](CsbmOptions& x) { x.num_classes = 20001; }), "--classes");
  expect_error(with([](CsbmOptions& x) { x.num_nodes = 1; }), "--nodes");
  expect_error(with([](CsbmOptions& x) { x.avg_degree = 0; }), "--avg-degree");
  expect_error(with([](CsbmOptions& x) { x.avg_degree = 20000; }), "--avg-degree");
  expect_error(with([](CsbmOptions& x) { x.degree_exponent = 1.5; }), "--degree-exponent");
  expect_error(with([](CsbmOptions& x) { x.class_concentration = -1; }), "--class-concentration");
  expect_error(with([](CsbmOptions& x) { x.feature_dim = -1; }), "--features");
  expect_error(with([](CsbmOptions& x) { x.noise = -1; }), "--noise");
  expect_error(with([](CsbmOptions& x) { x.signal = NAN; }), "--signal");
  expect_error(with([](CsbmOptions& x) { x.split = {0.5, 0.2, 0.2}; }), "--split");
  EXPECT_THROW(GenerateCsbm(with([](CsbmOptions& x) { x.homophily = 2; })), Error);
}

RmatOptions SmallRmat() {
  RmatOptions o;
  o.num_nodes = 1024;
  o.num_edges = 200000;
  o.permute = false;
  o.seed = 3;
  return o;
}

// shares[level][q], q = 2 * row bit + column bit, over the raw edges.
std::vector<std::array<double, 4>> QuadrantShares(const EdgeList& e, int levels) {
  std::vector<std::array<double, 4>> shares(static_cast<size_t>(levels), std::array<double, 4>{});
  for (size_t i = 0; i < e.size(); ++i) {
    for (int l = 0; l < levels; ++l) {
      const int shift = levels - 1 - l;
      const auto q = static_cast<size_t>(2 * ((e.src[i] >> shift) & 1) + ((e.dst[i] >> shift) & 1));
      shares[l][q] += 1.0 / static_cast<double>(e.size());
    }
  }
  return shares;
}

TEST(Rmat, QuadrantSharesMatchABCDAtEveryLevel) {
  const RmatOptions o = SmallRmat();
  const EdgeList e = GenerateRmatEdges(o);
  ASSERT_EQ(static_cast<int64_t>(e.size()), o.num_edges);
  const double expected[4] = {o.a, o.b, o.c, o.d};
  // Standard error sqrt(p(1-p)/m) <= 0.0012; 0.006 is 5 of them.
  for (const auto& level : QuadrantShares(e, 10)) {
    for (int q = 0; q < 4; ++q) EXPECT_NEAR(level[q], expected[q], 0.006) << "quadrant " << q;
  }
}

TEST(Rmat, NoisePerturbsEachLevelSymmetrically) {
  RmatOptions o = SmallRmat();
  o.noise = 0.1;
  const auto shares = QuadrantShares(GenerateRmatEdges(o), 10);
  double lo = 1;
  double hi = 0;
  for (const auto& level : shares) {
    EXPECT_NEAR(level[1], level[2], 0.008);  // b + mu and c + mu move together
    // a and d move together against them, in proportion a : d.
    EXPECT_NEAR(level[3] / (level[0] + level[3]), o.d / (o.a + o.d), 0.004);
    lo = std::min(lo, level[1]);
    hi = std::max(hi, level[1]);
  }
  EXPECT_GT(hi - lo, 0.03);  // the levels differ (mu uniform in [-0.1, 0.1])
}

TEST(Rmat, NonPowerOfTwoNodesStayInRange) {
  RmatOptions o = SmallRmat();
  o.num_nodes = 1000;
  o.num_edges = 50000;
  o.permute = true;
  const EdgeList e = GenerateRmatEdges(o);
  ASSERT_EQ(static_cast<int64_t>(e.size()), o.num_edges);
  for (size_t i = 0; i < e.size(); ++i) {
    ASSERT_TRUE(e.src[i] >= 0 && e.src[i] < 1000 && e.dst[i] >= 0 && e.dst[i] < 1000);
  }
  ExpectCleanGraph(GenerateRmat(o));
}

TEST(Rmat, PermutationRelabelsWithoutChangingTheGraph) {
  RmatOptions o = SmallRmat();
  o.num_edges = 20000;
  const EdgeList plain = GenerateRmatEdges(o);
  o.permute = true;
  const EdgeList permuted = GenerateRmatEdges(o);
  // The same draws, relabelled by one bijection.
  std::vector<int64_t> map(static_cast<size_t>(o.num_nodes), -1);
  for (size_t i = 0; i < plain.size(); ++i) {
    for (auto [x, y] : {std::pair{plain.src[i], permuted.src[i]}, {plain.dst[i], permuted.dst[i]}}) {
      if (map[x] < 0) map[x] = y;
      ASSERT_EQ(map[x], y);
    }
  }
  std::vector<int64_t> image;
  for (int64_t y : map) {
    if (y >= 0) image.push_back(y);
  }
  std::sort(image.begin(), image.end());
  EXPECT_EQ(std::unique(image.begin(), image.end()), image.end());
  // Without the permutation node 0 (all-"a" path) is the hub; with it, the hub moves elsewhere.
  const NodeDataset d_plain = GenerateRmat(SmallRmat());
  EXPECT_EQ(Graph(d_plain).Degree(0), MaxDegree(Graph(d_plain)));
  EXPECT_NE(map[0], 0);
}

TEST(Rmat, SameSeedSameGraphAndIndependentOfThreads) {
  RmatOptions o = SmallRmat();
  o.num_nodes = 4096;
  o.num_edges = 150000;  // three edge chunks
  o.permute = true;
  o.feature_dim = 4;
  o.num_classes = 3;
  NodeDataset one;
  {
    ThreadLimit limit(1);
    one = GenerateRmat(o);
  }
  {
    ThreadLimit limit(2);
    ExpectSameDataset(one, GenerateRmat(o));
  }
  o.seed = 4;
  EXPECT_NE(Graph(one).indices().ToVector(), Graph(GenerateRmat(o)).indices().ToVector());
}

TEST(Rmat, OptionalFeaturesLabelsAndSplit) {
  RmatOptions o = SmallRmat();
  o.feature_dim = 8;
  o.num_classes = 4;
  BuildStats stats;
  const NodeDataset d = GenerateRmat(o, &stats);
  ExpectCleanGraph(d);
  EXPECT_EQ(stats.input_edges, o.num_edges);
  EXPECT_GT(stats.duplicates_removed, 0);  // R-MAT repeats hub pairs
  EXPECT_EQ(d.num_classes, 4);
  EXPECT_EQ(static_cast<int64_t>(d.train.size() + d.val.size() + d.test.size()), o.num_nodes);
  std::vector<int64_t> counts(4, 0);
  for (int32_t l : d.labels.Host()) ++counts[l];
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c), 256.0, 80.0);
  double sum = 0;
  double sq = 0;
  for (float x : d.features.dense.Host()) {
    sum += x;
    sq += static_cast<double>(x) * x;
  }
  const auto cnt = static_cast<double>(d.features.dense.size());
  EXPECT_NEAR(sum / cnt, 0.0, 0.05);
  EXPECT_NEAR(sq / cnt, 1.0, 0.05);
  // Structure only by default.
  const NodeDataset bare = GenerateRmat(SmallRmat());
  EXPECT_FALSE(bare.has_labels());
  EXPECT_TRUE(bare.features.empty());
  EXPECT_FALSE(bare.has_split());
}

TEST(Rmat, BadOptionsAreRejected) {
  auto expect_error = [](RmatOptions o, const std::string& needle) {
    try {
      ValidateRmatOptions(o);
      ADD_FAILURE() << "accepted, expected an error about " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const RmatOptions o = SmallRmat();
  EXPECT_NO_THROW(ValidateRmatOptions(o));
  auto with = [&](auto change) {
    RmatOptions x = o;
    change(x);
    return x;
  };
  expect_error(with([](RmatOptions& x) { x.a = 0.6; }), "sum to 1");
  expect_error(with([](RmatOptions& x) { x.d = -0.05; }), "-d");
  expect_error(with([](RmatOptions& x) { x.noise = 0.2; }), "--noise");
  expect_error(with([](RmatOptions& x) { x.num_nodes = 1; }), "--nodes");
  expect_error(with([](RmatOptions& x) { x.num_edges = -1; }), "--edges");
  expect_error(with([](RmatOptions& x) { x.num_classes = 2000; }), "--classes");
  expect_error(with([](RmatOptions& x) { x.split = {0.6, 0.6, 0.2}; }), "--split");
  // A model that almost never lands inside a non-power-of-two range fails instead of spinning.
  RmatOptions stuck = o;
  stuck.num_nodes = 513;
  stuck.a = 0;
  stuck.b = 0;
  stuck.c = 0;
  stuck.d = 1;
  EXPECT_THROW(GenerateRmatEdges(stuck), Error);
}

// papers100M-class sizes (3e9 nodes, 3.2e9 edges drawn) pass the option checks as 64-bit counts without generating
// anything; feature columns beyond int32 ids are refused; the memory check names the sizes before any allocation.
TEST(Generators, CountsBeyond32BitsPassTheOptionChecks) {
  constexpr int64_t kNodes = 3'000'000'000;
  RmatOptions r = SmallRmat();
  r.num_nodes = kNodes;
  r.num_edges = 3'200'000'000;
  r.num_classes = 172;
  EXPECT_NO_THROW(ValidateRmatOptions(r));
  r.feature_dim = int64_t{1} << 31;
  EXPECT_THROW(ValidateRmatOptions(r), Error);
  try {
    ValidateRmatOptions(r);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--features must be in [0, 2147483647]"), std::string::npos) << e.what();
  }
  r.feature_dim = 128;
  EXPECT_NO_THROW(ValidateRmatOptions(r));

  CsbmOptions c = SmallCsbm();
  c.num_nodes = kNodes;
  c.avg_degree = 2.2;  // 3.3e9 edges drawn
  c.feature_dim = 128;
  EXPECT_NO_THROW(ValidateCsbmOptions(c));
  c.feature_dim = int64_t{1} << 31;
  EXPECT_THROW(ValidateCsbmOptions(c), Error);

  // The generators refuse such sizes by the memory budget, naming the 64-bit counts, before drawing anything.
  memory::SetLimit(int64_t{1} << 30);
  r.feature_dim = 0;
  try {
    GenerateRmatEdges(r);
    ADD_FAILURE() << "3.2e9 edges were generated within 1 GiB";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--nodes 3000000000, --edges 3200000000"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--max-memory"), std::string::npos) << e.what();
  }
  memory::SetLimit(0);
}

// `tessel generate` end to end: the written dataset equals the in-memory one for the same options, and bad options
// fail before anything is written. Skips when the binary has not been built.
class GenerateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(TESSEL_BINARY)) GTEST_SKIP() << "no tessel binary at " << TESSEL_BINARY;
    root_ = std::filesystem::temp_directory_path() /
            ("tessel_generate_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override {
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }
  // Runs `tessel --log-level warn generate ARGS`; returns the exit code, stdout in *out and stderr in *err.
  int Run(const std::string& args, std::string* out, std::string* err) const {
    const auto out_file = root_ / "stdout.txt";
    const auto err_file = root_ / "stderr.txt";
    const std::string cmd = std::string("'") + TESSEL_BINARY + "' --log-level warn generate " + args + " >'" +
                            out_file.string() + "' 2>'" + err_file.string() + "'";
    const int status = std::system(cmd.c_str());
    auto slurp = [](const std::filesystem::path& p) {
      std::ifstream in(p);
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    };
    *out = slurp(out_file);
    *err = slurp(err_file);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::filesystem::path root_;
};

TEST_F(GenerateCli, CsbmFolderEqualsTheInMemoryDataset) {
  const auto dir = root_ / "csbm";
  std::string out;
  std::string err;
  ASSERT_EQ(Run("csbm --nodes 3000 --classes 3 --avg-degree 8 --homophily 0.6 --degree-exponent 2.5 --features 4 "
                "--seed 5 --split 0.5,0.25,0.25 --threads 1 --json --output '" +
                    dir.string() + "'",
                &out, &err),
            0)
      << err;
  CsbmOptions o;
  o.num_nodes = 3000;
  o.num_classes = 3;
  o.avg_degree = 8;
  o.homophily = 0.6;
  o.degree_exponent = 2.5;
  o.feature_dim = 4;
  o.seed = 5;
  o.split = {0.5, 0.25, 0.25};
  const NodeDataset expected = GenerateCsbm(o);
  ExpectSameDataset(LoadNodeDataset(dir), expected);
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["edges_drawn"], 12000);
  EXPECT_EQ(j["adjacency_entries"], Graph(expected).num_entries());
  EXPECT_NEAR(j["homophily_measured"].get<double>(), EdgeHomophily(expected), 1e-12);
  // The folder exists now: without --force it is an error.
  EXPECT_NE(Run("csbm --nodes 100 --output '" + dir.string() + "'", &out, &err), 0);
  EXPECT_NE(err.find("--force"), std::string::npos) << err;
}

TEST_F(GenerateCli, RmatFolderEqualsTheInMemoryDataset) {
  const auto dir = root_ / "rmat";
  std::string out;
  std::string err;
  ASSERT_EQ(Run("rmat --scale 10 --edge-factor 8 --noise 0.05 --features 2 --classes 2 --seed 9 --output '" +
                    dir.string() + "'",
                &out, &err),
            0)
      << err;
  RmatOptions o;
  o.num_nodes = 1024;
  o.num_edges = 8192;
  o.noise = 0.05;
  o.feature_dim = 2;
  o.num_classes = 2;
  o.seed = 9;
  ExpectSameDataset(LoadNodeDataset(dir), GenerateRmat(o));
}

TEST_F(GenerateCli, BadOptionsFailBeforeWriting) {
  std::string out;
  std::string err;
  const auto dir = root_ / "never";
  const std::pair<std::string, std::string> cases[] = {
      {"csbm --homophily 2", "--homophily"},
      {"csbm --classes 1", "--classes"},
      {"csbm --split 0.5,0.5,0.5", "sums to 1.5"},
      {"csbm --degree-exponent 1", "--degree-exponent"},
      {"rmat -a 0.5", "sum to 1"},
      {"rmat --scale 0", "--scale"},
      {"rmat --nodes 100 --noise 0.5", "--noise"},
      {"rmat --edge-factor -2", "--edge-factor"},
      {"rmat --nodes 3000000000 --edges 3200000000 --features 2147483648", "--features"},
      {"csbm --nodes 3000000000 --features 2147483648", "--features"},
  };
  for (const auto& [args, needle] : cases) {
    EXPECT_NE(Run(args + " --output '" + dir.string() + "'", &out, &err), 0) << args;
    EXPECT_NE(err.find(needle), std::string::npos) << args << ": " << err;
    EXPECT_FALSE(std::filesystem::exists(dir)) << args;
  }
}

}  // namespace
}  // namespace tessel::datasets
