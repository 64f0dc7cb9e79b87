// ReadLibsvm: LIBSVM/SVMlight sparse text, "<label> <index>:<value> ..." with 1-based strictly increasing
// indices. Lines are parsed in parallel blocks; the first bad line in file order is the one reported.
//
// Conventions (LIBSVM's svm-train has no comments and rejects blank lines; we are a little more lenient):
//  - blank (whitespace-only) lines are skipped, so a trailing empty line is harmless;
//  - a token that starts with '#' starts a comment running to the end of the line ("+1 3:1 # note"; a line
//    that starts with '#' is a comment line); a '#' inside a token ("3:1#x") is a malformed value;
//  - labels are any finite real number ("+1", "-1", "3", "0.25"); values are stored as float64, indices 0-based.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/parallel.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {

constexpr size_t kBlockLines = 4096;

// The rows parsed from one block of lines, and the first error in it.
struct Block {
  std::vector<int64_t> row_entries;  // entries in each row
  std::vector<double> labels;
  std::vector<int32_t> indices;  // 0-based
  std::vector<double> values;
  int64_t max_index = 0;   // largest 1-based index seen
  int64_t error_line = 0;  // 1-based line of the first error, 0 = none
  std::string error;
};

// Parses one line into `b`; false (with *error) when the line is malformed. Blank and comment lines add nothing.
bool ParseLine(std::string_view line, int64_t num_features, Block* b, std::string* error) {
  Fields fields(line);
  std::string_view tok;
  if (!fields.Next(&tok) || tok.front() == '#') return true;
  double label = 0;
  if (!ParseDouble(tok, &label)) {
    *error = fmt::format("label '{}' is not a number (expected '<label> <index>:<value> ...')", Excerpt(tok));
    return false;
  }
  if (!std::isfinite(label)) {
    *error = fmt::format("label '{}' is not finite", Excerpt(tok));
    return false;
  }
  int64_t prev = 0;
  int64_t count = 0;
  while (fields.Next(&tok)) {
    if (tok.front() == '#') break;
    const size_t colon = tok.find(':');
    if (colon == std::string_view::npos) {
      *error = fmt::format("'{}' has no ':' (expected <index>:<value>)", Excerpt(tok));
      return false;
    }
    const std::string_view index_text = tok.substr(0, colon);
    const std::string_view value_text = tok.substr(colon + 1);
    int64_t index = 0;
    if (!ParseInt64(index_text, &index)) {
      *error = fmt::format("feature index '{}' in '{}' is not an integer", Excerpt(index_text), Excerpt(tok));
      return false;
    }
    if (index < 1) {
      *error = fmt::format("feature index {} in '{}' is below 1 (LIBSVM indices start at 1)", index, Excerpt(tok));
      return false;
    }
    if (index <= prev) {
      *error = fmt::format(
          "feature index {} comes after index {} (indices must be strictly increasing within a "
          "line)",
          index, prev);
      return false;
    }
    if (num_features >= 0 && index > num_features) {
      *error = fmt::format("feature index {} is above the number of features, {}", index, num_features);
      return false;
    }
    if (index > std::numeric_limits<int32_t>::max()) {
      *error = fmt::format("feature index {} does not fit 32-bit feature ids", index);
      return false;
    }
    double value = 0;
    if (const char* why = ParseFinite(value_text, &value)) {
      *error = fmt::format("value '{}' of feature {} {}", Excerpt(value_text), index, why);
      return false;
    }
    b->indices.push_back(static_cast<int32_t>(index - 1));
    b->values.push_back(value);
    prev = index;
    ++count;
  }
  b->max_index = std::max(b->max_index, prev);
  b->labels.push_back(label);
  b->row_entries.push_back(count);
  return true;
}

std::string DatasetName(const fs::path& path) {
  fs::path p = path.filename();
  if (p.extension() == ".gz" || p.extension() == ".bz2") p = p.stem();
  return p.string();
}

}  // namespace

SparseRowDataset ReadLibsvm(const fs::path& path, int64_t num_features) {
  TextStream file = TextStream::Open(path);

  // Each piece of the stream (the whole mapped file when it is plain; a window of inflated text when compressed) is
  // cut into blocks of lines parsed in parallel; only the parsed rows outlive the piece.
  std::vector<Block> blocks;
  std::vector<std::string_view> lines;
  int64_t line_base = 0;  // lines before the piece
  std::string_view piece;
  while (file.Next(&piece)) {
    lines.clear();
    lines.reserve(static_cast<size_t>(std::count(piece.begin(), piece.end(), '\n')) + 1);
    LineCursor cursor(file.name(), piece);
    std::string_view line;
    while (cursor.Next(&line)) lines.push_back(line);

    const size_t first = blocks.size();
    const size_t num_blocks = (lines.size() + kBlockLines - 1) / kBlockLines;
    blocks.resize(first + num_blocks);
    parallel_for<size_t>(0, num_blocks, 1, [&](size_t k) {
      Block& b = blocks[first + k];
      const size_t end = std::min(lines.size(), (k + 1) * kBlockLines);
      for (size_t i = k * kBlockLines; i < end; ++i) {
        if (!ParseLine(lines[i], num_features, &b, &b.error)) {
          b.error_line = line_base + static_cast<int64_t>(i) + 1;
          return;
        }
      }
    });
    // The first error in file order: no later piece can hold an earlier line.
    for (size_t k = first; k < blocks.size(); ++k) {
      if (blocks[k].error_line > 0) throw Error::AtLine(file.name(), blocks[k].error_line, blocks[k].error);
    }
    line_base += static_cast<int64_t>(lines.size());
  }
  const size_t num_blocks = blocks.size();

  // Offsets of each block's rows and entries; the first error in file order wins.
  std::vector<size_t> row_base(num_blocks + 1, 0);
  std::vector<size_t> entry_base(num_blocks + 1, 0);
  int64_t max_index = 0;
  for (size_t k = 0; k < num_blocks; ++k) {
    const Block& b = blocks[k];
    row_base[k + 1] = row_base[k] + b.labels.size();
    entry_base[k + 1] = entry_base[k] + b.indices.size();
    max_index = std::max(max_index, b.max_index);
  }
  const size_t rows = row_base[num_blocks];
  if (rows == 0) throw Error::InFile(file.name(), "no data lines (expected '<label> <index>:<value> ...' lines)");

  SparseRowDataset ds;
  ds.name = DatasetName(path);
  ds.num_rows = static_cast<int64_t>(rows);
  ds.num_features = num_features >= 0 ? num_features : max_index;
  ds.indptr = Buffer<int64_t>(rows + 1);
  ds.indices = Buffer<int32_t>(entry_base[num_blocks]);
  ds.values = Buffer<double>(entry_base[num_blocks]);
  ds.labels = Buffer<double>(rows);
  auto indptr = ds.indptr.MutableHost();
  auto indices = ds.indices.MutableHost();
  auto values = ds.values.MutableHost();
  auto labels = ds.labels.MutableHost();
  parallel_for<size_t>(0, num_blocks, 1, [&](size_t k) {
    Block& b = blocks[k];
    std::copy(b.indices.begin(), b.indices.end(), indices.begin() + static_cast<std::ptrdiff_t>(entry_base[k]));
    std::copy(b.values.begin(), b.values.end(), values.begin() + static_cast<std::ptrdiff_t>(entry_base[k]));
    std::copy(b.labels.begin(), b.labels.end(), labels.begin() + static_cast<std::ptrdiff_t>(row_base[k]));
    auto offset = static_cast<int64_t>(entry_base[k]);
    for (size_t r = 0; r < b.row_entries.size(); ++r) {
      offset += b.row_entries[r];
      indptr[row_base[k] + r + 1] = offset;
    }
    b = Block{};  // release the block's memory early
  });
  ds.Validate();
  return ds;
}

}  // namespace tessel::datasets
