// TextFile (mmap for plain files, zlib/libbz2 streaming for compressed ones) and the field parsers.
// Decompression reads in 4 MiB steps into a growing string; a truncated stream is an error, not a short file. The
// text may inflate to at most --max-inflate-ratio times the compressed size, and each growth is checked against the
// memory budget (core/memory_budget.h), so a decompression bomb stops early with a message.
#include "datasets/text_input.h"

#include <bzlib.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "core/memory_budget.h"

namespace tessel::datasets {
namespace fs = std::filesystem;
namespace {

constexpr size_t kChunk = size_t{4} << 20;
constexpr std::string_view kInflateFix =
    "give the uncompressed file instead (it is mapped, not copied), or use a machine with more memory";

// The decompressors' states are released on every exit, an exception from a limit check included.
struct ZlibStream {
  z_stream zs{};
  bool open = false;
  ~ZlibStream() {
    if (open) inflateEnd(&zs);
  }
};
struct Bzip2Stream {
  bz_stream bs{};
  bool open = false;
  ~Bzip2Stream() {
    if (open) BZ2_bzDecompressEnd(&bs);
  }
};

std::string Gunzip(const std::string& name, std::string_view in) {
  std::string out;
  ZlibStream stream;
  z_stream& zs = stream.zs;
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw Error::InFile(name, "zlib initialisation failed");
  stream.open = true;
  size_t in_off = 0;    // input bytes handed to zlib so far
  size_t produced = 0;  // output bytes written so far
  while (true) {
    if (zs.avail_in == 0 && in_off < in.size()) {
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_off));
      zs.avail_in = static_cast<uInt>(std::min<size_t>(in.size() - in_off, kChunk));
      in_off += zs.avail_in;
    }
    if (out.size() - produced < kChunk) {
      memory::Check(static_cast<int64_t>(out.size() + kChunk), fmt::format("decompressing {}", name), kInflateFix);
      out.resize(out.size() + kChunk);
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(out.size() - produced);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    produced = out.size() - zs.avail_out;
    memory::CheckInflated(name, static_cast<int64_t>(in.size()), static_cast<int64_t>(produced));
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (as `cat a.gz b.gz` makes) continue after a reset.
      if (zs.avail_in == 0 && in_off >= in.size()) break;
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_off >= in.size()) {
      throw Error::InFile(name, "gzip stream is truncated (the file ends before the compressed data does)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string msg = zs.msg != nullptr ? zs.msg : "unknown error";
      throw Error::InFile(name, "corrupt gzip data: " + msg);
    }
  }
  out.resize(produced);
  return out;
}

std::string Bunzip2(const std::string& name, std::string_view in) {
  std::string out;
  Bzip2Stream stream;
  bz_stream& bs = stream.bs;
  if (BZ2_bzDecompressInit(&bs, 0, 0) != BZ_OK) throw Error::InFile(name, "bzip2 initialisation failed");
  stream.open = true;
  bs.next_in = const_cast<char*>(in.data());
  bs.avail_in = static_cast<unsigned>(std::min<size_t>(in.size(), UINT32_MAX));
  size_t produced = 0;
  while (true) {
    if (out.size() - produced < kChunk) {
      memory::Check(static_cast<int64_t>(out.size() + kChunk), fmt::format("decompressing {}", name), kInflateFix);
      out.resize(out.size() + kChunk);
    }
    bs.next_out = out.data() + produced;
    bs.avail_out = static_cast<unsigned>(out.size() - produced);
    const int rc = BZ2_bzDecompress(&bs);
    produced = out.size() - bs.avail_out;
    memory::CheckInflated(name, static_cast<int64_t>(in.size()), static_cast<int64_t>(produced));
    if (rc == BZ_STREAM_END) break;
    if (rc != BZ_OK) throw Error::InFile(name, fmt::format("corrupt bzip2 data (libbz2 code {})", rc));
    const size_t off = static_cast<size_t>(bs.next_in - in.data());
    if (bs.avail_in == 0) {
      if (off >= in.size() && bs.avail_out > 0) {
        throw Error::InFile(name, "bzip2 stream is truncated (the file ends before the compressed data does)");
      }
      bs.avail_in = static_cast<unsigned>(std::min<size_t>(in.size() - off, UINT32_MAX));
    }
  }
  out.resize(produced);
  return out;
}

}  // namespace

TextFile TextFile::Open(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error::InFile(path.string(), "no such file");
  if (fs::is_directory(path, ec)) throw Error::InFile(path.string(), "is a folder, expected a file");
  TextFile f;
  f.name_ = path.string();
  f.mapping_ = MappedFile::Open(path);
  const std::string_view raw(reinterpret_cast<const char*>(f.mapping_->data()), f.mapping_->size());
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b) {
    f.compression_ = Compression::kGzip;
    f.owned_ = std::make_shared<const std::string>(Gunzip(f.name_, raw));
  } else if (raw.size() >= 3 && raw.substr(0, 3) == "BZh") {
    f.compression_ = Compression::kBzip2;
    f.owned_ = std::make_shared<const std::string>(Bunzip2(f.name_, raw));
  }
  if (f.compression_ != Compression::kNone) {
    f.mapping_.reset();
    f.text_ = *f.owned_;
  } else {
    f.text_ = raw;
  }
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
    if (fs::is_regular_file(p, ec)) return p;
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

bool ParseDouble(std::string_view s, double* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseFloat(std::string_view s, float* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

int64_t LineCursor::ParseInt(std::string_view token, std::string_view what) const {
  int64_t v = 0;
  if (!ParseInt64(token, &v)) Fail("{} '{}' is not an integer", what, token);
  return v;
}

double LineCursor::ParseDouble(std::string_view token, std::string_view what) const {
  double v = 0;
  if (!datasets::ParseDouble(token, &v)) Fail("{} '{}' is not a number", what, token);
  if (!std::isfinite(v)) Fail("{} '{}' is not finite", what, token);
  return v;
}

float LineCursor::ParseFloat(std::string_view token, std::string_view what) const {
  float v = 0;
  if (!datasets::ParseFloat(token, &v)) Fail("{} '{}' is not a number", what, token);
  if (!std::isfinite(v)) Fail("{} '{}' is not finite", what, token);
  return v;
}

}  // namespace tessel::datasets
