// ReadEdgeList: SNAP-style "u v [w]" text and CSV edge lists (plain, .gz, .bz2) into an EdgeList.
// Plain "u v\n" lines go through a hand-rolled pointer loop; any other line takes the careful, checked path.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "core/log.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {

// Ids of up to 18 digits are below 10^18 < 2^63, so the fast path accumulates them without overflow checks.
constexpr int kMaxFastDigits = 18;
constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

// Reads a run of decimal digits at q (stops at the first non-digit; the text holds a '\n' further on).
inline bool ScanDigits(const char*& q, uint64_t* out) {
  const char* start = q;
  uint64_t x = 0;
  unsigned d = 0;
  while ((d = static_cast<unsigned>(static_cast<unsigned char>(*q)) - unsigned{'0'}) <= 9) {
    x = x * 10 + d;
    ++q;
  }
  *out = x;
  return q != start && q - start <= kMaxFastDigits;
}

// Where the fast loop writes: arrays with room for `cap` edges, `n` of them used.
struct Sink {
  int64_t* src = nullptr;
  int64_t* dst = nullptr;
  size_t n = 0;
  size_t cap = 0;
  uint64_t max_id = 0;
};

// Parses lines "u<sep>v[ \t]*\r?\n" from p (kCsv: sep is one ','; else a run of spaces/tabs) while they are plain,
// their ids are in range and the sink has room. [p, safe_end) must end with '\n'. Returns where it stopped.
template <bool kCsv>
const char* ParsePlainLines(const char* p, const char* safe_end, uint64_t base, uint64_t limit, Sink* sink) {
  size_t n = sink->n;
  uint64_t max_id = sink->max_id;
  int64_t* const src = sink->src;
  int64_t* const dst = sink->dst;
  const size_t cap = sink->cap;
  while (p < safe_end && n < cap) {
    const char* q = p;
    uint64_t u = 0;
    uint64_t v = 0;
    if (!ScanDigits(q, &u)) break;
    if constexpr (kCsv) {
      if (*q != ',') break;
      ++q;
    } else {
      if (*q != ' ' && *q != '\t') break;
      do ++q;
      while (*q == ' ' || *q == '\t');
    }
    if (!ScanDigits(q, &v)) break;
    if constexpr (!kCsv) {
      while (*q == ' ' || *q == '\t') ++q;
    }
    if (*q == '\r') ++q;
    if (*q != '\n') break;
    u -= base;  // base 1: id 0 wraps around and fails the limit check, so the careful path reports it
    v -= base;
    if (u >= limit || v >= limit) break;
    src[n] = static_cast<int64_t>(u);
    dst[n] = static_cast<int64_t>(v);
    max_id = std::max(max_id, std::max(u, v));
    ++n;
    p = q + 1;
  }
  sink->n = n;
  sink->max_id = max_id;
  return p;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

class EdgeListParser {
 public:
  EdgeListParser(const std::string& name, const EdgeListOptions& options)
      : name_(name), options_(options), base_(options.one_based ? 1 : 0) {
    TESSEL_CHECK(options.num_nodes >= -1, "{}: num_nodes {} must be >= 0 (or -1 to take it from the file)", name_,
                 options.num_nodes);
    if (options.num_nodes >= 0) limit_ = static_cast<uint64_t>(options.num_nodes);
  }

  // Parses the stream piece by piece (one piece for a plain file); pieces end at line ends.
  EdgeList Run(TextStream& stream) {
    std::string_view piece;
    int64_t offset = 0;  // text bytes before the piece
    bool reserved = false;
    while (stream.Next(&piece)) {
      const char* p = piece.data();
      const char* const end = p + piece.size();
      if (!started_) p = Prologue(p, end);
      if (started_ && !reserved) {
        // The edges' share of the text: what is left of this piece and of the whole (estimated when compressed).
        const int64_t before = offset + (p - piece.data());
        Reserve(static_cast<size_t>(std::max<int64_t>(end - p, stream.EstimatedSize() - before)), p, end);
        reserved = true;
      }
      Lines(p, end);
      offset += static_cast<int64_t>(piece.size());
    }
    return Finish();
  }

 private:
  [[noreturn]] void Fail(std::string_view what) const { throw Error::AtLine(name_, line_, what); }

  void Lines(const char* p, const char* const end) {
    // Every line before safe_end ends with '\n', so the fast loop needs no bounds checks.
    const char* nl = p < end ? static_cast<const char*>(memrchr(p, '\n', static_cast<size_t>(end - p))) : nullptr;
    const char* const safe_end = nl == nullptr ? p : nl + 1;
    // The fast loop knows whitespace and ',' separators; other delimiters and weights take the careful path.
    const bool fast = !options_.weighted && (delim_ == 0 || delim_ == ',');
    while (p < end) {
      if (p < safe_end) {
        if (fast) {
          if (sink_.n == sink_.cap) Grow();
          const size_t before = sink_.n;
          const auto base = static_cast<uint64_t>(base_);
          p = delim_ == ',' ? ParsePlainLines<true>(p, safe_end, base, limit_, &sink_)
                            : ParsePlainLines<false>(p, safe_end, base, limit_, &sink_);
          line_ += static_cast<int64_t>(sink_.n - before);
          if (p == safe_end || sink_.n == sink_.cap) continue;
        }
        const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(safe_end - p)));
        ++line_;
        CarefulLine(std::string_view(p, static_cast<size_t>(eol - p)));
        p = eol + 1;
      } else {  // a last line without '\n'
        ++line_;
        CarefulLine(std::string_view(p, static_cast<size_t>(end - p)));
        p = end;
      }
    }
  }

  // Skips comments and blank lines up to the first content line; settles the delimiter and the header there.
  // Returns the start of the first edge line.
  const char* Prologue(const char* p, const char* end) {
    while (p < end) {
      const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      const char* next = eol == nullptr ? end : eol + 1;
      std::string_view line(p, static_cast<size_t>((eol == nullptr ? end : eol) - p));
      ++line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      size_t i = 0;
      while (i < line.size() && IsSpace(line[i])) ++i;
      if (i == line.size()) {
        p = next;
        continue;
      }
      if (line[i] == '#' || line[i] == '%') {
        Comment(line);
        p = next;
        continue;
      }
      char d = options_.delimiter;
      if (d == ' ' || d == '\t') d = 0;
      if (d == 0 && options_.delimiter == 0 && line.find(',') != std::string_view::npos) d = ',';
      delim_ = d;
      bool header = false;
      if (options_.header.has_value()) {
        header = *options_.header;
      } else if (delim_ != 0) {
        std::string_view first;
        Fields fields(line, delim_);
        int64_t ignored = 0;
        header = fields.Next(&first) && !ParseInt64(first, &ignored);
      }
      started_ = true;
      if (header) return next;
      --line_;  // the main loop counts this line again
      return p;
    }
    return end;
  }

  void Reserve(size_t bytes, const char* p, const char* end) {
    size_t estimate = 0;
    const size_t upper = bytes / 4 + 16;  // the shortest edge line, "u v\n", has 4 bytes
    if (declared_edges_ >= 0) {
      estimate = std::min(static_cast<size_t>(declared_edges_), upper);
    } else {
      const size_t sample = std::min<size_t>(static_cast<size_t>(end - p), size_t{1} << 20);
      const auto lines = static_cast<size_t>(std::count(p, p + sample, '\n'));
      estimate = lines == 0
                     ? upper
                     : std::min(upper, static_cast<size_t>(static_cast<double>(bytes) * static_cast<double>(lines) /
                                                           static_cast<double>(sample) * 1.02));
    }
    estimate = std::max<size_t>(estimate + 16, 1024);
    out_.src.resize(estimate);
    out_.dst.resize(estimate);
    if (options_.weighted) out_.weights.reserve(estimate);
    Bind();
  }

  void Bind() {
    sink_.src = out_.src.data();
    sink_.dst = out_.dst.data();
    sink_.cap = out_.src.size();
  }

  void Grow() {
    const size_t cap = std::max(sink_.cap + sink_.cap / 2, sink_.cap + 1024);
    out_.src.resize(cap);
    out_.dst.resize(cap);
    Bind();
  }

  // "# nodes N edges M" (SNAP writes "# Nodes: N Edges: M"): any case, optional ':'.
  void Comment(std::string_view line) {
    Fields fields(line);
    std::string_view tok;
    std::string key;
    while (fields.Next(&tok)) {
      int64_t value = 0;
      if ((key == "nodes" || key == "edges") && ParseInt64(tok, &value)) {
        // A count the header declares is never negative: "# nodes -5" is damage, not a comment to skip.
        if (value < 0) {
          Fail(fmt::format("the header declares {} {}; a count must be >= 0 (fix the header line or remove it)", value,
                           key));
        }
        Declare(key == "nodes", value);
        key.clear();
        continue;
      }
      while (!tok.empty() && (tok.front() == '#' || tok.front() == '%')) tok.remove_prefix(1);
      if (!tok.empty() && tok.back() == ':') tok.remove_suffix(1);
      key = Lower(tok);
    }
  }

  void Declare(bool nodes, int64_t value) {
    int64_t& have = nodes ? declared_nodes_ : declared_edges_;
    int64_t& at = nodes ? nodes_line_ : edges_line_;
    const char* what = nodes ? "nodes" : "edges";
    if (have >= 0) {
      if (have != value) Fail(fmt::format("declares {} {} but line {} declared {}", value, what, at, have));
      return;
    }
    have = value;
    at = line_;
    if (!nodes || options_.num_nodes >= 0) return;
    if (sink_.n > 0 && sink_.max_id >= static_cast<uint64_t>(value)) {
      Fail(fmt::format("declares {} nodes but an earlier line has node id {}", value,
                       sink_.max_id + static_cast<uint64_t>(base_)));
    }
    limit_ = static_cast<uint64_t>(value);
  }

  // The checked path: comments, blank lines, odd spacing, signs, weights, and every error.
  void CarefulLine(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t i = 0;
    while (i < line.size() && IsSpace(line[i])) ++i;
    if (i == line.size()) return;
    if (line[i] == '#' || line[i] == '%') {
      Comment(line);
      return;
    }
    Fields fields(line, delim_);
    std::string_view tok[4];
    int k = 0;
    while (k < 4 && fields.Next(&tok[k])) ++k;
    const int want = options_.weighted ? 3 : 2;
    if (k != want) {
      const std::string found = k == 4 ? "4 or more" : std::to_string(k);
      if (options_.weighted) {
        Fail(
            fmt::format("expected 3 fields 'source target weight' but found {} (every line of a weighted edge list "
                        "needs a weight)",
                        found));
      }
      Fail(fmt::format("expected 2 fields 'source target' but found {}{}", found,
                       k == 3 ? " (if the third column is an edge weight, read the file as weighted)" : ""));
    }
    const uint64_t u = Id(tok[0]);
    const uint64_t v = Id(tok[1]);
    if (sink_.n == sink_.cap) Grow();
    sink_.src[sink_.n] = static_cast<int64_t>(u);
    sink_.dst[sink_.n] = static_cast<int64_t>(v);
    sink_.max_id = std::max(sink_.max_id, std::max(u, v));
    ++sink_.n;
    if (options_.weighted) out_.weights.push_back(Weight(tok[2]));
  }

  // A 0-based id from a token, checked against the node count.
  uint64_t Id(std::string_view tok) {
    if (tok.empty()) Fail("empty node id field");
    int64_t raw = 0;
    if (!ParseInt64(tok, &raw)) {
      const bool digits = std::all_of(tok.begin() + (tok.front() == '-' || tok.front() == '+' ? 1 : 0), tok.end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
      if (digits && tok.size() > 1) {
        Fail(
            fmt::format("node id '{}' is {}", Excerpt(tok), tok.front() == '-' ? "negative" : "too large for 64 bits"));
      }
      Fail(fmt::format("node id '{}' is not an integer", Excerpt(tok)));
    }
    if (raw < 0) Fail(fmt::format("node id '{}' is negative", Excerpt(tok)));
    if (raw == 0 && base_ == 1) {
      Fail("node id 0 in a one-based file (ids start at 1; read the file as zero-based if 0 is a real id)");
    }
    if (raw == std::numeric_limits<int64_t>::max()) Fail(fmt::format("node id '{}' is too large", Excerpt(tok)));
    const auto id = static_cast<uint64_t>(raw - base_);
    if (id >= limit_) {
      const std::string range = base_ == 1 ? fmt::format("[1, {}]", limit_) : fmt::format("[0, {})", limit_);
      const std::string source = options_.num_nodes >= 0
                                     ? fmt::format("num_nodes = {} was given", limit_)
                                     : fmt::format("line {} declares {} nodes", nodes_line_, limit_);
      Fail(fmt::format("node id {} is outside {}: {}", raw, range, source));
    }
    return id;
  }

  float Weight(std::string_view tok) {
    double w = 0;
    if (!ParseDouble(tok, &w)) Fail(fmt::format("edge weight '{}' is not a number", Excerpt(tok)));
    if (!std::isfinite(w)) Fail(fmt::format("edge weight '{}' is not finite", Excerpt(tok)));
    if (std::fabs(w) > static_cast<double>(std::numeric_limits<float>::max())) {
      Fail(fmt::format("edge weight '{}' is outside the float32 range", Excerpt(tok)));
    }
    return static_cast<float>(w);
  }

  EdgeList Finish() {
    const size_t n = sink_.n;
    if (n == 0) throw Error::InFile(name_, "no edges (the file is empty or holds only comments and blank lines)");
    if (declared_edges_ >= 0 && static_cast<int64_t>(n) != declared_edges_) {
      throw Error::AtLine(
          name_, edges_line_,
          fmt::format("declares {} edges but the file has {} edge lines ({})", declared_edges_, n,
                      static_cast<int64_t>(n) < declared_edges_ ? "truncated file?" : "edited or concatenated file?"));
    }
    out_.src.resize(n);
    out_.dst.resize(n);
    out_.num_nodes = limit_ != kNoLimit ? static_cast<int64_t>(limit_) : static_cast<int64_t>(sink_.max_id) + 1;
    // Ids are node numbers: one stray large id makes every number below it a node (found by probing: a 30-byte file
    // with id 100000000 made 100 M nodes and a 763 MB dataset). Said before the graph is built.
    const auto ends = static_cast<int64_t>(2 * n);
    if (limit_ == kNoLimit && out_.num_nodes > (int64_t{1} << 20) && out_.num_nodes > 16 * ends) {
      log::Warn(
          "{}: the largest node id, {}, makes {} nodes for {} edges (at most {} of them have an edge): ids are node "
          "numbers 0 .. max; if they are labels, renumber them densely before converting",
          name_, static_cast<int64_t>(sink_.max_id) + base_, out_.num_nodes, n, std::min(ends, out_.num_nodes));
    }
    return std::move(out_);
  }

  std::string name_;
  EdgeListOptions options_;
  bool started_ = false;  // the prologue (leading comments, delimiter, header) is done
  int64_t base_;
  uint64_t limit_ = kNoLimit;
  char delim_ = 0;
  int64_t line_ = 0;
  int64_t declared_nodes_ = -1;
  int64_t nodes_line_ = 0;
  int64_t declared_edges_ = -1;
  int64_t edges_line_ = 0;
  EdgeList out_;
  Sink sink_;
};

}  // namespace

EdgeList ReadEdgeList(const fs::path& path, const EdgeListOptions& options) {
  TextStream stream = TextStream::Open(path);
  return EdgeListParser(stream.name(), options).Run(stream);
}

}  // namespace tessel::datasets
