// The install check's consumer (tools/check_install.sh): builds a small graph through an installed tessel and prints
// one line the script compares. Headers are included as in the tessel tree: <prefix>/include/tessel is the root.
#include <cstdio>

#include "core/build_config.h"
#include "datasets/graph_builder.h"

int main() {
  tessel::datasets::EdgeList edges;
  edges.Add(0, 1);
  edges.Add(1, 2);
  edges.Add(2, 0);
  edges.Add(2, 3);
  edges.Add(3, 3);  // self-loop: dropped
  edges.Add(1, 0);  // the reverse of (0, 1): merged away after symmetrising
  tessel::datasets::BuildStats stats;
  const auto graph = tessel::datasets::GraphBuilder().Build<int32_t>(edges, &stats);
  graph.Validate();
  std::printf("tessel %s nodes=%lld entries=%lld degree2=%lld self_loops_removed=%lld duplicates_removed=%lld\n",
              TESSEL_VERSION, static_cast<long long>(graph.num_nodes()), static_cast<long long>(graph.num_entries()),
              static_cast<long long>(graph.Degree(2)), static_cast<long long>(stats.self_loops_removed),
              static_cast<long long>(stats.duplicates_removed));
  return 0;
}
