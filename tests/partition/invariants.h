// The partition invariant checker shared by the build, format and real-data tests: every property a built or
// loaded set of parts must have, checked against the original dataset by brute force.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include "partition/partition_build.h"
#include "partition/partition_stats.h"
#include "tests/partition/test_graphs.h"

namespace tessel::partition::fixtures {

// (neighbour, weight) pairs of original row u, sorted.
inline std::vector<std::pair<int64_t, float>> OriginalRow(const datasets::NodeDataset& d, int64_t u) {
  std::vector<std::pair<int64_t, float>> row;
  std::visit(
      [&](const auto& g) {
        auto nb = g.Neighbors(u);
        for (size_t i = 0; i < nb.size(); ++i) {
          row.emplace_back(static_cast<int64_t>(nb[i]), g.has_weights() ? g.NeighborWeights(u)[i] : 0.0F);
        }
      },
      d.graph);
  std::sort(row.begin(), row.end());
  return row;
}

// Checks every invariant of the built parts against the dataset and the assignment.
inline void CheckParts(const datasets::NodeDataset& d, const std::vector<int32_t>& assignment, int32_t k,
                       const std::vector<LocalPart>& parts) {
  const int64_t n = d.num_nodes();
  ASSERT_EQ(static_cast<int32_t>(parts.size()), k);
  std::vector<int> owner_count(static_cast<size_t>(n), 0);
  int64_t total_entries = 0;
  int64_t global_next = 0;
  int64_t total_halo = 0;
  for (int32_t p = 0; p < k; ++p) {
    const LocalPart& lp = parts[p];
    SCOPED_TRACE(::testing::Message() << "part " << p << " of " << k);
    ASSERT_NO_THROW(lp.Validate());
    EXPECT_EQ(lp.part, p);
    EXPECT_EQ(lp.global_offset, global_next);  // contiguous new global ranges, in part order
    global_next += lp.num_owned;
    // Ownership.
    for (int64_t u : lp.owned_ids.Host()) {
      ++owner_count[u];
      EXPECT_EQ(assignment[u], p);
    }
    // Edges: each owned row equals the original row (mapped back), weights included.
    std::set<int64_t> remote;
    for (int64_t i = 0; i < lp.num_owned; ++i) {
      const int64_t u = lp.ToOriginal(i);
      std::vector<std::pair<int64_t, float>> row;
      auto nb = lp.graph.Neighbors(i);
      for (size_t j = 0; j < nb.size(); ++j) {
        const int64_t v = lp.ToOriginal(nb[j]);
        row.emplace_back(v, lp.graph.has_weights() ? lp.graph.NeighborWeights(i)[j] : 0.0F);
        if (assignment[v] != p) remote.insert(v);
        // Owned columns are owned nodes, halo columns are remote nodes.
        EXPECT_EQ(nb[j] < lp.num_owned, assignment[v] == p);
      }
      std::sort(row.begin(), row.end());
      ASSERT_EQ(row, OriginalRow(d, u)) << "row of node " << u;
      total_entries += static_cast<int64_t>(nb.size());
    }
    for (int64_t i = lp.num_owned; i < lp.num_local(); ++i) EXPECT_EQ(lp.graph.Degree(i), 0);
    // Halo = exactly the remote endpoints, with their owners and their local ids there.
    const std::vector<int64_t> halo = lp.halo_ids.ToVector();
    EXPECT_EQ(halo, std::vector<int64_t>(remote.begin(), remote.end()));
    total_halo += lp.num_halo;
    for (int64_t j = 0; j < lp.num_halo; ++j) {
      const int64_t v = halo[j];
      const int32_t owner = lp.halo_owner[j];
      EXPECT_EQ(owner, assignment[v]);
      EXPECT_EQ(parts[owner].ToOriginal(lp.halo_remote[j]), v);
    }
    // Id maps invert each other over all local ids and all original ids.
    for (int64_t l = 0; l < lp.num_local(); ++l) EXPECT_EQ(lp.ToLocal(lp.ToOriginal(l)), l);
    for (int64_t v = 0; v < n; ++v) {
      const int64_t l = lp.ToLocal(v);
      const bool present = assignment[v] == p || remote.count(v) > 0;
      ASSERT_EQ(l >= 0, present) << "node " << v;
      if (l >= 0) {
        EXPECT_EQ(lp.ToOriginal(l), v);
      }
    }
    // Features follow their nodes.
    EXPECT_EQ(lp.features.num_rows, d.features.num_rows == 0 ? 0 : lp.num_owned);
    EXPECT_EQ(lp.features.dim, d.features.dim);
    for (int64_t i = 0; i < lp.num_owned && !d.features.empty(); ++i) {
      const int64_t u = lp.ToOriginal(i);
      if (d.features.sparse) {
        auto sp = d.features.indptr.Host();
        auto lptr = lp.features.indptr.Host();
        ASSERT_EQ(lptr[i + 1] - lptr[i], sp[u + 1] - sp[u]);
        for (int64_t e = 0; e < lptr[i + 1] - lptr[i]; ++e) {
          EXPECT_EQ(lp.features.indices[lptr[i] + e], d.features.indices[sp[u] + e]);
          EXPECT_EQ(lp.features.values[lptr[i] + e], d.features.values[sp[u] + e]);
        }
      } else {
        for (int64_t c = 0; c < d.features.dim; ++c) {
          EXPECT_EQ(lp.features.dense[i * d.features.dim + c], d.features.dense[u * d.features.dim + c]);
        }
      }
    }
    // Labels and splits follow their nodes.
    ASSERT_EQ(lp.labels.size(), d.has_labels() ? static_cast<size_t>(lp.num_owned) : 0U);
    for (int64_t i = 0; i < static_cast<int64_t>(lp.labels.size()); ++i) {
      EXPECT_EQ(lp.labels[i], d.labels[lp.ToOriginal(i)]);
    }
    const std::pair<const Buffer<int64_t>*, const Buffer<int64_t>*> splits[] = {
        {&d.train, &lp.train}, {&d.val, &lp.val}, {&d.test, &lp.test}};
    for (const auto& [global, local] : splits) {
      std::vector<int64_t> expected;
      for (int64_t u : global->Host()) {
        if (assignment[u] == p) expected.push_back(u);
      }
      std::vector<int64_t> got;
      for (int64_t l : local->Host()) got.push_back(lp.ToOriginal(l));
      EXPECT_EQ(got, expected);
    }
  }
  EXPECT_EQ(global_next, n);
  for (int64_t u = 0; u < n; ++u) ASSERT_EQ(owner_count[u], 1) << "node " << u << " owned " << owner_count[u] << "x";
  EXPECT_EQ(total_entries, datasets::NumEntries(d.graph));

  // Statistics against brute force.
  PartitionStats s = ComputeStats(d, assignment, k);
  std::vector<int64_t> halos;
  for (const LocalPart& lp : parts) halos.push_back(lp.num_halo);
  SetHalo(&s, halos);
  int64_t cut = 0;
  for (int64_t u = 0; u < n; ++u) {
    for (const auto& [v, w] : OriginalRow(d, u)) cut += v != u && assignment[v] != assignment[u];
  }
  EXPECT_EQ(s.cut_entries, cut);
  EXPECT_DOUBLE_EQ(s.halo_replication, static_cast<double>(n + total_halo) / static_cast<double>(n));
  int64_t max_nodes = 0;
  for (int32_t p = 0; p < k; ++p) {
    EXPECT_EQ(s.parts[p].nodes, parts[p].num_owned);
    EXPECT_EQ(s.parts[p].edges, parts[p].graph.num_entries());
    EXPECT_EQ(s.parts[p].train, static_cast<int64_t>(parts[p].train.size()));
    max_nodes = std::max(max_nodes, parts[p].num_owned);
  }
  EXPECT_DOUBLE_EQ(s.imbalance_nodes, static_cast<double>(max_nodes) * k / static_cast<double>(n));
}

inline std::vector<LocalPart> BuildAll(const datasets::NodeDataset& d, const std::vector<int32_t>& assignment,
                                       int32_t k) {
  const PartitionPlan plan = MakePlan(assignment, k);
  PartBuilder builder(d, plan);
  std::vector<LocalPart> parts;
  for (int32_t p = 0; p < k; ++p) parts.push_back(builder.Build(p));
  return parts;
}

}  // namespace tessel::partition::fixtures
