// Partition statistics: one parallel pass over the adjacency for the cut and the per-part edge counts, one pass
// over the nodes and split lists for the other counts; imbalance = largest part weight / average part weight.
#include "partition/partition_stats.h"

#include <algorithm>
#include <atomic>
#include <variant>

#include <tbb/combinable.h>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel::partition {
namespace {

double Imbalance(const std::vector<PartCounts>& parts, int64_t PartCounts::*field) {
  int64_t total = 0;
  int64_t largest = 0;
  for (const PartCounts& p : parts) {
    total += p.*field;
    largest = std::max(largest, p.*field);
  }
  if (total == 0) return 0;
  return static_cast<double>(largest) * static_cast<double>(parts.size()) / static_cast<double>(total);
}

template <typename IdT>
bool SymmetricByTranspose(const datasets::CsrGraph<IdT>& g) {
  if (!g.RowsSortedUnique()) return g.IsSymmetric();
  const int64_t n = g.num_nodes();
  auto ptr = g.indptr().Host();
  auto idx = g.indices().Host();
  // Fill the transpose row by row in ascending source order, so its rows come out sorted; a row that
  // overflows or ends short means in-degree != out-degree.
  std::vector<int64_t> cursor(ptr.begin(), ptr.end() - 1);
  std::vector<IdT> transpose(idx.size());
  for (int64_t u = 0; u < n; ++u) {
    for (int64_t e = ptr[u]; e < ptr[u + 1]; ++e) {
      const auto v = static_cast<int64_t>(idx[e]);
      if (cursor[v] >= ptr[v + 1]) return false;
      transpose[cursor[v]++] = static_cast<IdT>(u);
    }
  }
  std::atomic<bool> equal{true};
  parallel_for_chunks<int64_t>(0, static_cast<int64_t>(idx.size()), 1 << 16, [&](int64_t b, int64_t e) {
    if (!std::equal(transpose.begin() + b, transpose.begin() + e, idx.begin() + b)) equal.store(false);
  });
  return equal.load();
}

}  // namespace

bool StructurallySymmetric(const datasets::CsrGraph32& graph) { return SymmetricByTranspose(graph); }
bool StructurallySymmetric(const datasets::CsrGraph64& graph) { return SymmetricByTranspose(graph); }

PartitionStats ComputeStats(const datasets::NodeDataset& data, std::span<const int32_t> part, int32_t num_parts,
                            int symmetric) {
  const int64_t n = data.num_nodes();
  TESSEL_CHECK(static_cast<int64_t>(part.size()) == n, "partition stats: {} assignments for {} nodes", part.size(), n);
  PartitionStats s;
  s.num_parts = num_parts;
  s.num_nodes = n;
  s.num_entries = datasets::NumEntries(data.graph);
  s.parts.assign(static_cast<size_t>(num_parts), PartCounts{});
  struct Local {
    std::vector<int64_t> nodes;
    std::vector<int64_t> edges;
    int64_t cut = 0;
    int64_t loops = 0;
  };
  tbb::combinable<Local> acc([&] {
    return Local{std::vector<int64_t>(static_cast<size_t>(num_parts), 0),
                 std::vector<int64_t>(static_cast<size_t>(num_parts), 0), 0, 0};
  });
  std::visit(
      [&](const auto& g) {
        s.symmetric = symmetric < 0 ? SymmetricByTranspose(g) : symmetric == 1;
        auto ptr = g.indptr().Host();
        auto idx = g.indices().Host();
        parallel_for_chunks<int64_t>(0, n, 4096, [&](int64_t b, int64_t e) {
          Local& l = acc.local();
          for (int64_t u = b; u < e; ++u) {
            const int32_t pu = part[u];
            TESSEL_CHECK(pu >= 0 && pu < num_parts, "node {} is in part {}, outside [0, {})", u, pu, num_parts);
            ++l.nodes[pu];
            l.edges[pu] += ptr[u + 1] - ptr[u];
            for (int64_t k = ptr[u]; k < ptr[u + 1]; ++k) {
              const auto v = static_cast<int64_t>(idx[k]);
              if (v == u) {
                ++l.loops;
              } else if (part[v] != pu) {
                ++l.cut;
              }
            }
          }
        });
      },
      data.graph);
  int64_t loops = 0;
  acc.combine_each([&](const Local& l) {
    for (int32_t k = 0; k < num_parts; ++k) {
      s.parts[k].nodes += l.nodes[k];
      s.parts[k].edges += l.edges[k];
    }
    s.cut_entries += l.cut;
    loops += l.loops;
  });
  for (int64_t u : data.train.Host()) ++s.parts[part[u]].train;
  for (int64_t u : data.val.Host()) ++s.parts[part[u]].val;
  for (int64_t u : data.test.Host()) ++s.parts[part[u]].test;
  FinishStats(&s, loops);
  SetHalo(&s, std::vector<int64_t>(static_cast<size_t>(num_parts), 0));
  return s;
}

void FinishStats(PartitionStats* stats, int64_t self_loops) {
  PartitionStats& s = *stats;
  s.edge_cut = s.symmetric ? s.cut_entries / 2 : s.cut_entries;
  const int64_t non_loops = s.num_entries - self_loops;
  s.cut_fraction = non_loops > 0 ? static_cast<double>(s.cut_entries) / static_cast<double>(non_loops) : 0.0;
  s.imbalance_nodes = Imbalance(s.parts, &PartCounts::nodes);
  s.imbalance_edges = Imbalance(s.parts, &PartCounts::edges);
  s.imbalance_train = Imbalance(s.parts, &PartCounts::train);
}

void SetHalo(PartitionStats* stats, std::span<const int64_t> halo_per_part) {
  TESSEL_CHECK(halo_per_part.size() == stats->parts.size(), "partition stats: {} halo sizes for {} parts",
               halo_per_part.size(), stats->parts.size());
  stats->total_halo = 0;
  for (size_t k = 0; k < halo_per_part.size(); ++k) {
    stats->parts[k].halo = halo_per_part[k];
    stats->total_halo += halo_per_part[k];
  }
  stats->halo_replication = stats->num_nodes > 0 ? static_cast<double>(stats->num_nodes + stats->total_halo) /
                                                       static_cast<double>(stats->num_nodes)
                                                 : 1.0;
}

nlohmann::ordered_json StatsToJson(const PartitionStats& s) {
  nlohmann::ordered_json j;
  j["edge_cut"] = s.edge_cut;
  j["cut_entries"] = s.cut_entries;
  j["cut_fraction"] = s.cut_fraction;
  j["halo_replication"] = s.halo_replication;
  j["total_halo"] = s.total_halo;
  nlohmann::ordered_json imb;
  imb["nodes"] = s.imbalance_nodes;
  imb["edges"] = s.imbalance_edges;
  int64_t train = 0;
  for (const PartCounts& p : s.parts) train += p.train;
  if (train > 0) imb["train"] = s.imbalance_train;
  j["imbalance"] = imb;
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  for (size_t k = 0; k < s.parts.size(); ++k) {
    const PartCounts& p = s.parts[k];
    parts.push_back({{"part", k},
                     {"nodes", p.nodes},
                     {"edges", p.edges},
                     {"halo", p.halo},
                     {"train", p.train},
                     {"val", p.val},
                     {"test", p.test}});
  }
  j["parts"] = parts;
  return j;
}

}  // namespace tessel::partition
