// TextStream and TextFile (mmap for plain files, zlib/libbz2 streaming for compressed ones) and the field parsers.
// A decompressor is a ByteSource that fills a caller's buffer; a truncated stream is an error, not a short file. The
// text may inflate to at most --max-inflate-ratio times the compressed size (checked after every step), and every
// buffer that grows is checked against the memory budget (core/memory_budget.h), so a decompression bomb stops
// early with a message. TextStream keeps two windows: the caller parses one while a second thread inflates the next.
#include "datasets/text_input.h"

#include <bzlib.h>
#include <zlib.h>

#include <atomic>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <future>
#include <limits>

#include <fmt/format.h>

#include "core/memory_budget.h"

namespace tessel::datasets {
namespace fs = std::filesystem;
namespace detail {

// Fills buffers with text: inflated data of a compressed file, or (for tests) a string.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Writes up to `cap` bytes to `out` and returns how many; fewer than `cap` only at the end of the data.
  virtual size_t Read(char* out, size_t cap) = 0;
  // Input bytes consumed and text bytes produced so far (for the size estimate).
  virtual int64_t consumed() const = 0;
  virtual int64_t produced() const = 0;
};

}  // namespace detail
namespace {

constexpr size_t kChunk = size_t{4} << 20;
constexpr std::string_view kInflateFix =
    "give the uncompressed file instead (it is mapped, not copied), or use a machine with more memory";

// inflate() takes at most UINT_MAX bytes a call.
constexpr size_t kMaxStep = size_t{1} << 30;

// The read loop of a streaming decompressor over the mapped input, written once for zlib and libbz2 (Stream is
// z_stream or bz_stream; Derived supplies Decompress, NextStream, CheckStep and kStreamEnd): hand the input over in
// steps of at most kMaxStep, decompress into the caller's buffer, check what came out against the inflation limit,
// and at the end of a stream stop (the input is used up) or go on with the next one (concatenated files).
template <class Derived, class Stream>
class DecompressSource : public detail::ByteSource {
 public:
  size_t Read(char* out, size_t cap) final {
    size_t done = 0;
    while (done < cap && !ended_) {
      if (st_.avail_in == 0 && in_off_ < in_.size()) {
        st_.next_in = reinterpret_cast<decltype(st_.next_in)>(const_cast<char*>(in_.data() + in_off_));
        st_.avail_in = static_cast<decltype(st_.avail_in)>(std::min(in_.size() - in_off_, kMaxStep));
        in_off_ += st_.avail_in;
      }
      const size_t step = std::min(cap - done, kMaxStep);
      st_.next_out = reinterpret_cast<decltype(st_.next_out)>(out + done);
      st_.avail_out = static_cast<decltype(st_.avail_out)>(step);
      const int rc = static_cast<Derived*>(this)->Decompress();
      const size_t got = step - st_.avail_out;
      done += got;
      produced_ += static_cast<int64_t>(got);
      memory::CheckInflated(name_, static_cast<int64_t>(in_.size()), produced_);
      const bool input_used_up = st_.avail_in == 0 && in_off_ >= in_.size();
      if (rc == Derived::kStreamEnd) {
        if (input_used_up) {
          ended_ = true;
        } else {
          static_cast<Derived*>(this)->NextStream();
        }
        continue;
      }
      static_cast<Derived*>(this)->CheckStep(rc, got, input_used_up);
    }
    return done;
  }
  int64_t consumed() const final { return static_cast<int64_t>(in_off_ - st_.avail_in); }
  int64_t produced() const final { return produced_; }

 protected:
  DecompressSource(std::string name, std::string_view in) : name_(std::move(name)), in_(in) {}

  std::string name_;
  std::string_view in_;
  Stream st_{};
  size_t in_off_ = 0;  // input bytes handed to the decompressor so far
  int64_t produced_ = 0;
  bool ended_ = false;
};

class GzipSource final : public DecompressSource<GzipSource, z_stream> {
 public:
  static constexpr int kStreamEnd = Z_STREAM_END;

  GzipSource(std::string name, std::string_view in) : DecompressSource(std::move(name), in) {
    if (inflateInit2(&st_, 15 + 32) != Z_OK) throw Error::InFile(name_, "zlib initialisation failed");
  }
  ~GzipSource() override { inflateEnd(&st_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  int Decompress() { return inflate(&st_, Z_NO_FLUSH); }
  // Concatenated gzip members (as `cat a.gz b.gz` makes) continue after a reset.
  void NextStream() { inflateReset(&st_); }
  void CheckStep(int rc, size_t, bool input_used_up) const {
    if (rc == Z_BUF_ERROR && input_used_up) {
      throw Error::InFile(name_, "gzip stream is truncated (the file ends before the compressed data does)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string msg = st_.msg != nullptr ? st_.msg : "unknown error";
      throw Error::InFile(name_, "corrupt gzip data: " + msg);
    }
  }
};

class Bzip2Source final : public DecompressSource<Bzip2Source, bz_stream> {
 public:
  static constexpr int kStreamEnd = BZ_STREAM_END;

  Bzip2Source(std::string name, std::string_view in) : DecompressSource(std::move(name), in) { Init(); }
  ~Bzip2Source() override {
    if (open_) BZ2_bzDecompressEnd(&st_);
  }
  Bzip2Source(const Bzip2Source&) = delete;
  Bzip2Source& operator=(const Bzip2Source&) = delete;

  int Decompress() { return BZ2_bzDecompress(&st_); }
  // Multi-stream files (pbzip2, `cat a.bz2 b.bz2`) continue with a fresh decompressor.
  void NextStream() {
    const char* next = st_.next_in;
    const unsigned left = st_.avail_in;
    BZ2_bzDecompressEnd(&st_);
    open_ = false;
    st_ = bz_stream{};
    Init();
    st_.next_in = const_cast<char*>(next);
    st_.avail_in = left;
  }
  void CheckStep(int rc, size_t got, bool input_used_up) const {
    if (rc != BZ_OK) throw Error::InFile(name_, fmt::format("corrupt bzip2 data (libbz2 code {})", rc));
    if (got == 0 && input_used_up) {
      throw Error::InFile(name_, "bzip2 stream is truncated (the file ends before the compressed data does)");
    }
  }

 private:
  void Init() {
    if (BZ2_bzDecompressInit(&st_, 0, 0) != BZ_OK) throw Error::InFile(name_, "bzip2 initialisation failed");
    open_ = true;
  }

  bool open_ = false;
};

// A string handed out as if it were inflated (tests of the windowing).
class StringSource final : public detail::ByteSource {
 public:
  explicit StringSource(std::string text) : text_(std::move(text)) {}
  size_t Read(char* out, size_t cap) override {
    const size_t n = std::min(cap, text_.size() - off_);
    std::memcpy(out, text_.data() + off_, n);
    off_ += n;
    return n;
  }
  int64_t consumed() const override { return static_cast<int64_t>(off_); }
  int64_t produced() const override { return static_cast<int64_t>(off_); }

 private:
  std::string text_;
  size_t off_ = 0;
};

Compression Sniff(std::string_view raw) {
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b) {
    return Compression::kGzip;
  }
  if (raw.size() >= 3 && raw.substr(0, 3) == "BZh") return Compression::kBzip2;
  return Compression::kNone;
}

std::shared_ptr<MappedFile> MapInput(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error::InFile(path.string(), "no such file");
  if (fs::is_directory(path, ec)) throw Error::InFile(path.string(), "is a folder, expected a file");
  return MappedFile::Open(path);
}

std::unique_ptr<detail::ByteSource> MakeSource(Compression c, const std::string& name, std::string_view raw) {
  if (c == Compression::kGzip) return std::make_unique<GzipSource>(name, raw);
  return std::make_unique<Bzip2Source>(name, raw);
}

// Resizes a window buffer after checking the memory budget for it.
void SizeBuffer(std::string* buf, size_t bytes, const std::string& name) {
  if (buf->size() >= bytes) return;
  memory::Check(static_cast<int64_t>(bytes), fmt::format("decompressing {}", name), kInflateFix);
  buf->resize(bytes);
}

// A window's bytes, not zero-filled: only what is written is touched, so a small file costs a few pages, not two
// whole windows.
struct Window {
  std::unique_ptr<char[]> bytes;
  size_t size = 0;
  char* data() { return bytes.get(); }
};

// Grows a window to `size` bytes, keeping its first `keep`, after checking the memory budget.
void SizeWindow(Window* w, size_t size, size_t keep, const std::string& name) {
  if (w->size >= size) return;
  memory::Check(static_cast<int64_t>(size), fmt::format("decompressing {}", name), kInflateFix);
  auto fresh = std::make_unique_for_overwrite<char[]>(size);
  if (keep > 0) std::memcpy(fresh.get(), w->bytes.get(), keep);
  w->bytes = std::move(fresh);
  w->size = size;
}

}  // namespace

namespace detail {

// Two windows: `front` holds the piece the caller has; `back` is filled (on a second thread) with the tail of the
// front's text after its last '\n' and then the next inflated bytes.
struct StreamState {
  std::string name;
  Compression compression = Compression::kNone;
  std::shared_ptr<MappedFile> mapping;
  std::string_view whole;  // a plain file: handed out once
  bool whole_given = false;
  int64_t input_bytes = 0;
  std::unique_ptr<ByteSource> source;
  size_t window = TextStream::kDefaultWindow;
  Window front;
  Window back;
  size_t back_len = 0;  // bytes of text in back (carried tail included) once the fill is done
  bool eof = false;     // the source has no more bytes after back's
  bool started = false;
  int64_t estimate = 0;
  std::future<void> fill;  // declared last: destroyed (waited for) before the buffers and the source

  ~StreamState() {
    if (fill.valid()) fill.wait();
  }

  // Fills back from back_len to its end, or to the end of the data.
  void FillBack() {
    while (back_len < back.size) {
      const size_t got = source->Read(back.data() + back_len, back.size - back_len);
      if (got == 0) {
        eof = true;
        return;
      }
      back_len += got;
    }
  }

  void LaunchFill() {
    fill = std::async(std::launch::async, [this] { FillBack(); });
  }

  bool Next(std::string_view* piece) {
    if (source == nullptr) {
      if (whole_given || whole.empty()) return false;
      whole_given = true;
      *piece = whole;
      return true;
    }
    if (!started) {
      started = true;
      SizeWindow(&back, window, 0, name);
      FillBack();
    } else if (fill.valid()) {
      fill.get();  // rethrows a corrupt or truncated stream, or a broken limit
    }
    // Find the last line end; a line longer than the window grows it until one is found or the data ends.
    size_t cut = 0;
    while (true) {
      const void* nl = back_len == 0 ? nullptr : memrchr(back.data(), '\n', back_len);
      if (nl != nullptr) {
        cut = static_cast<size_t>(static_cast<const char*>(nl) - back.data()) + 1;
        break;
      }
      if (eof) {
        cut = back_len;
        break;
      }
      SizeWindow(&back, back.size * 2, back_len, name);
      FillBack();
    }
    if (cut == 0) return false;  // nothing left
    std::swap(front, back);
    const size_t len = back_len;
    const size_t tail = len - cut;
    SizeWindow(&back, std::max(window, tail + window / 2), 0, name);
    std::memcpy(back.data(), front.data() + cut, tail);
    back_len = tail;
    const int64_t used = source->consumed();
    estimate = used > 0 ? static_cast<int64_t>(static_cast<double>(source->produced()) *
                                               static_cast<double>(input_bytes) / static_cast<double>(used))
                        : source->produced();
    if (!eof) LaunchFill();
    *piece = std::string_view(front.data(), cut);
    return true;
  }
};

}  // namespace detail

TextStream::TextStream() : s_(std::make_unique<detail::StreamState>()) {}
TextStream::TextStream(TextStream&&) noexcept = default;
TextStream& TextStream::operator=(TextStream&&) noexcept = default;
TextStream::~TextStream() = default;

namespace {
std::atomic<size_t> g_default_window{0};
}  // namespace

size_t DefaultStreamWindow() {
  const size_t w = g_default_window.load();
  return w == 0 ? TextStream::kDefaultWindow : w;
}
void SetDefaultStreamWindow(size_t bytes) { g_default_window.store(bytes); }

TextStream TextStream::Open(const fs::path& path, size_t window) {
  if (window == 0) window = DefaultStreamWindow();
  TextStream t;
  detail::StreamState& s = *t.s_;
  s.name = path.string();
  s.mapping = MapInput(path);
  const std::string_view raw(reinterpret_cast<const char*>(s.mapping->data()), s.mapping->size());
  s.compression = Sniff(raw);
  s.input_bytes = static_cast<int64_t>(raw.size());
  s.window = window;
  if (s.compression == Compression::kNone) {
    s.whole = raw;
    s.estimate = static_cast<int64_t>(raw.size());
  } else {
    s.source = MakeSource(s.compression, s.name, raw);
  }
  return t;
}

TextStream TextStream::FromString(std::string name, std::string text, size_t window) {
  TESSEL_CHECK(window > 0, "TextStream window must be positive");
  TextStream t;
  detail::StreamState& s = *t.s_;
  s.name = std::move(name);
  s.input_bytes = static_cast<int64_t>(text.size());
  s.window = window;
  s.source = std::make_unique<StringSource>(std::move(text));
  return t;
}

bool TextStream::Next(std::string_view* piece) { return s_->Next(piece); }
const std::string& TextStream::name() const { return s_->name; }
Compression TextStream::compression() const { return s_->compression; }
int64_t TextStream::EstimatedSize() const { return s_->estimate; }

int64_t TextStream::MaxSize() const {
  if (s_->compression == Compression::kNone) return s_->input_bytes;
  const double ratio = memory::GetInflateLimits().max_ratio;
  const double most = ratio * static_cast<double>(std::max<int64_t>(s_->input_bytes, 1));
  return ratio <= 0 || most >= 9e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(most);
}

TextFile TextFile::Open(const fs::path& path) {
  TextFile f;
  f.name_ = path.string();
  f.mapping_ = MapInput(path);
  const std::string_view raw(reinterpret_cast<const char*>(f.mapping_->data()), f.mapping_->size());
  f.compression_ = Sniff(raw);
  if (f.compression_ == Compression::kNone) {
    f.text_ = raw;
    return f;
  }
  auto source = MakeSource(f.compression_, f.name_, raw);
  std::string out;
  size_t len = 0;
  while (true) {
    SizeBuffer(&out, out.size() + kChunk, f.name_);
    const size_t got = source->Read(out.data() + len, out.size() - len);
    len += got;
    if (len < out.size()) break;
  }
  source.reset();
  out.resize(len);
  f.owned_ = std::make_shared<const std::string>(std::move(out));
  f.mapping_.reset();
  f.text_ = *f.owned_;
  return f;
}

TextFile TextFile::FromString(std::string name, std::string text) {
  TextFile f;
  f.name_ = std::move(name);
  f.owned_ = std::make_shared<const std::string>(std::move(text));
  f.text_ = *f.owned_;
  return f;
}

fs::path FindWithCompression(const fs::path& base) {
  std::error_code ec;
  for (const char* ext : {"", ".gz", ".bz2"}) {
    fs::path p = base;
    p += ext;
    // Anything at the name counts (a folder, a pipe, a device, a dangling link): its reader refuses it by name.
    if (fs::exists(fs::symlink_status(p, ec))) return p;
  }
  throw Error::InFile(base.string(), "no such file (also looked for .gz and .bz2)");
}

bool Fields::Next(std::string_view* field) {
  if (delim_ == 0) {
    size_t i = 0;
    while (i < rest_.size() && IsSpace(rest_[i])) ++i;
    if (i == rest_.size()) {
      rest_ = {};
      return false;
    }
    size_t j = i;
    while (j < rest_.size() && !IsSpace(rest_[j])) ++j;
    *field = rest_.substr(i, j - i);
    rest_.remove_prefix(j);
    return true;
  }
  if (done_) return false;
  const size_t d = rest_.find(delim_);
  std::string_view f = d == std::string_view::npos ? rest_ : rest_.substr(0, d);
  if (d == std::string_view::npos) {
    done_ = true;
    rest_ = {};
  } else {
    rest_.remove_prefix(d + 1);
  }
  while (!f.empty() && IsSpace(f.front())) f.remove_prefix(1);
  while (!f.empty() && IsSpace(f.back())) f.remove_suffix(1);
  *field = f;
  return true;
}

bool Fields::AtEnd() const {
  if (delim_ != 0) return done_;
  for (char c : rest_) {
    if (!IsSpace(c)) return false;
  }
  return true;
}

bool LineCursor::NextContent(std::string_view* line, std::string_view comment_chars) {
  std::string_view l;
  while (Next(&l)) {
    size_t i = 0;
    while (i < l.size() && IsSpace(l[i])) ++i;
    if (i == l.size()) continue;
    if (comment_chars.find(l[i]) != std::string_view::npos) continue;
    *line = l;
    return true;
  }
  return false;
}

namespace {

template <typename T>
bool ParseReal(std::string_view s, T* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

template <typename T>
const char* ParseFiniteReal(std::string_view s, T* out) {
  if (!ParseReal(s, out)) return "is not a number";
  return std::isfinite(*out) ? nullptr : "is not finite";
}

}  // namespace

std::string Excerpt(std::string_view token) {
  constexpr size_t kMax = 40;
  if (token.size() <= kMax) return std::string(token);
  return fmt::format("{}... ({} characters)", token.substr(0, kMax), token.size());
}

bool ParseDouble(std::string_view s, double* out) { return ParseReal(s, out); }
bool ParseFloat(std::string_view s, float* out) { return ParseReal(s, out); }
const char* ParseFinite(std::string_view s, double* out) { return ParseFiniteReal(s, out); }
const char* ParseFinite(std::string_view s, float* out) { return ParseFiniteReal(s, out); }

int64_t LineCursor::ParseInt(std::string_view token, std::string_view what) const {
  int64_t v = 0;
  if (!ParseInt64(token, &v)) Fail("{} '{}' is not an integer", what, Excerpt(token));
  return v;
}

double LineCursor::ParseDouble(std::string_view token, std::string_view what) const {
  double v = 0;
  if (const char* why = ParseFinite(token, &v)) Fail("{} '{}' {}", what, Excerpt(token), why);
  return v;
}

float LineCursor::ParseFloat(std::string_view token, std::string_view what) const {
  float v = 0;
  if (const char* why = ParseFinite(token, &v)) Fail("{} '{}' {}", what, Excerpt(token), why);
  return v;
}

}  // namespace tessel::datasets
