// ReadMetisGraph: the METIS .graph format (METIS 5 manual, section 4.1.1) into a CsrGraph64 with sorted rows.
// Checks what gpmetis checks (counts, id bounds, weight signs) plus symmetry, self-loops and duplicates.
//
// The vertex lines already are the CSR rows, so the graph is built directly (no GraphBuilder pass): each row is
// sorted, and a duplicate or self-loop is reported with its line rather than silently cleaned, because METIS
// rejects such files or, worse, partitions them wrongly.
#include <algorithm>
#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {

// Edge weights are stored as float32; integers up to 2^24 are exact there.
constexpr int64_t kMaxExactWeight = int64_t{1} << 24;

bool IsCommentOrBlank(std::string_view line, bool* blank) {
  size_t i = 0;
  while (i < line.size() && IsSpace(line[i])) ++i;
  *blank = i == line.size();
  return !*blank && line[i] == '%';
}

struct Header {
  int64_t n = 0;
  int64_t m = 0;
  bool sizes = false;
  bool vertex_weights = false;
  bool edge_weights = false;
  int ncon = 0;
  int64_t line = 0;
};

Header ReadHeader(LineCursor& cur) {
  std::string_view line;
  bool blank = false;
  while (cur.Next(&line)) {
    if (IsCommentOrBlank(line, &blank) || blank) continue;
    Header h;
    h.line = cur.line_number();
    Fields fields(line);
    std::string_view tok[5];
    int k = 0;
    while (k < 5 && fields.Next(&tok[k])) ++k;
    if (k < 2 || k > 4) {
      cur.Fail("the header must be 'n m [fmt [ncon]]' (vertices, edges, format, constraints), found {} fields",
               k == 5 ? "5 or more" : std::to_string(k));
    }
    h.n = cur.ParseInt(tok[0], "vertex count");
    h.m = cur.ParseInt(tok[1], "edge count");
    if (h.n < 1) cur.Fail("vertex count {} must be at least 1", h.n);
    if (h.m < 0) cur.Fail("edge count {} must not be negative", h.m);
    if (k >= 3) {
      const std::string_view fmt = tok[2];
      const bool ok =
          fmt.size() <= 3 && std::all_of(fmt.begin(), fmt.end(), [](char c) { return c == '0' || c == '1'; });
      if (!ok) {
        cur.Fail("fmt '{}' must be up to three 0/1 digits: vertex sizes, vertex weights, edge weights (e.g. 1, 10, 11)",
                 Excerpt(fmt));
      }
      const std::string padded = std::string(3 - fmt.size(), '0') + std::string(fmt);
      h.sizes = padded[0] == '1';
      h.vertex_weights = padded[1] == '1';
      h.edge_weights = padded[2] == '1';
    }
    if (k == 4) {
      const int64_t ncon = cur.ParseInt(tok[3], "ncon");
      if (!h.vertex_weights)
        cur.Fail("ncon {} is given but fmt '{}' has no vertex weights (use fmt 10 or 11)", ncon, tok[2]);
      if (ncon < 1 || ncon > 1024) cur.Fail("ncon {} must be in [1, 1024]", ncon);
      h.ncon = static_cast<int>(ncon);
    } else if (h.vertex_weights) {
      h.ncon = 1;
    }
    return h;
  }
  throw Error::InFile(cur.name(), "no header line 'n m [fmt [ncon]]' (the file is empty or holds only comments)");
}

// Refuses a header that promises more than the file can hold, before any array is sized from it: 2m entries need at
// least 2 bytes each in the file (a header claiming more is caught when the lines run out), and so does each vertex
// line's size and ncon weights. A compressed file is bounded by what it may inflate to (--max-inflate-ratio).
void CheckHeaderFits(const TextStream& file, const Header& h) {
  const int64_t n = h.n;
  // Checked before doubling: a header with m above 2^62 would overflow 2m (found by tests/fuzz/fuzz_metis.cc).
  TESSEL_CHECK(h.m <= (int64_t{1} << 61),
               "{}:{}: edge count {} is too large (the header is 'n m [fmt [ncon]]' with m the number of "
               "undirected edges; fix the header)",
               file.name(), h.line, h.m);
  const int64_t bytes = std::min(file.MaxSize(), std::numeric_limits<int64_t>::max() - 1);
  const std::string size_text = file.compression() == Compression::kNone
                                    ? fmt::format("the file's {} bytes", bytes)
                                    : fmt::format("the {} bytes the file may inflate to (--max-inflate-ratio)", bytes);
  TESSEL_CHECK(n <= bytes + 1, "{}:{}: the header declares {} vertices, more than {} can hold", file.name(), h.line, n,
               size_text);
  const int64_t per_vertex = h.ncon + (h.sizes ? 1 : 0);
  TESSEL_CHECK(
      per_vertex == 0 || n <= (bytes + 1) / (2 * per_vertex),
      "{}:{}: the header declares {} vertices with {} size/weight value(s) each, more than {} can hold; the file "
      "is truncated or the header's n, fmt or ncon is wrong",
      file.name(), h.line, n, per_vertex, size_text);
}

// The vertex lines as read: the CSR rows in file order (edge weights when the header has them), and the line of each
// vertex for messages.
struct VertexLines {
  std::vector<int64_t> indptr;
  std::vector<int64_t> indices;
  std::vector<float> weights;
  std::vector<int64_t> line_of;
};

// Reads the n vertex lines into rows (vertex sizes and weights into *out) and checks that nothing but comments
// follows them and that they hold the header's 2m entries.
VertexLines ReadVertexLines(const TextStream& file, LineCursor& cur, const Header& h, MetisGraph* out) {
  const int64_t n = h.n;
  const int64_t entries = 2 * h.m;
  VertexLines rows;
  rows.indptr.assign(static_cast<size_t>(n) + 1, 0);
  std::vector<int64_t>& indices = rows.indices;
  std::vector<float>& weights = rows.weights;
  indices.reserve(static_cast<size_t>(std::min(entries, file.EstimatedSize() / 2 + 1)));
  if (h.edge_weights) weights.reserve(indices.capacity());
  if (h.sizes) out->vertex_sizes.resize(static_cast<size_t>(n));
  if (h.ncon > 0) out->vertex_weights.resize(static_cast<size_t>(n * h.ncon));
  rows.line_of.resize(static_cast<size_t>(n));

  std::string_view line;
  bool blank = false;
  for (int64_t i = 0; i < n; ++i) {
    do {
      if (!cur.Next(&line)) {
        cur.Fail("the file ends after {} of the {} vertex lines the header (line {}) declares", i, n, h.line);
      }
    } while (IsCommentOrBlank(line, &blank));
    rows.line_of[i] = cur.line_number();
    Fields fields(line);
    std::string_view tok;
    if (h.sizes) {
      if (!fields.Next(&tok)) cur.Fail("vertex {} has no vertex size (fmt says sizes come first)", i + 1);
      const int64_t s = cur.ParseInt(tok, "vertex size");
      if (s < 0) cur.Fail("vertex {} has size {}; sizes must be >= 0", i + 1, s);
      out->vertex_sizes[i] = s;
    }
    for (int c = 0; c < h.ncon; ++c) {
      if (!fields.Next(&tok)) cur.Fail("vertex {} has {} of its {} vertex weights", i + 1, c, h.ncon);
      const int64_t w = cur.ParseInt(tok, "vertex weight");
      if (w < 0) cur.Fail("vertex {} has weight {} for constraint {}; weights must be >= 0", i + 1, w, c);
      out->vertex_weights[i * h.ncon + c] = w;
    }
    while (fields.Next(&tok)) {
      const int64_t v = cur.ParseInt(tok, "neighbour");
      if (v < 1 || v > n) cur.Fail("neighbour {} of vertex {} is outside [1, {}]", v, i + 1, n);
      if (v == i + 1) cur.Fail("vertex {} lists itself as a neighbour (METIS graphs have no self-loops)", i + 1);
      if (static_cast<int64_t>(indices.size()) == entries) {
        cur.Fail("more adjacency entries than the 2 * {} = {} that the header (line {}) declares", h.m, entries,
                 h.line);
      }
      indices.push_back(v - 1);
      if (h.edge_weights) {
        if (!fields.Next(&tok)) cur.Fail("neighbour {} of vertex {} has no edge weight (fmt says it has)", v, i + 1);
        const int64_t w = cur.ParseInt(tok, "edge weight");
        if (w <= 0) cur.Fail("edge ({}, {}) has weight {}; edge weights must be positive", i + 1, v, w);
        if (w > kMaxExactWeight) {
          cur.Fail("edge ({}, {}) has weight {}, above 2^24 = {}, the largest integer float32 holds exactly", i + 1, v,
                   w, kMaxExactWeight);
        }
        weights.push_back(static_cast<float>(w));
      }
    }
    rows.indptr[i + 1] = static_cast<int64_t>(indices.size());
  }
  while (cur.Next(&line)) {
    if (!IsCommentOrBlank(line, &blank) && !blank) {
      cur.Fail("extra line after the {} vertex lines that the header (line {}) declares", n, h.line);
    }
  }
  if (static_cast<int64_t>(indices.size()) != entries) {
    const auto found = static_cast<int64_t>(indices.size());
    throw Error::AtLine(
        file.name(), h.line,
        fmt::format("declares {} edges but the vertex lines hold {} adjacency entries, i.e. {} edges{}", h.m, found,
                    static_cast<double>(found) / 2.0,
                    found == h.m && found % 2 == 0 ? " (m counts each undirected edge once, not twice)" : ""));
  }
  return rows;
}

// Sorts each row (with its weights).
void SortRows(VertexLines& rows, bool edge_weights) {
  const int64_t n = static_cast<int64_t>(rows.indptr.size()) - 1;
  std::vector<int64_t>& indices = rows.indices;
  std::vector<float>& weights = rows.weights;
  parallel_for<int64_t>(0, n, 256, [&](int64_t u) {
    const int64_t b = rows.indptr[u];
    const int64_t e = rows.indptr[u + 1];
    if (!edge_weights) {
      std::sort(indices.begin() + b, indices.begin() + e);
      return;
    }
    std::vector<std::pair<int64_t, float>> row(static_cast<size_t>(e - b));
    for (int64_t k = b; k < e; ++k) row[k - b] = {indices[k], weights[k]};
    std::sort(row.begin(), row.end());
    for (int64_t k = b; k < e; ++k) std::tie(indices[k], weights[k]) = row[k - b];
  });
}

// Throws naming the line of the first vertex whose sorted row has a duplicate or an edge its neighbour does not list
// back (with the same weight).
void CheckSymmetric(const TextStream& file, const VertexLines& rows, bool edge_weights) {
  const int64_t n = static_cast<int64_t>(rows.indptr.size()) - 1;
  const std::vector<int64_t>& indptr = rows.indptr;
  const std::vector<int64_t>& indices = rows.indices;
  const std::vector<float>& weights = rows.weights;
  const std::vector<int64_t>& line_of = rows.line_of;
  // Returns "" when row u is fine.
  auto problem = [&](int64_t u) -> std::string {
    const auto row_begin = indices.begin() + indptr[u];
    const auto row_end = indices.begin() + indptr[u + 1];
    for (auto it = row_begin; it != row_end; ++it) {
      const int64_t v = *it;
      if (it + 1 != row_end && it[1] == v) return fmt::format("vertex {} lists neighbour {} twice", u + 1, v + 1);
      const auto vb = indices.begin() + indptr[v];
      const auto ve = indices.begin() + indptr[v + 1];
      const auto back = std::lower_bound(vb, ve, u);
      if (back == ve || *back != u) {
        return fmt::format("vertex {} lists neighbour {}, but vertex {} (line {}) does not list {}", u + 1, v + 1,
                           v + 1, line_of[v], u + 1);
      }
      if (edge_weights && weights[it - indices.begin()] != weights[back - indices.begin()]) {
        return fmt::format("edge ({}, {}) has weight {} here but weight {} on line {} (vertex {})", u + 1, v + 1,
                           weights[it - indices.begin()], weights[back - indices.begin()], line_of[v], v + 1);
      }
    }
    return {};
  };
  std::atomic<int64_t> first_bad{n};
  parallel_for_chunks<int64_t>(0, n, 1024, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e && u < first_bad.load(std::memory_order_relaxed); ++u) {
      if (problem(u).empty()) continue;
      int64_t seen = first_bad.load();
      while (u < seen && !first_bad.compare_exchange_weak(seen, u)) {
      }
      return;
    }
  });
  if (first_bad.load() < n) {
    const int64_t u = first_bad.load();
    throw Error::AtLine(file.name(), line_of[u], problem(u));
  }
}

}  // namespace

MetisGraph ReadMetisGraph(const fs::path& path) {
  TextStream file = TextStream::Open(path);
  LineCursor cur(file);
  const Header h = ReadHeader(cur);
  CheckHeaderFits(file, h);
  MetisGraph out;
  out.ncon = h.ncon;
  VertexLines rows = ReadVertexLines(file, cur, h, &out);
  SortRows(rows, h.edge_weights);
  CheckSymmetric(file, rows, h.edge_weights);
  out.graph = CsrGraph64(Buffer<int64_t>(std::move(rows.indptr)), Buffer<int64_t>(std::move(rows.indices)),
                         Buffer<float>(std::move(rows.weights)));
  return out;
}

}  // namespace tessel::datasets
