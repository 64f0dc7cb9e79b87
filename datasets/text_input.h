// Text input for every reader: a file read as a stream of pieces that end at line ends (TextStream: a plain file is
// one mapped piece, a .gz/.bz2 one is inflated a window at a time, the next window on a second thread while the
// current one is parsed), a whole file in memory for the few binary or tiny inputs (TextFile), a line cursor that
// knows its 1-based line number, and from_chars-based field parsing.
// Errors are "file:line: what is wrong" through LineCursor::Fail.
#pragma once

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/file_io.h"

namespace tessel::datasets {

enum class Compression { kNone, kGzip, kBzip2 };

class TextFile {
 public:
  // Opens `path`; gzip and bzip2 are recognised by their magic bytes, whatever the file name.
  static TextFile Open(const std::filesystem::path& path);
  // For tests and in-memory inputs.
  static TextFile FromString(std::string name, std::string text);

  std::string_view text() const { return text_; }
  const std::string& name() const { return name_; }
  Compression compression() const { return compression_; }

 private:
  std::string name_;
  std::shared_ptr<MappedFile> mapping_;
  std::shared_ptr<const std::string> owned_;  // decompressed text; shared so copies and moves stay valid
  std::string_view text_;
  Compression compression_ = Compression::kNone;
};

namespace detail {
struct StreamState;
}

// A text file read as pieces of whole lines, so a compressed input is never inflated whole: memory stays at two
// windows however large the file. A plain file is one piece, its mapping (no copy). A gzip (concatenated members
// too) or bzip2 (multi-stream, as pbzip2 writes) file is inflated `window` bytes at a time; each piece ends with
// '\n' except the file's last, and a line longer than the window grows it (checked against the memory budget).
// The inflated total is checked against --max-inflate-ratio as it grows; a truncated or corrupt stream throws from
// Next() with the file's name. Pieces are valid until the next call of Next().
class TextStream {
 public:
  static constexpr size_t kDefaultWindow = size_t{16} << 20;

  // Opens `path`; gzip and bzip2 are recognised by their magic bytes, whatever the file name. Window 0 takes
  // DefaultStreamWindow().
  static TextStream Open(const std::filesystem::path& path, size_t window = 0);
  // For tests: `text` handed out through the same windowing as a compressed file.
  static TextStream FromString(std::string name, std::string text, size_t window = kDefaultWindow);

  TextStream(TextStream&&) noexcept;
  TextStream& operator=(TextStream&&) noexcept;
  ~TextStream();

  // The next piece; false at the end of the file.
  bool Next(std::string_view* piece);

  const std::string& name() const;
  Compression compression() const;
  // The text's size: exact for a plain file; for a compressed one, extrapolated from the ratio so far (0 before the
  // first piece). For reservations, never for checks.
  int64_t EstimatedSize() const;
  // The most text the file can yield: its size when plain, the ratio limit times the compressed size otherwise
  // (INT64_MAX with no ratio limit). For checks of declared counts against the input's size.
  int64_t MaxSize() const;

 private:
  TextStream();
  std::unique_ptr<detail::StreamState> s_;
};

// The window of TextStream::Open when none is given: kDefaultWindow unless set (tests shrink it so that every reader
// runs over many pieces). 0 restores the default.
size_t DefaultStreamWindow();
void SetDefaultStreamWindow(size_t bytes);

// Returns `base` if it exists, else base + ".gz", else base + ".bz2"; throws naming all three otherwise.
std::filesystem::path FindWithCompression(const std::filesystem::path& base);

// A token as error messages quote it: whole up to 40 characters, else its first 40 and its length ("1234...
// (1000000 characters)"), so a runaway field (a missing line end, a binary file) cannot make a message of megabytes.
std::string Excerpt(std::string_view token);

// Whitespace = space, tab, \r (line ends are handled by the cursor).
constexpr bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Splits one line into fields separated by runs of whitespace, or by a single delimiter character (CSV).
class Fields {
 public:
  explicit Fields(std::string_view line, char delimiter = 0) : rest_(line), delim_(delimiter) {}
  // Next field; false at the end of the line. With a delimiter, fields are trimmed of whitespace and may be empty.
  bool Next(std::string_view* field);
  bool AtEnd() const;

 private:
  std::string_view rest_;
  char delim_;
  bool done_ = false;
};

// Iterates lines; strips "\r\n"; counts lines from 1.
// Over a TextStream, it pulls the next piece when one is used up (the stream must outlive the cursor).
class LineCursor {
 public:
  explicit LineCursor(const TextFile& file) : name_(file.name()), rest_(file.text()) {}
  explicit LineCursor(TextStream& stream) : name_(stream.name()), stream_(&stream) {}
  LineCursor(std::string name, std::string_view text) : name_(std::move(name)), rest_(text) {}

  bool Next(std::string_view* line) {
    if (rest_.empty() && (stream_ == nullptr || !stream_->Next(&rest_))) return false;
    const size_t nl = rest_.find('\n');
    std::string_view l = nl == std::string_view::npos ? rest_ : rest_.substr(0, nl);
    rest_.remove_prefix(nl == std::string_view::npos ? rest_.size() : nl + 1);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    ++line_;
    *line = l;
    return true;
  }
  // Next line that is not blank and does not start (after whitespace) with one of `comment_chars`.
  bool NextContent(std::string_view* line, std::string_view comment_chars = "#%");
  int64_t line_number() const { return line_; }
  const std::string& name() const { return name_; }

  [[noreturn]] void Fail(std::string_view what) const { throw Error::AtLine(name_, line_, what); }
  template <typename... Args>
  [[noreturn]] void Fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw Error::AtLine(name_, line_, fmt::format(f, std::forward<Args>(args)...));
  }

  // Field parsers: on failure, Fail() with "<what> '<token>' is not an integer/a number".
  int64_t ParseInt(std::string_view token, std::string_view what) const;
  double ParseDouble(std::string_view token, std::string_view what) const;
  float ParseFloat(std::string_view token, std::string_view what) const;

 private:
  std::string name_;
  std::string_view rest_;
  TextStream* stream_ = nullptr;
  int64_t line_ = 0;
};

// Non-throwing parses of a whole token.
inline bool ParseInt64(std::string_view s, int64_t* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}
bool ParseDouble(std::string_view s, double* out);
bool ParseFloat(std::string_view s, float* out);
// A whole token as a finite real: nullptr when it is one, else what is wrong with it ("is not a number" or "is not
// finite") for the caller's message.
const char* ParseFinite(std::string_view s, double* out);
const char* ParseFinite(std::string_view s, float* out);

}  // namespace tessel::datasets
