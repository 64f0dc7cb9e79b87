// Readers for the raw input formats of `tessel convert`. Every reader takes plain, .gz or .bz2 files, reports
// bad input as "file:line: what is wrong" (tessel::Error) and returns a validated in-memory dataset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "datasets/graph_builder.h"

namespace tessel::datasets {

namespace fs = std::filesystem;

// ---- Edge lists: SNAP text ("u v [w]" per line, '#'/'%' comments, any whitespace) or CSV with a header.
struct EdgeListOptions {
  char delimiter = 0;          // 0: auto (',' if the first content line has a comma, else whitespace)
  std::optional<bool> header;  // unset: auto (CSV: the first line is a header when its first field is not a number)
  bool one_based = false;      // ids in the file start at 1
  bool weighted = false;       // a third column holds an edge weight
  int64_t num_nodes = -1;      // -1: from a "# nodes N" comment if present, else the largest id + 1
};
EdgeList ReadEdgeList(const fs::path& path, const EdgeListOptions& options = {});

// ---- METIS .graph: "n m [fmt [ncon]]" then one line of 1-based neighbours per vertex, optional vertex
// sizes/weights and edge weights as fmt says. Checks the counts against the header and the symmetry.
struct MetisGraph {
  CsrGraph64 graph;                     // rows sorted, edge weights when fmt has them
  int ncon = 0;                         // vertex weights per vertex (0 when none)
  std::vector<int64_t> vertex_weights;  // num_nodes * ncon
  std::vector<int64_t> vertex_sizes;    // num_nodes, or empty
};
MetisGraph ReadMetisGraph(const fs::path& path);

// ---- LINQS .content/.cites (Cora, Citeseer): "<paper id> <binary features...> <class name>" and
// "<cited> <citing>". Nodes in .content order; classes numbered by sorted class name; features sparse.
NodeDataset ReadLinqs(const fs::path& content, const fs::path& cites);

// ---- Node table (../shared/data/graphs/cora/README.md "Converted format"): edges, sparse features as
// "N F NNZ" + "node feature value" lines, one label per line (-1 = none), split lists of node ids.
// Any path may be empty (absent); edges may be any edge list ReadEdgeList accepts.
struct NodeTablePaths {
  fs::path edges;
  fs::path features;
  fs::path labels;
  fs::path train;
  fs::path val;
  fs::path test;
};
// Fills the paths that exist for PREFIX.{edges.txt,features.txt,labels.txt,train.txt,val.txt,test.txt}
// (each also as .gz or .bz2); edges must exist.
NodeTablePaths NodeTableFromPrefix(const fs::path& prefix);
NodeDataset ReadNodeTable(const NodeTablePaths& paths);

// ---- OGB node-property folder (raw CSV): raw/edge.csv(.gz), raw/node-feat.csv(.gz), raw/node-label.csv(.gz),
// raw/num-node-list.csv(.gz) when present, split/<split_name>/{train,valid,test}.csv(.gz). `dir` may be the
// dataset folder or its raw/ folder; split_name empty = the only folder under split/.
NodeDataset ReadOgbNodeFolder(const fs::path& dir, const std::string& split_name = "");

// ---- LIBSVM sparse text: "<label> <index>:<value> ..." with 1-based increasing indices; '#' starts a comment.
// num_features < 0: the largest index seen; otherwise indices above it are errors. Blank lines are skipped.
SparseRowDataset ReadLibsvm(const fs::path& path, int64_t num_features = -1);

// ---- IDX (MNIST, Fashion-MNIST): an unsigned-byte image file (3 dimensions: N x rows x cols) and its label file
// (1 dimension: N), plain, .gz or .bz2. Row r is image r flattened row-major, each pixel / scale, zero pixels left
// out; the label is the byte. Header, sizes and the image/label counts are checked with the file named.
SparseRowDataset ReadIdx(const fs::path& images, const fs::path& labels, double scale = 255);

// Relabels a dataset as a binary task: +1 for rows whose label is in `positive`, -1 for the rest, or, when
// `negative` is given, -1 for rows in `negative` and the others dropped. Throws when either side would be empty.
void MakeBinaryTask(SparseRowDataset& data, const std::vector<double>& positive,
                    const std::vector<double>& negative = {});

}  // namespace tessel::datasets
