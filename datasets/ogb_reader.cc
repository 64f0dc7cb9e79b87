// ReadOgbNodeFolder: an Open Graph Benchmark node-property dataset in its raw CSV layout (ogbn-arxiv,
// ogbn-products): raw/{edge,node-feat,node-label,num-node-list}.csv(.gz) and split/<name>/{train,valid,test}.csv(.gz).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/ranges.h>

#include "core/memory_budget.h"
#include "core/parallel.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {

// Returns base(.gz|.bz2) if one exists, else an empty path.
fs::path FindOptional(const fs::path& base) {
  std::error_code ec;
  for (std::string_view ext : {"", ".gz", ".bz2"}) {
    fs::path p = base;
    p += ext;
    // Anything at the name counts (a folder, a pipe, a device): its reader refuses it, never silently skips it.
    if (fs::exists(fs::symlink_status(p, ec))) return p;
  }
  return {};
}

// Parses "v0,v1,...,v{dim-1}" into out; false (with *error) when malformed.
bool ParseDenseRow(std::string_view line, std::span<float> out, std::string* error) {
  Fields fields(line, ',');
  std::string_view tok;
  size_t j = 0;
  while (fields.Next(&tok)) {
    if (j == out.size()) {
      *error = fmt::format("more than {} values (every row needs as many as the first one)", out.size());
      return false;
    }
    float v = 0;
    if (const char* why = ParseFinite(tok, &v)) {
      *error = fmt::format("value {} '{}' {}", j + 1, Excerpt(tok), why);
      return false;
    }
    out[j++] = v;
  }
  if (j != out.size()) {
    *error = fmt::format("{} values, but the first row has {} (every row needs the same number)", j, out.size());
    return false;
  }
  return true;
}

// Dense comma-separated float rows, one per line (node-feat.csv), read piece by piece from the stream: the rows of
// a piece are parsed in parallel and the first malformed one in file order is reported.
Features ReadDenseCsv(const fs::path& path) {
  TextStream file = TextStream::Open(path);
  std::vector<float> values;
  int64_t dim = 0;
  int64_t rows = 0;
  int64_t line_base = 0;   // lines before the piece
  int64_t blank_line = 0;  // the first of the blank lines read last: harmless at the end of the file only
  std::vector<std::string_view> lines;
  std::string_view piece;
  while (file.Next(&piece)) {
    lines.clear();
    LineCursor cursor(file.name(), piece);
    std::string_view line;
    while (cursor.Next(&line)) lines.push_back(line);
    size_t content = lines.size();
    while (content > 0 && Fields(lines[content - 1]).AtEnd()) --content;
    if (content == 0) {
      if (blank_line == 0 && !lines.empty()) blank_line = line_base + 1;
      line_base += static_cast<int64_t>(lines.size());
      continue;
    }
    if (rows == 0 && blank_line == 0) {
      dim = static_cast<int64_t>(std::count(lines[0].begin(), lines[0].end(), ',')) + 1;
      if (dim > kMaxFeatureDim) {
        throw Error::AtLine(
            file.name(), line_base + 1,
            fmt::format("{} values in a row; node features have at most {} columns (int32 ids)", dim, kMaxFeatureDim));
      }
      // Rows expected in the whole file, from this piece's bytes per line: one reservation instead of regrowths.
      const double per_line = static_cast<double>(piece.size()) / static_cast<double>(lines.size());
      const auto expected = static_cast<int64_t>(static_cast<double>(file.EstimatedSize()) / per_line * 1.02) + 1;
      const int64_t reserve = std::min(expected, file.MaxSize() / (2 * dim) + 1) * dim;
      try {  // an estimate: when it does not fit the budget, the exact sizes below are checked as the rows come
        memory::CheckArray(reserve, static_cast<int64_t>(sizeof(float)), "the node features of " + file.name());
        values.reserve(static_cast<size_t>(reserve));
      } catch (const Error&) {
      }
    }
    std::vector<float> scratch(static_cast<size_t>(dim));
    if (blank_line > 0) {
      // A blank line followed by more rows would shift every later node.
      std::string error;
      ParseDenseRow("", scratch, &error);
      throw Error::AtLine(file.name(), blank_line, error);
    }
    const auto piece_rows = static_cast<int64_t>(content);
    memory::CheckArray((rows + piece_rows) * dim, static_cast<int64_t>(sizeof(float)),
                       "the node features of " + file.name(), "give fewer or shorter feature rows");
    values.resize(static_cast<size_t>((rows + piece_rows) * dim));
    const std::span<float> out(values.data() + rows * dim, static_cast<size_t>(piece_rows * dim));
    std::atomic<int64_t> first_bad{std::numeric_limits<int64_t>::max()};
    parallel_for<int64_t>(0, piece_rows, 256, [&](int64_t r) {
      std::string unused;
      if (!ParseDenseRow(lines[r], out.subspan(static_cast<size_t>(r * dim), static_cast<size_t>(dim)), &unused)) {
        int64_t cur = first_bad.load();
        while (r < cur && !first_bad.compare_exchange_weak(cur, r)) {
        }
      }
    });
    if (const int64_t bad = first_bad.load(); bad != std::numeric_limits<int64_t>::max()) {
      std::string error;
      ParseDenseRow(lines[bad], scratch, &error);
      throw Error::AtLine(file.name(), line_base + bad + 1, error);
    }
    rows += piece_rows;
    if (content < lines.size()) blank_line = line_base + static_cast<int64_t>(content) + 1;
    line_base += static_cast<int64_t>(lines.size());
  }
  if (rows == 0) throw Error::InFile(file.name(), "no rows (expected one comma-separated feature row per node)");

  Features f;
  f.num_rows = rows;
  f.dim = dim;
  f.dense = Buffer<float>(std::move(values));
  return f;
}

// num-node-list.csv: one line with the node count (OGB writes one line per graph; node-property datasets have one).
int64_t ReadNodeCount(const fs::path& path) {
  TextStream file = TextStream::Open(path);
  LineCursor cur(file);
  std::string_view line;
  if (!cur.NextContent(&line, "#")) throw Error::InFile(file.name(), "empty; expected the number of nodes");
  Fields fields(line, ',');
  std::string_view tok;
  fields.Next(&tok);
  const int64_t n = cur.ParseInt(tok, "node count");
  if (n < 0) cur.Fail("node count {} is negative", n);
  if (!fields.AtEnd() || cur.NextContent(&line, "#")) {
    cur.Fail("more than one node count: this reader takes a node-property dataset with one graph");
  }
  return n;
}

// The graph with isolated nodes appended so it has n nodes.
template <typename IdT>
AnyGraph WithNodes(const CsrGraph<IdT>& g, int64_t n) {
  std::vector<int64_t> indptr = g.indptr().ToVector();
  indptr.resize(static_cast<size_t>(n) + 1, indptr.back());
  if constexpr (sizeof(IdT) == 4) {
    if (n - 1 > std::numeric_limits<int32_t>::max()) {
      std::vector<int64_t> ids(g.indices().Host().begin(), g.indices().Host().end());
      return CsrGraph64(Buffer<int64_t>(std::move(indptr)), Buffer<int64_t>(std::move(ids)), g.weights().Clone());
    }
  }
  return CsrGraph<IdT>(Buffer<int64_t>(std::move(indptr)), g.indices().Clone(), g.weights().Clone());
}

// Picks split/<name>: the named one, or the only one when name is empty. Empty path when there is no split/.
fs::path SplitFolder(const fs::path& root, const std::string& name) {
  const fs::path split = root / "split";
  std::error_code ec;
  if (!fs::is_directory(split, ec)) {
    TESSEL_CHECK(name.empty(), "{}: no split/ folder, so there is no split named '{}'", root.string(), name);
    return {};
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(split)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  const std::string listed = names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
  if (name.empty()) {
    TESSEL_CHECK(names.size() == 1, "{}: {} split folders ({}); name the one to use", split.string(), names.size(),
                 listed);
    return split / names[0];
  }
  TESSEL_CHECK(std::find(names.begin(), names.end(), name) != names.end(), "{}: no split named '{}' (found: {})",
               split.string(), name, listed);
  return split / name;
}

// split/<name>/{train,valid,test}.csv(.gz): one node id per line, checked against the final node count n. That
// count can exceed what the edges and labels show (num-node-list, feature rows), so ReadNodeTable cannot check them.
void ReadSplits(const fs::path& folder, int64_t n, NodeDataset* ds) {
  struct List {
    std::string file;
    std::vector<int64_t> ids;
    std::vector<int64_t> lines;
  };
  List lists[3];
  std::vector<int8_t> owner(static_cast<size_t>(n), -1);  // the list holding each node so far
  // Find all three before reading any, so a missing one is reported first.
  const fs::path paths[3] = {FindWithCompression(folder / "train.csv"), FindWithCompression(folder / "valid.csv"),
                             FindWithCompression(folder / "test.csv")};
  for (int k = 0; k < 3; ++k) {
    TextStream file = TextStream::Open(paths[k]);
    LineCursor cur(file);
    List& l = lists[k];
    l.file = file.name();
    std::string_view line;
    while (cur.NextContent(&line, "#")) {
      Fields fields(line, ',');
      std::string_view tok;
      fields.Next(&tok);
      if (!fields.AtEnd()) cur.Fail("expected one node id per line");
      const int64_t v = cur.ParseInt(tok, "node id");
      if (v < 0 || v >= n) cur.Fail("node id {} is outside [0, {}) (the dataset's nodes)", v, n);
      if (owner[v] >= 0) {
        const List& other = lists[owner[v]];
        const auto j = std::find(other.ids.begin(), other.ids.end(), v) - other.ids.begin();
        if (owner[v] == k) cur.Fail("node id {} appears twice (also on line {})", v, other.lines[j]);
        cur.Fail("node id {} is also in {}:{} (train, validation and test lists must not overlap)", v, other.file,
                 other.lines[j]);
      }
      owner[v] = static_cast<int8_t>(k);
      l.ids.push_back(v);
      l.lines.push_back(cur.line_number());
    }
  }
  Buffer<int64_t>* outs[3] = {&ds->train, &ds->val, &ds->test};
  for (int k = 0; k < 3; ++k) {
    std::sort(lists[k].ids.begin(), lists[k].ids.end());
    *outs[k] = Buffer<int64_t>(std::move(lists[k].ids));
  }
}

}  // namespace

NodeDataset ReadOgbNodeFolder(const fs::path& dir, const std::string& split_name) {
  std::error_code ec;
  fs::path root = dir.has_filename() ? dir : dir.parent_path();  // "ogbn-arxiv/" -> "ogbn-arxiv"
  if (!fs::is_directory(root / "raw", ec) && root.filename() == "raw") root = root.parent_path();  // given raw/
  const fs::path raw = root / "raw";
  TESSEL_CHECK(fs::is_directory(raw, ec), "{}: not an OGB node-property folder (expected raw/edge.csv under it)",
               dir.string());

  // Edges and labels share the node-table reader (one label per line, -1 = none, file:line errors).
  // OGB's arxiv graph is directed (citations); ReadNodeTable symmetrises it, as GCN practice and OGB's own GCN
  // examples (to_undirected / to_symmetric) do.
  NodeTablePaths table;
  table.edges = FindWithCompression(raw / "edge.csv");
  table.labels = FindOptional(raw / "node-label.csv");
  if (!table.labels.empty()) {
    TextStream labels = TextStream::Open(table.labels);
    LineCursor cur(labels);
    std::string_view line;
    if (cur.NextContent(&line, "#") && line.find(',') != std::string_view::npos) {
      cur.Fail("several label columns: multi-label datasets (ogbn-proteins) are not supported; one class per node");
    }
  }
  const fs::path split = SplitFolder(root, split_name);
  NodeDataset ds = ReadNodeTable(table);
  const fs::path full = fs::absolute(root).lexically_normal();  // names "." and "" too
  ds.name = (full.has_filename() ? full : full.parent_path()).filename().string();

  const int64_t table_nodes = ds.num_nodes();
  int64_t n = table_nodes;
  const fs::path count_path = FindOptional(raw / "num-node-list.csv");
  if (!count_path.empty()) {
    n = ReadNodeCount(count_path);
    TESSEL_CHECK(n >= table_nodes, "{}: {} nodes, but {}{} needs at least {}", count_path.string(), n,
                 table.edges.string(), table.labels.empty() ? "" : " or " + table.labels.string(), table_nodes);
  }
  if (const fs::path feat = FindOptional(raw / "node-feat.csv"); !feat.empty()) {
    ds.features = ReadDenseCsv(feat);
    if (count_path.empty()) n = std::max(n, ds.features.num_rows);
    TESSEL_CHECK(ds.features.num_rows == n, "{}: {} feature rows for {} nodes (one row per node)", feat.string(),
                 ds.features.num_rows, n);
  }
  TESSEL_CHECK(!ds.has_labels() || static_cast<int64_t>(ds.labels.size()) == n, "{}: {} labels for {} nodes",
               table.labels.string(), ds.labels.size(), n);
  if (n > table_nodes) {
    // The count in num-node-list.csv sizes the row index alone (isolated nodes take no bytes in the files): checked
    // against the memory budget before the allocation (found by tests/fuzz/fuzz_ogb.cc).
    memory::CheckArray(n, static_cast<int64_t>(sizeof(int64_t)), fmt::format("the row index of a {}-node graph", n),
                       fmt::format("check the node count in {}", count_path.string()));
    ds.graph = std::visit([&](const auto& g) { return WithNodes(g, n); }, ds.graph);
  }
  if (!split.empty()) ReadSplits(split, n, &ds);
  ds.Validate();
  return ds;
}

}  // namespace tessel::datasets
