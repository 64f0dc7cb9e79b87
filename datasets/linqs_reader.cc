// ReadLinqs: the LINQS citation-network text format (Cora, Citeseer): "<paper id> <F feature values> <class>"
// per paper in .content and "<cited id> <citing id>" per citation in .cites. Features are kept sparse (CSR).
#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "datasets/readers.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {

// "cora.content.gz" -> "cora".
std::string DatasetName(const fs::path& path) {
  fs::path p = path.filename();
  if (p.extension() == ".gz" || p.extension() == ".bz2") p = p.stem();
  return p.stem().string();
}

}  // namespace

NodeDataset ReadLinqs(const fs::path& content, const fs::path& cites) {
  // The paper ids and class names below are views into this text, so it is read whole (not streamed) and stays
  // alive until the end.
  const TextFile content_file = TextFile::Open(content);
  LineCursor cur(content_file);

  std::unordered_map<std::string_view, int64_t> node_of;  // paper id -> node id (file order)
  std::vector<int64_t> line_of_node;                      // for "appears twice" messages
  std::vector<std::string_view> class_of_node;
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> columns;
  std::vector<float> values;
  std::vector<std::string_view> tokens;
  int64_t dim = -1;
  int64_t first_line = 0;

  std::string_view line;
  // Blank lines are skipped; there are no comments (a paper id may be any token).
  while (cur.NextContent(&line, "")) {
    tokens.clear();
    Fields fields(line);
    std::string_view tok;
    while (fields.Next(&tok)) tokens.push_back(tok);
    if (tokens.size() < 2) {
      cur.Fail("expected '<paper id> <feature values...> <class>', found {} field(s)", tokens.size());
    }
    const auto f = static_cast<int64_t>(tokens.size()) - 2;
    if (dim < 0) {
      dim = f;
      first_line = cur.line_number();
      TESSEL_CHECK(dim <= INT32_MAX, "{}:{}: {} feature values do not fit 32-bit column ids", cur.name(),
                   cur.line_number(), dim);
    } else if (f != dim) {
      cur.Fail("{} feature values, but line {} has {} (every paper needs the same number of values)", f, first_line,
               dim);
    }
    const auto node = static_cast<int64_t>(line_of_node.size());
    const auto [it, inserted] = node_of.emplace(tokens.front(), node);
    if (!inserted) {
      cur.Fail("paper id '{}' appears twice (first on line {})", Excerpt(tokens.front()), line_of_node[it->second]);
    }
    line_of_node.push_back(cur.line_number());
    for (int64_t j = 0; j < f; ++j) {
      const std::string_view v = tokens[j + 1];
      if (v == "0") continue;  // the common case in bag-of-words rows
      const float x = v == "1" ? 1.0F : cur.ParseFloat(v, "feature value");
      if (x == 0.0F) continue;
      columns.push_back(static_cast<int32_t>(j));
      values.push_back(x);
    }
    indptr.push_back(static_cast<int64_t>(columns.size()));
    class_of_node.push_back(tokens.back());
  }
  TESSEL_CHECK(!line_of_node.empty(), "{}: no papers (expected '<paper id> <feature values...> <class>' lines)",
               content_file.name());
  const auto n = static_cast<int64_t>(line_of_node.size());

  // Classes numbered by sorted name.
  std::vector<std::string_view> classes = class_of_node;
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  TESSEL_CHECK(classes.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
               "{}: {} classes exceed 32-bit class ids", content_file.name(), classes.size());
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    labels[i] =
        static_cast<int32_t>(std::lower_bound(classes.begin(), classes.end(), class_of_node[i]) - classes.begin());
  }

  TextStream cites_file = TextStream::Open(cites);
  LineCursor ccur(cites_file);
  EdgeList edges;
  edges.num_nodes = n;
  while (ccur.NextContent(&line, "")) {
    Fields fields(line);
    std::string_view ends[2];
    std::string_view extra;
    if (!fields.Next(&ends[0]) || !fields.Next(&ends[1]) || fields.Next(&extra)) {
      ccur.Fail("expected '<cited paper id> <citing paper id>' (two fields)");
    }
    int64_t ids[2];
    for (int k = 0; k < 2; ++k) {
      const auto it = node_of.find(ends[k]);
      if (it == node_of.end()) {
        ccur.Fail("paper id '{}' is not in {} (every cited and citing paper needs a .content line)", Excerpt(ends[k]),
                  content_file.name());
      }
      ids[k] = it->second;
    }
    // "cited citing" means citing -> cited; the direction is dropped when the builder symmetrises.
    edges.Add(ids[1], ids[0]);
  }

  NodeDataset ds;
  ds.name = DatasetName(content);
  ds.graph = GraphBuilder().BuildAny(edges);  // symmetrised, deduplicated, no self-loops
  ds.features.num_rows = n;
  ds.features.dim = dim;
  ds.features.sparse = true;
  ds.features.indptr = Buffer<int64_t>(std::move(indptr));
  ds.features.indices = Buffer<int32_t>(std::move(columns));
  ds.features.values = Buffer<float>(std::move(values));
  ds.labels = Buffer<int32_t>(std::move(labels));
  ds.num_classes = static_cast<int32_t>(classes.size());
  ds.Validate();
  return ds;
}

}  // namespace tessel::datasets
