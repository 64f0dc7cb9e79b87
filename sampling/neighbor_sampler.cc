// NeighborSampler: per-layer row-wise picks (parallel over destination rows, one seeded stream per row), then
// a serial relabelling that lists destination nodes first and new source nodes in order of appearance.
#include "sampling/neighbor_sampler.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel::sampling {

void SamplerOptions::Validate() const {
  TESSEL_CHECK(!fanouts.empty(), "--fanouts: give one fanout per layer (for example 10,25)");
  for (int f : fanouts) {
    TESSEL_CHECK(f > 0 || f == -1, "--fanouts: {} is not a fanout (use a positive count, or -1 for all)", f);
  }
}

NeighborSampler::NeighborSampler(const datasets::AnyGraph& graph, SamplerOptions options,
                                 std::shared_ptr<const PickPolicy> policy)
    : graph_(graph), options_(std::move(options)), policy_(std::move(policy)) {
  options_.Validate();
  if (!policy_) policy_ = std::make_shared<UniformPolicy>();
  const int64_t n = datasets::NumNodes(graph_);
  TESSEL_CHECK(n <= INT32_MAX, "sampling: {} nodes do not fit 32-bit block ids", n);
  norm_degree_.resize(static_cast<size_t>(n));
  local_id_.assign(static_cast<size_t>(n), -1);
  std::visit(
      [&](const auto& g) {
        parallel_for<int64_t>(0, n, 4096, [&](int64_t u) {
          int64_t d = 0;
          for (auto v : g.Neighbors(u)) d += static_cast<int64_t>(v) != u ? 1 : 0;
          norm_degree_[u] = static_cast<double>(d) + (options_.aggregation == Aggregation::kGcn ? 1.0 : 0.0);
        });
      },
      graph_);
}

std::vector<Block> NeighborSampler::Sample(std::span<const int64_t> seeds, const StreamKey& key) {
  const int layers = static_cast<int>(options_.fanouts.size());
  const int64_t n = datasets::NumNodes(graph_);
  for (int64_t s : seeds) TESSEL_CHECK(s >= 0 && s < n, "sampling: seed node {} outside [0, {})", s, n);
  std::vector<Block> blocks(static_cast<size_t>(layers));
  std::vector<int64_t> dst(seeds.begin(), seeds.end());
  for (int l = layers - 1; l >= 0; --l) {
    StreamKey k = key;
    k.purpose += static_cast<uint64_t>(l);
    blocks[static_cast<size_t>(l)] = std::visit(
        [&](const auto& g) { return SampleLayer(g, dst, options_.fanouts[static_cast<size_t>(l)], k); }, graph_);
    dst = blocks[static_cast<size_t>(l)].src_nodes;
  }
  return blocks;
}

template <typename IdT>
Block NeighborSampler::SampleLayer(const datasets::CsrGraph<IdT>& g, std::span<const int64_t> dst, int fanout,
                                   const StreamKey& key) {
  const auto m = static_cast<int64_t>(dst.size());
  const bool gcn = options_.aggregation == Aggregation::kGcn;
  auto indptr = g.indptr().Host();
  auto indices = g.indices().Host();
  // Picks gathered per fixed chunk of rows (one allocation per chunk), read back in row order.
  constexpr int64_t kChunk = 64;
  const int64_t chunks = (m + kChunk - 1) / kChunk;
  std::vector<std::vector<Pick>> picks(static_cast<size_t>(chunks));
  std::vector<std::vector<int64_t>> picked(static_cast<size_t>(chunks));  // the picks' node ids, same layout
  std::vector<std::vector<float>> weights(static_cast<size_t>(chunks));   // and their aggregation weights
  std::vector<int64_t> row_picks(static_cast<size_t>(m), 0);
  const uint64_t base = Rng(key)();
  parallel_for<int64_t>(0, chunks, 1, [&](int64_t c) {
    std::vector<double> scratch;
    std::vector<Pick>& out = picks[static_cast<size_t>(c)];
    out.reserve(static_cast<size_t>(kChunk * std::max(fanout, 1)));
    for (int64_t i = c * kChunk; i < std::min(m, (c + 1) * kChunk); ++i) {
      const int64_t u = dst[i];
      Rng rng(Mix64(base ^ Mix64(static_cast<uint64_t>(u))));
      const size_t before = out.size();
      PickRow(u, indptr[u], indptr[u + 1] - indptr[u], fanout, options_.replace, *policy_, rng, &scratch, &out);
      row_picks[i] = static_cast<int64_t>(out.size() - before);
    }
    // Resolve the neighbour ids here, in parallel: the serial relabelling below then reads one array in order
    // instead of a random row of `indices` per pick.
    // So are the aggregation weights, which do not depend on the relabelling either.
    std::vector<int64_t>& ids = picked[static_cast<size_t>(c)];
    std::vector<float>& w = weights[static_cast<size_t>(c)];
    ids.resize(out.size());
    w.resize(out.size());
    size_t q = 0;
    for (int64_t i = c * kChunk; i < std::min(m, (c + 1) * kChunk); ++i) {
      const int64_t u = dst[i];
      const int64_t start = indptr[u];
      const double du = norm_degree_[u];
      for (int64_t r = 0; r < row_picks[i]; ++r, ++q) {
        const int64_t v = indices[start + out[q].offset];
        ids[q] = v;
        const double a = gcn ? 1.0 / std::sqrt(du * norm_degree_[v]) : 1.0 / du;
        w[q] = static_cast<float>(a * out[q].factor);
      }
    }
  });
  Block block;
  block.num_dst = m;
  block.src_nodes.assign(dst.begin(), dst.end());
  for (int64_t i = 0; i < m; ++i) {
    TESSEL_CHECK(local_id_[dst[i]] < 0, "sampling: destination node {} is listed twice", dst[i]);
    local_id_[dst[i]] = static_cast<int32_t>(i);
  }
  std::vector<int64_t> out_p(static_cast<size_t>(m + 1), 0);
  std::vector<int32_t> out_i;
  std::vector<float> out_v;
  size_t total = 0;
  for (const auto& chunk : picks) total += chunk.size();
  out_i.reserve(total + (gcn ? static_cast<size_t>(m) : 0));
  block.src_nodes.reserve(static_cast<size_t>(m) + total);
  out_v.reserve(out_i.capacity());
  size_t pos = 0;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t u = dst[i];
    if (gcn) {
      out_i.push_back(static_cast<int32_t>(i));
      out_v.push_back(static_cast<float>(1.0 / norm_degree_[u]));
    }
    const std::vector<int64_t>& chunk_ids = picked[static_cast<size_t>(i / kChunk)];
    const std::vector<float>& chunk_w = weights[static_cast<size_t>(i / kChunk)];
    if (i % kChunk == 0) pos = 0;
    for (size_t q = pos; q < pos + static_cast<size_t>(row_picks[i]); ++q) {
      const int64_t v = chunk_ids[q];
      if (v == u) continue;  // self-loops are not neighbours (the GCN self term is exact above)
      int32_t& lid = local_id_[v];
      if (lid < 0) {
        lid = static_cast<int32_t>(block.src_nodes.size());
        block.src_nodes.push_back(v);
      }
      out_i.push_back(lid);
      out_v.push_back(chunk_w[q]);
    }
    pos += static_cast<size_t>(row_picks[i]);
    out_p[i + 1] = static_cast<int64_t>(out_i.size());
  }
  for (int64_t v : block.src_nodes) local_id_[v] = -1;
  block.adj = kernels::SparseMatrix{m, block.num_src(), Buffer<int64_t>(std::move(out_p)),
                                    Buffer<int32_t>(std::move(out_i)), Buffer<float>(std::move(out_v))};
  return block;
}

}  // namespace tessel::sampling
