// ReadNodeTable and NodeTableFromPrefix: a node dataset as plain text files (edges, sparse "node feature value"
// features, one label per line, split lists of node ids), the "Converted format" of the shared Cora README.
#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "core/memory_budget.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {

// "cora.edges.txt.gz" -> "cora"; "facebook_edges.csv" -> "facebook_edges".
std::string DatasetName(const fs::path& edges) {
  std::string name = edges.filename().string();
  for (std::string_view ext : {".gz", ".bz2", ".txt", ".csv", ".edges"}) {
    if (name.size() > ext.size() && name.ends_with(ext)) name.resize(name.size() - ext.size());
  }
  return name;
}

// Sparse features: '#' lines, "N F NNZ", then NNZ lines "node feature value" sorted by node then feature.
Features ReadSparseFeatures(const fs::path& path) {
  TextStream file = TextStream::Open(path);
  LineCursor cur(file);
  std::string_view line;
  if (!cur.NextContent(&line, "#")) {
    throw Error::InFile(file.name(), "no 'num_nodes num_features nnz' header line (the file has only comments)");
  }
  const int64_t header_line = cur.line_number();
  int64_t head[3];
  {
    Fields fields(line);
    std::string_view tok;
    const char* names[3] = {"node count", "feature count", "entry count"};
    for (int k = 0; k < 3; ++k) {
      if (!fields.Next(&tok)) cur.Fail("expected the header 'num_nodes num_features nnz', found {} field(s)", k);
      head[k] = cur.ParseInt(tok, names[k]);
      if (head[k] < 0) cur.Fail("{} {} is negative", names[k], head[k]);
    }
    if (fields.Next(&tok)) cur.Fail("expected the header 'num_nodes num_features nnz', found more than 3 fields");
  }
  const int64_t n = head[0];
  const int64_t dim = head[1];
  const int64_t nnz = head[2];
  if (dim > kMaxFeatureDim)
    cur.Fail("feature count {} does not fit 32-bit column ids (at most {})", dim, kMaxFeatureDim);
  // Rows may be empty, so the file's size does not bound N: the row index is checked against the memory budget
  // before it is sized from the header.
  if (n >= std::numeric_limits<int64_t>::max() / 8) cur.Fail("node count {} is beyond any machine's memory", n);
  memory::CheckArray(n + 1, static_cast<int64_t>(sizeof(int64_t)), fmt::format("the feature row index of {} nodes", n),
                     fmt::format("check the node count in the header of {}", file.name()));

  std::vector<int64_t> indptr(static_cast<size_t>(n) + 1, 0);
  std::vector<int32_t> columns;
  std::vector<float> values;
  // Each entry line takes at least 6 bytes ("0 0 1\n"); do not trust a huge header with the reservation.
  const auto reserve = static_cast<size_t>(std::min<int64_t>(nnz, file.EstimatedSize() / 6 + 1));
  columns.reserve(reserve);
  values.reserve(reserve);
  int64_t prev_node = -1;
  int64_t prev_feature = -1;
  int64_t prev_line = 0;
  int64_t count = 0;
  while (cur.NextContent(&line, "#")) {
    Fields fields(line);
    std::string_view tok[3];
    std::string_view extra;
    if (!fields.Next(&tok[0]) || !fields.Next(&tok[1]) || !fields.Next(&tok[2]) || fields.Next(&extra)) {
      cur.Fail("expected 'node feature value' (three fields)");
    }
    if (count == nnz) cur.Fail("more entries than the {} that the header on line {} declares", nnz, header_line);
    const int64_t node = cur.ParseInt(tok[0], "node id");
    const int64_t feature = cur.ParseInt(tok[1], "feature id");
    const float value = cur.ParseFloat(tok[2], "feature value");
    if (node < 0 || node >= n) cur.Fail("node id {} is outside [0, {}) (the header on line {})", node, n, header_line);
    if (feature < 0 || feature >= dim) {
      cur.Fail("feature id {} is outside [0, {}) (the header on line {})", feature, dim, header_line);
    }
    if (node == prev_node && feature == prev_feature) {
      cur.Fail("duplicate entry for node {} feature {} (also on line {})", node, feature, prev_line);
    }
    if (node < prev_node || (node == prev_node && feature < prev_feature)) {
      cur.Fail(
          "entries must be sorted by node, then feature: node {} feature {} comes after node {} feature {} "
          "on line {} (sort the file, e.g. `sort -n -k1,1 -k2,2`)",
          node, feature, prev_node, prev_feature, prev_line);
    }
    prev_node = node;
    prev_feature = feature;
    prev_line = cur.line_number();
    ++indptr[node + 1];
    columns.push_back(static_cast<int32_t>(feature));
    values.push_back(value);
    ++count;
  }
  if (count != nnz) {
    throw Error::AtLine(file.name(), header_line,
                        fmt::format("the header declares {} entries but the file has {}", nnz, count));
  }
  for (int64_t i = 0; i < n; ++i) indptr[i + 1] += indptr[i];

  Features f;
  f.num_rows = n;
  f.dim = dim;
  f.sparse = true;
  f.indptr = Buffer<int64_t>(std::move(indptr));
  f.indices = Buffer<int32_t>(std::move(columns));
  f.values = Buffer<float>(std::move(values));
  return f;
}

// One class id per line, -1 = no label; '#' lines are comments; blank lines only at the end.
std::vector<int32_t> ReadLabels(const fs::path& path, int32_t* num_classes) {
  TextStream file = TextStream::Open(path);
  LineCursor cur(file);
  std::vector<int32_t> labels;
  labels.reserve(static_cast<size_t>(file.EstimatedSize() / 2));
  int64_t max_label = -1;
  int64_t max_label_line = 0;
  int64_t blank_line = 0;  // the first blank line: harmless at the end, an error before anything else
  std::string_view line;
  while (cur.Next(&line)) {
    Fields fields(line);
    std::string_view tok;
    std::string_view extra;
    if (!fields.Next(&tok)) {
      if (blank_line == 0) blank_line = cur.line_number();
      continue;
    }
    if (blank_line > 0) {
      throw Error::AtLine(file.name(), blank_line,
                          "blank line; every line holds the label of one node (use -1 for a node without a label)");
    }
    if (tok.front() == '#') continue;
    if (fields.Next(&extra))
      cur.Fail("expected one class id per line, found '{}' after '{}'", Excerpt(extra), Excerpt(tok));
    const int64_t label = cur.ParseInt(tok, "label");
    if (label < kNoLabel) cur.Fail("label {} is negative; class ids are 0, 1, ... and -1 means no label", label);
    if (label >= std::numeric_limits<int32_t>::max()) cur.Fail("label {} does not fit a 32-bit class id", label);
    if (label > max_label) {
      max_label = label;
      max_label_line = cur.line_number();
    }
    labels.push_back(static_cast<int32_t>(label));
  }
  if (labels.empty()) throw Error::InFile(file.name(), "no labels (expected one class id per line)");
  if (max_label < 0) throw Error::InFile(file.name(), "every label is -1 (no node has a class)");
  // Class ids are dense (0, 1, ...): there cannot be more classes than nodes (nor than 65536 in a small file), and
  // per-class tables are sized by the largest id, so one stray huge id would cost gigabytes.
  const int64_t most = std::max<int64_t>(static_cast<int64_t>(labels.size()), kMaxClassesAlways);
  if (max_label >= most) {
    throw Error::AtLine(file.name(), max_label_line,
                        fmt::format("label {} is beyond the {} classes {} nodes can have; class ids must be 0, 1, "
                                    "... (renumber the classes)",
                                    max_label, most, labels.size()));
  }
  *num_classes = static_cast<int32_t>(max_label + 1);
  return labels;
}

struct SplitList {
  std::string file;
  std::vector<int64_t> ids;    // file order
  std::vector<int64_t> lines;  // the line of each id
};

// One node id per line; '#' lines and blank lines are skipped.
SplitList ReadSplitList(const fs::path& path, int64_t num_nodes) {
  TextStream file = TextStream::Open(path);
  LineCursor cur(file);
  SplitList list;
  list.file = file.name();
  std::string_view line;
  while (cur.NextContent(&line, "#")) {
    Fields fields(line);
    std::string_view tok;
    std::string_view extra;
    fields.Next(&tok);
    if (fields.Next(&extra))
      cur.Fail("expected one node id per line, found '{}' after '{}'", Excerpt(extra), Excerpt(tok));
    const int64_t id = cur.ParseInt(tok, "node id");
    if (id < 0 || id >= num_nodes) cur.Fail("node id {} is outside [0, {}) (the dataset's nodes)", id, num_nodes);
    list.ids.push_back(id);
    list.lines.push_back(cur.line_number());
  }
  return list;
}

// Checks the lists for repeated and shared ids (naming both lines) and stores them sorted in `out`.
void CheckAndSortSplits(const std::vector<SplitList*>& lists, int64_t num_nodes,
                        const std::vector<Buffer<int64_t>*>& out) {
  // owner[v] = 1 + index of the list holding v; 0 = none yet.
  std::vector<uint8_t> owner(static_cast<size_t>(num_nodes), 0);
  for (size_t k = 0; k < lists.size(); ++k) {
    const SplitList& l = *lists[k];
    for (size_t i = 0; i < l.ids.size(); ++i) {
      const int64_t v = l.ids[i];
      if (owner[v] == 0) {
        owner[v] = static_cast<uint8_t>(k + 1);
        continue;
      }
      // Error path: find where v was seen before.
      const SplitList& other = *lists[owner[v] - 1];
      const auto j = static_cast<size_t>(std::find(other.ids.begin(), other.ids.end(), v) - other.ids.begin());
      if (&other == &l) {
        throw Error::AtLine(l.file, l.lines[i],
                            fmt::format("node id {} appears twice (also on line {})", v, other.lines[j]));
      }
      throw Error::AtLine(l.file, l.lines[i],
                          fmt::format("node id {} is also in {}:{} (train, validation and test lists must not "
                                      "overlap)",
                                      v, other.file, other.lines[j]));
    }
  }
  for (size_t k = 0; k < lists.size(); ++k) {
    std::vector<int64_t> ids = std::move(lists[k]->ids);
    std::sort(ids.begin(), ids.end());
    *out[k] = Buffer<int64_t>(std::move(ids));
  }
}

int64_t MaxId(const std::vector<int64_t>& ids) {
  int64_t m = -1;
  for (int64_t v : ids) m = std::max(m, v);
  return m;
}

}  // namespace

NodeTablePaths NodeTableFromPrefix(const fs::path& prefix) {
  auto find = [&](std::string_view suffix) -> fs::path {
    std::error_code ec;
    for (std::string_view ext : {"", ".gz", ".bz2"}) {
      fs::path p = prefix;
      p += suffix;
      p += ext;
      // Anything at the name counts (a folder, a pipe, a device): its reader refuses it, never silently skips it.
      if (fs::exists(fs::symlink_status(p, ec))) return p;
    }
    return {};
  };
  NodeTablePaths paths;
  fs::path edges = prefix;
  edges += ".edges.txt";
  paths.edges = FindWithCompression(edges);  // throws, naming the three names it tried
  paths.features = find(".features.txt");
  paths.labels = find(".labels.txt");
  paths.train = find(".train.txt");
  paths.val = find(".val.txt");
  paths.test = find(".test.txt");
  return paths;
}

NodeDataset ReadNodeTable(const NodeTablePaths& paths) {
  TESSEL_CHECK(!paths.edges.empty(), "node table: no edges file given (the edges file is required)");
  EdgeList edges = ReadEdgeList(paths.edges);
  const std::string edges_name = paths.edges.string();
  // Node count: the largest of the edge list's (its "# nodes N" comment or largest id + 1), the feature
  // header's N and the number of label lines; each of the latter two must then equal it.
  int64_t n = std::max({edges.num_nodes, MaxId(edges.src) + 1, MaxId(edges.dst) + 1});

  NodeDataset ds;
  ds.name = DatasetName(paths.edges);
  if (!paths.features.empty()) {
    ds.features = ReadSparseFeatures(paths.features);
    n = std::max(n, ds.features.num_rows);
  }
  std::vector<int32_t> labels;
  if (!paths.labels.empty()) {
    labels = ReadLabels(paths.labels, &ds.num_classes);
    n = std::max(n, static_cast<int64_t>(labels.size()));
  }
  if (!paths.features.empty() && ds.features.num_rows != n) {
    throw Error::InFile(
        paths.features.string(),
        fmt::format("the header declares {} nodes but the dataset has {} (from {}{}); give every "
                    "node a row (rows may be empty)",
                    ds.features.num_rows, n, edges_name, paths.labels.empty() ? "" : " and " + paths.labels.string()));
  }
  if (!paths.labels.empty() && static_cast<int64_t>(labels.size()) != n) {
    throw Error::InFile(
        paths.labels.string(),
        fmt::format("{} labels but the dataset has {} nodes (from {}{}); write one line per node, "
                    "-1 for a node without a label",
                    labels.size(), n, edges_name, paths.features.empty() ? "" : " and " + paths.features.string()));
  }
  ds.labels = Buffer<int32_t>(std::move(labels));

  SplitList lists[3];
  std::vector<SplitList*> present;
  std::vector<Buffer<int64_t>*> outs;
  const fs::path* split_paths[3] = {&paths.train, &paths.val, &paths.test};
  Buffer<int64_t>* targets[3] = {&ds.train, &ds.val, &ds.test};
  for (int k = 0; k < 3; ++k) {
    if (split_paths[k]->empty()) continue;
    lists[k] = ReadSplitList(*split_paths[k], n);
    present.push_back(&lists[k]);
    outs.push_back(targets[k]);
  }
  if (!present.empty()) CheckAndSortSplits(present, n, outs);

  edges.num_nodes = n;
  ds.graph = GraphBuilder().BuildAny(edges);  // symmetrised, deduplicated, no self-loops
  ds.Validate();
  return ds;
}

}  // namespace tessel::datasets
