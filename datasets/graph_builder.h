// GraphBuilder: the one place where raw edges become a clean CsrGraph: drop self-loops, symmetrise,
// sort rows and remove duplicates (GAP Benchmark Suite src/builder.h). Parallel counting sort on oneTBB.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/csr_graph.h"

namespace tessel::datasets {

// Edges as read from a file: parallel arrays, ids already 0-based.
struct EdgeList {
  std::vector<int64_t> src;
  std::vector<int64_t> dst;
  std::vector<float> weights;  // empty, or one per edge
  int64_t num_nodes = -1;      // -1: one more than the largest id seen

  size_t size() const { return src.size(); }
  void Add(int64_t u, int64_t v) {
    src.push_back(u);
    dst.push_back(v);
  }
};

struct BuildOptions {
  bool symmetrize = true;         // store (v, u) for every (u, v)
  bool remove_self_loops = true;  // drop (u, u)
  bool dedupe = true;             // keep one entry per (u, v); of duplicates the largest weight is kept
};

struct BuildStats {
  int64_t input_edges = 0;
  int64_t self_loops_removed = 0;
  int64_t duplicates_removed = 0;  // adjacency entries merged away
  int64_t entries = 0;             // adjacency entries in the result
};

class GraphBuilder {
 public:
  explicit GraphBuilder(BuildOptions options = {}) : options_(options) {}

  // Throws tessel::Error for negative ids, ids >= num_nodes (when given) or mismatched array lengths.
  template <typename IdT>
  CsrGraph<IdT> Build(const EdgeList& edges, BuildStats* stats = nullptr) const;
  // int32 ids while the node count fits, int64 beyond.
  AnyGraph BuildAny(const EdgeList& edges, BuildStats* stats = nullptr) const;

 private:
  BuildOptions options_;
};

}  // namespace tessel::datasets
