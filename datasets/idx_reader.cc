// IDX files (LeCun's MNIST format, also Fashion-MNIST): a big-endian header (two zero bytes, the element type,
// the number of dimensions, then each dimension as uint32) followed by the elements. Images are unsigned bytes
// (type 0x08, three dimensions N x rows x cols), labels unsigned bytes (type 0x08, one dimension N).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {

struct Idx {
  std::vector<int64_t> dims;
  std::string_view data;  // the elements
};

Idx ParseIdx(const TextFile& file, int want_dims, const char* what) {
  const std::string_view b = file.text();
  const std::string& name = file.name();
  TESSEL_CHECK(b.size() >= 4, "{}: {} bytes is too short for an IDX header; is this an IDX {} file?", name, b.size(),
               what);
  const auto u8 = [&](size_t k) { return static_cast<uint8_t>(b[k]); };
  TESSEL_CHECK(u8(0) == 0 && u8(1) == 0,
               "{}: not an IDX file (the first two bytes are {:#04x} {:#04x}, not 0 0); give the {} file of an "
               "MNIST-style set (e.g. train-images-idx3-ubyte.gz)",
               name, u8(0), u8(1), what);
  TESSEL_CHECK(u8(2) == 0x08,
               "{}: IDX element type {:#04x} is not unsigned bytes (0x08); only byte images and "
               "labels are read",
               name, u8(2));
  TESSEL_CHECK(u8(3) == want_dims,
               "{}: {} dimensions, but an IDX {} file has {}; did you swap the images and "
               "labels files?",
               name, u8(3), what, want_dims);
  const size_t header = 4 + 4 * static_cast<size_t>(want_dims);
  TESSEL_CHECK(b.size() >= header, "{}: the header needs {} bytes but the file has {}", name, header, b.size());
  Idx idx;
  int64_t count = 1;
  for (int d = 0; d < want_dims; ++d) {
    const size_t at = 4 + 4 * static_cast<size_t>(d);
    const int64_t v = (int64_t{u8(at)} << 24) | (int64_t{u8(at + 1)} << 16) | (int64_t{u8(at + 2)} << 8) | u8(at + 3);
    TESSEL_CHECK(v > 0, "{}: dimension {} is 0", name, d + 1);
    // One byte per element: the product of the dimensions cannot exceed the bytes after the header. Checked before
    // multiplying, so four large dimensions cannot overflow the count (found by tests/fuzz/fuzz_idx.cc).
    const auto body = static_cast<int64_t>(b.size() - header);
    TESSEL_CHECK(v <= body / count,
                 "{}: dimension {} is {}, so the header promises more elements than the {} bytes after it; the file is "
                 "truncated or not IDX",
                 name, d + 1, v, body);
    idx.dims.push_back(v);
    count *= v;
    TESSEL_CHECK(count < (int64_t{1} << 40), "{}: {} elements is beyond what this reader accepts", name, count);
  }
  TESSEL_CHECK(b.size() == header + static_cast<size_t>(count),
               "{}: the header promises {} elements ({} bytes with the header) but the file has {} bytes; the file is "
               "truncated or not IDX",
               name, count, header + static_cast<size_t>(count), b.size());
  idx.data = b.substr(header);
  return idx;
}

}  // namespace

SparseRowDataset ReadIdx(const fs::path& images, const fs::path& labels, double scale) {
  TESSEL_CHECK(scale > 0 && std::isfinite(scale), "IDX pixel scale {} must be positive", scale);
  const TextFile image_file = TextFile::Open(images);
  const TextFile label_file = TextFile::Open(labels);
  const Idx im = ParseIdx(image_file, 3, "images");
  const Idx lb = ParseIdx(label_file, 1, "labels");
  TESSEL_CHECK(im.dims[0] == lb.dims[0], "{} has {} images but {} has {} labels; give the labels of these images",
               images.string(), im.dims[0], labels.string(), lb.dims[0]);
  TESSEL_CHECK(im.dims[0] < (int64_t{1} << 31), "{}: {} images exceed 32-bit row ids", images.string(), im.dims[0]);
  const int64_t n = im.dims[0];
  const int64_t d = im.dims[1] * im.dims[2];
  TESSEL_CHECK(d <= kMaxSparseRowFeatures, "{}: images of {} x {} = {} pixels exceed 32-bit feature ids (at most {})",
               images.string(), im.dims[1], im.dims[2], d, kMaxSparseRowFeatures);
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::vector<double> values;
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    const auto* px = reinterpret_cast<const uint8_t*>(im.data.data()) + r * d;
    for (int64_t f = 0; f < d; ++f) {
      if (px[f] == 0) continue;
      indices.push_back(static_cast<int32_t>(f));
      values.push_back(static_cast<double>(px[f]) / scale);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
    y[static_cast<size_t>(r)] = static_cast<double>(static_cast<uint8_t>(lb.data[static_cast<size_t>(r)]));
  }
  SparseRowDataset ds;
  ds.name = images.stem().string();
  ds.num_rows = n;
  ds.num_features = d;
  ds.indptr = Buffer<int64_t>(std::move(indptr));
  ds.indices = Buffer<int32_t>(std::move(indices));
  ds.values = Buffer<double>(std::move(values));
  ds.labels = Buffer<double>(std::move(y));
  return ds;
}

void MakeBinaryTask(SparseRowDataset& data, const std::vector<double>& positive, const std::vector<double>& negative) {
  TESSEL_CHECK(!positive.empty(), "the positive class list is empty");
  const auto in = [](const std::vector<double>& set, double v) {
    for (const double p : set)
      if (v == p) return true;
    return false;
  };
  for (const double v : negative) TESSEL_CHECK(!in(positive, v), "class {} is listed as both positive and negative", v);
  const auto y = data.labels.Host();
  std::vector<int64_t> keep;
  std::vector<double> new_y;
  int64_t pos = 0;
  for (int64_t r = 0; r < data.num_rows; ++r) {
    const bool p = in(positive, y[r]);
    if (!p && !negative.empty() && !in(negative, y[r])) continue;  // neither side: dropped
    keep.push_back(r);
    new_y.push_back(p ? 1.0 : -1.0);
    pos += p;
  }
  const auto rows = static_cast<int64_t>(new_y.size());
  TESSEL_CHECK(pos > 0 && pos < rows,
               "{}: the classes given leave {} of {} rows positive; a binary task needs rows of both signs", data.name,
               pos, rows);
  data = SelectRows<int64_t>(data, keep, new_y);
}

}  // namespace tessel::datasets
