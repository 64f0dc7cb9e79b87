// The compressed allreduces of comm/compress.h and the METHOD[:PARAM] specs (the codecs are in comm/codec.cc). The
// allreduces keep their residual and scratch buffers between calls.
#include "comm/compress.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/rng.h"

namespace tessel::comm {
namespace {

using Clock = std::chrono::steady_clock;

size_t Ix(int64_t i) { return static_cast<size_t>(i); }

// ---- Compressed allreduces.

// What every compressed allreduce has: its name, whether the network sums its wire, and the counts of a call:
// raw_bytes (the float32s a plain allreduce would send; 0 on one rank) and wire_bytes (the bytes `purpose` moved
// during the call) around the subclass's Reduce, which adds the seconds of its phases; a call that succeeds adds its
// counts to `stats`.
class CountedAllreduce : public CompressedAllreduce {
 public:
  CountedAllreduce(std::string name, bool summable) : name_(std::move(name)), summable_(summable) {}
  std::string Name() const final { return name_; }
  bool Summable() const final { return summable_; }
  Status Allreduce(Communicator& comm, std::span<float> data, uint64_t step, std::string_view purpose,
                   CompressStats* stats) final {
    CompressStats st;
    st.raw_bytes = comm.Size() > 1 ? static_cast<uint64_t>(data.size()) * 4 : 0;
    const uint64_t b0 = comm.Bytes().Bytes(purpose);
    Status s = Reduce(comm, data, step, purpose, &st);
    st.wire_bytes = comm.Bytes().Bytes(purpose) - b0;
    if (s.ok() && stats != nullptr) stats->Add(st);
    return s;
  }

 protected:
  virtual Status Reduce(Communicator& comm, std::span<float> data, uint64_t step, std::string_view purpose,
                        CompressStats* st) = 0;

 private:
  std::string name_;
  bool summable_;
};

// Codec-based: summable wire -> one allreduce; otherwise allgather + decode + sum in rank order. Optional error
// feedback (top-k).
class CodecAllreduce final : public CountedAllreduce {
 public:
  CodecAllreduce(std::unique_ptr<Codec> codec, bool error_feedback, uint64_t seed)
      : CountedAllreduce(std::string(codec->Name()), codec->SumType().has_value()),
        codec_(std::move(codec)),
        ef_(error_feedback),
        seed_(seed) {}

  Status Reduce(Communicator& comm, std::span<float> data, uint64_t step, std::string_view purpose,
                CompressStats* st) override {
    const auto n = static_cast<int64_t>(data.size());
    auto t0 = Clock::now();
    std::span<const float> x = data;
    if (ef_) {
      residual_.resize(Ix(n), 0.0F);
      for (int64_t i = 0; i < n; ++i) residual_[Ix(i)] += data[Ix(i)];  // residual_ now holds x = g + e
      x = residual_;
    }
    const int64_t bytes = codec_->EncodedBytes(n);
    const uint64_t rank_seed = Mix64(seed_ ^ Mix64(step * 1000003ULL + static_cast<uint64_t>(comm.Rank())));
    mine_.resize(Ix(bytes));
    codec_->Encode(x, rank_seed, mine_);
    if (ef_) codec_->SubtractFrom(mine_, residual_);  // e = x - decode(encode(x)); exact for top-k
    st->encode_seconds = SecondsSince(t0);
    Status s;
    if (const std::optional<DataType> type = codec_->SumType()) {
      t0 = Clock::now();
      s = comm.AllreduceRaw(mine_.data(), n, *type, ReduceOp::kSum, purpose);
      st->comm_seconds = SecondsSince(t0);
      if (!s.ok()) return s;
      t0 = Clock::now();
      codec_->Decode(mine_, data, false);
      st->decode_seconds = SecondsSince(t0);
    } else {
      t0 = Clock::now();
      all_.resize(Ix(bytes) * Ix(comm.Size()));
      s = comm.Allgather<std::byte>(std::span<const std::byte>(mine_), std::span<std::byte>(all_), purpose);
      st->comm_seconds = SecondsSince(t0);
      if (!s.ok()) return s;
      t0 = Clock::now();
      std::fill(data.begin(), data.end(), 0.0F);
      for (int r = 0; r < comm.Size(); ++r) {
        codec_->Decode(std::span<const std::byte>(all_).subspan(Ix(bytes) * Ix(r), Ix(bytes)), data, true);
      }
      st->decode_seconds = SecondsSince(t0);
    }
    return s;
  }

 private:
  std::unique_ptr<Codec> codec_;
  bool ef_;
  uint64_t seed_;
  std::vector<float> residual_;
  std::vector<std::byte> mine_, all_;
};

// The shared-index methods' collective: sums `values` (every rank's values at the same indices) over ranks and
// writes the sums at those indices of `data`, zero elsewhere; adds the seconds to *st.
Status SumAtIndices(Communicator& comm, std::span<const uint32_t> idx, std::vector<float>& values,
                    std::span<float> data, std::string_view purpose, CompressStats* st) {
  auto t0 = Clock::now();
  Status s = comm.Allreduce<float>(values, ReduceOp::kSum, purpose);
  st->comm_seconds += SecondsSince(t0);
  if (!s.ok()) return s;
  t0 = Clock::now();
  std::fill(data.begin(), data.end(), 0.0F);
  for (size_t j = 0; j < idx.size(); ++j) data[idx[j]] = values[j];
  st->decode_seconds += SecondsSince(t0);
  return s;
}

// Random-k with a shared seed: every rank draws the same indices, so the values are summable.
class RandomKAllreduce final : public CountedAllreduce {
 public:
  RandomKAllreduce(double ratio, uint64_t seed) : CountedAllreduce("randk", true), ratio_(ratio), seed_(seed) {}
  Status Reduce(Communicator& comm, std::span<float> data, uint64_t step, std::string_view purpose,
                CompressStats* st) override {
    const auto n = static_cast<int64_t>(data.size());
    auto t0 = Clock::now();
    const int64_t k = KeepCount(n, ratio_);
    const std::vector<uint32_t> idx = RandomKIndices(n, k, Mix64(seed_ ^ Mix64(step)));
    const float scale = k > 0 ? static_cast<float>(static_cast<double>(n) / static_cast<double>(k)) : 0.0F;
    values_.resize(Ix(k));
    for (int64_t j = 0; j < k; ++j) values_[Ix(j)] = data[idx[Ix(j)]] * scale;
    st->encode_seconds = SecondsSince(t0);
    return SumAtIndices(comm, idx, values_, data, purpose, st);
  }

 private:
  double ratio_;
  uint64_t seed_;
  std::vector<float> values_;
};

// ScaleCom's cyclic local top-k: the leader (step mod P) broadcasts the indices of its top-k of (g + e); every rank
// sends its (g + e) at those indices through one allreduce and keeps the rest as residual.
class CltKAllreduce final : public CountedAllreduce {
 public:
  explicit CltKAllreduce(double ratio) : CountedAllreduce("cltk", true), ratio_(ratio) {}
  Status Reduce(Communicator& comm, std::span<float> data, uint64_t step, std::string_view purpose,
                CompressStats* st) override {
    const auto n = static_cast<int64_t>(data.size());
    auto t0 = Clock::now();
    residual_.resize(Ix(n), 0.0F);
    for (int64_t i = 0; i < n; ++i) residual_[Ix(i)] += data[Ix(i)];
    const int64_t k = KeepCount(n, ratio_);
    const int leader = static_cast<int>(step % static_cast<uint64_t>(comm.Size()));
    if (comm.Rank() == leader) {
      idx_ = TopKIndices(residual_, k);
    } else {
      idx_.assign(Ix(k), 0);
    }
    st->encode_seconds = SecondsSince(t0);
    t0 = Clock::now();
    Status s = comm.Broadcast<uint32_t>(idx_, leader, purpose);
    st->comm_seconds = SecondsSince(t0);
    if (!s.ok()) return s;
    t0 = Clock::now();
    values_.resize(Ix(k));
    for (int64_t j = 0; j < k; ++j) {
      TESSEL_CHECK(idx_[Ix(j)] < static_cast<uint64_t>(n), "cltk: leader index {} out of range", idx_[Ix(j)]);
      float& e = residual_[idx_[Ix(j)]];
      values_[Ix(j)] = e;
      e = 0;  // sent in full: nothing left over
    }
    st->encode_seconds += SecondsSince(t0);
    s = SumAtIndices(comm, idx_, values_, data, purpose, st);
    return s;
  }

 private:
  double ratio_;
  std::vector<float> residual_, values_;
  std::vector<uint32_t> idx_;
};

// PowerSGD, rank r, one power iteration per step with Q warm-started (Vogels, Karimireddy, Jaggi 2019).
class PowerSgdAllreduce final : public CountedAllreduce {
 public:
  PowerSgdAllreduce(int rank, const std::vector<MatrixShape>& shapes, uint64_t seed)
      : CountedAllreduce("powersgd", true), r_(rank), seed_(seed) {
    int64_t off = 0;
    for (const MatrixShape& m : shapes) {
      TESSEL_CHECK(m.rows >= 0 && m.cols >= 0, "powersgd: a matrix of {} x {}", m.rows, m.cols);
      const bool compress = std::min(m.rows, m.cols) > r_ && (m.rows + m.cols) * r_ < m.rows * m.cols;
      mats_.push_back({off, m.rows, m.cols, compress, {}});
      off += m.rows * m.cols;
    }
    total_ = off;
  }

  Status Reduce(Communicator& comm, std::span<float> data, uint64_t, std::string_view purpose,
                CompressStats* st) override {
    const auto n = static_cast<int64_t>(data.size());
    if (mats_.empty()) {  // no layout given: one row vector, sent uncompressed
      mats_.push_back({0, 1, n, false, {}});
      total_ = n;
    }
    TESSEL_CHECK(n == total_, "powersgd: the buffer has {} elements, the matrix shapes {}", n, total_);
    auto t0 = Clock::now();
    residual_.resize(Ix(n), 0.0F);
    for (int64_t i = 0; i < n; ++i) residual_[Ix(i)] += data[Ix(i)];  // M = g + e
    // First message: every P = M Q, then the uncompressed matrices.
    buf_.clear();
    for (size_t mi = 0; mi < mats_.size(); ++mi) {
      Mat& m = mats_[mi];
      if (!m.compress) continue;
      if (m.q.empty()) {  // the same start on every rank: drawn from the shared seed
        m.q.resize(Ix(m.cols * r_));
        Rng rng(Mix64(seed_ ^ Mix64(mi)));
        for (float& v : m.q) v = static_cast<float>(rng.Uniform() * 2.0 - 1.0);
      }
      const size_t p0 = buf_.size();
      buf_.resize(p0 + Ix(m.rows * r_), 0.0F);
      AddProduct(residual_.data() + m.off, m, m.q.data(), false, buf_.data() + p0);
    }
    for (const Mat& m : mats_) {
      if (m.compress) continue;
      buf_.insert(buf_.end(), residual_.begin() + m.off, residual_.begin() + m.off + m.rows * m.cols);
      std::fill(residual_.begin() + m.off, residual_.begin() + m.off + m.rows * m.cols, 0.0F);  // sent in full
    }
    st->encode_seconds = SecondsSince(t0);
    t0 = Clock::now();
    Status s = comm.Allreduce<float>(buf_, ReduceOp::kSum, purpose);
    st->comm_seconds = SecondsSince(t0);
    if (!s.ok()) return s;
    t0 = Clock::now();
    // Orthonormalise each P (identical on every rank: same input, same order), then Q = M^T P locally.
    size_t pos = 0;
    qbuf_.clear();
    for (Mat& m : mats_) {
      if (!m.compress) continue;
      float* P = buf_.data() + pos;
      Orthonormalise(P, m.rows);
      const size_t q0 = qbuf_.size();
      qbuf_.resize(q0 + Ix(m.cols * r_), 0.0F);
      AddProduct(residual_.data() + m.off, m, P, true, qbuf_.data() + q0);
      // e = M - P (M^T P)^T: the part of this rank's M outside span(P), which no rank sends.
      float* E = residual_.data() + m.off;
      for (int64_t i = 0; i < m.rows; ++i) {
        for (int64_t j = 0; j < m.cols; ++j) {
          float approx = 0;
          for (int c = 0; c < r_; ++c) approx += P[i * r_ + c] * qbuf_[q0 + Ix(j * r_ + c)];
          E[i * m.cols + j] -= approx;
        }
      }
      pos += Ix(m.rows * r_);
    }
    // The uncompressed matrices arrive summed.
    for (const Mat& m : mats_) {
      if (m.compress) continue;
      std::copy_n(buf_.begin() + static_cast<std::ptrdiff_t>(pos), m.rows * m.cols, data.begin() + m.off);
      pos += Ix(m.rows * m.cols);
    }
    st->encode_seconds += SecondsSince(t0);
    if (!qbuf_.empty()) {
      t0 = Clock::now();
      s = comm.Allreduce<float>(qbuf_, ReduceOp::kSum, purpose);
      st->comm_seconds += SecondsSince(t0);
      if (!s.ok()) return s;
    }
    t0 = Clock::now();
    pos = 0;
    size_t qpos = 0;
    for (Mat& m : mats_) {
      if (!m.compress) continue;
      const float* P = buf_.data() + pos;
      const float* Q = qbuf_.data() + qpos;
      float* D = data.data() + m.off;
      for (int64_t i = 0; i < m.rows; ++i) {
        for (int64_t j = 0; j < m.cols; ++j) {
          float v = 0;
          for (int c = 0; c < r_; ++c) v += P[i * r_ + c] * Q[j * r_ + c];
          D[i * m.cols + j] = v;
        }
      }
      m.q.assign(Q, Q + m.cols * r_);  // warm start
      pos += Ix(m.rows * r_);
      qpos += Ix(m.cols * r_);
    }
    st->decode_seconds = SecondsSince(t0);
    return s;
  }

 private:
  struct Mat {
    int64_t off, rows, cols;
    bool compress;
    std::vector<float> q;  // cols x r, the previous step's summed Q
  };

  // out += M f (rows x r; f is cols x r) or, transposed, out += M^T f (cols x r; f is rows x r), for the rows x cols
  // matrix M of m: one pass over M in row order, each float sum in that order.
  void AddProduct(const float* M, const Mat& m, const float* f, bool transpose, float* out) const {
    for (int64_t i = 0; i < m.rows; ++i) {
      for (int64_t j = 0; j < m.cols; ++j) {
        const float v = M[i * m.cols + j];
        const int64_t o = (transpose ? j : i) * r_;
        const int64_t g = (transpose ? i : j) * r_;
        for (int c = 0; c < r_; ++c) out[o + c] += v * f[g + c];
      }
    }
  }

  // Modified Gram-Schmidt over the r columns of P (rows x r, row-major), in double; a column that vanishes stays 0.
  void Orthonormalise(float* P, int64_t rows) const {
    for (int c = 0; c < r_; ++c) {
      for (int d = 0; d < c; ++d) {
        double dot = 0;
        for (int64_t i = 0; i < rows; ++i) dot += static_cast<double>(P[i * r_ + c]) * P[i * r_ + d];
        for (int64_t i = 0; i < rows; ++i) P[i * r_ + c] -= static_cast<float>(dot) * P[i * r_ + d];
      }
      double norm = 0;
      for (int64_t i = 0; i < rows; ++i) norm += static_cast<double>(P[i * r_ + c]) * P[i * r_ + c];
      norm = std::sqrt(norm);
      const float inv = norm > 1e-30 ? static_cast<float>(1.0 / norm) : 0.0F;
      for (int64_t i = 0; i < rows; ++i) P[i * r_ + c] *= inv;
    }
  }

  int r_;
  uint64_t seed_;
  std::vector<Mat> mats_;
  int64_t total_ = 0;
  std::vector<float> residual_, buf_, qbuf_;
};

// The compression methods, indexed by CompressMethod's value (compress.h, CompressMethodInfo).
constexpr std::array<CompressMethodInfo, 9> kMethods{{
    {CompressMethod::kNone, "none", CompressParam::kNone, "none"},
    {CompressMethod::kFp16, "fp16", CompressParam::kNone, "fp16"},
    {CompressMethod::kBf16, "bf16", CompressParam::kNone, "bf16"},
    {CompressMethod::kInt8, "int8", CompressParam::kBlock, "int8"},
    {CompressMethod::kQsgd, "qsgd", CompressParam::kLevels, "qsgd[:LEVELS]"},
    {CompressMethod::kTopK, "topk", CompressParam::kRatio, ""},
    {CompressMethod::kRandK, "randk", CompressParam::kRatio, ""},
    {CompressMethod::kCltK, "cltk", CompressParam::kRatio, ""},
    {CompressMethod::kPowerSgd, "powersgd", CompressParam::kRank, ""},
}};
static_assert(kMethods.size() == static_cast<size_t>(CompressMethod::kPowerSgd) + 1);
static_assert([] {
  for (size_t i = 0; i < kMethods.size(); ++i) {
    if (static_cast<size_t>(kMethods[i].method) != i) return false;
  }
  return true;
}());

double ParseNumber(std::string_view s, std::string_view what, std::string_view flag, std::string_view text) {
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  TESSEL_CHECK(ec == std::errc() && p == s.data() + s.size() && std::isfinite(v),
               "{} {}: '{}' is not a number (the {}; forms: {})", flag, text, s, what, CompressForms());
  return v;
}

}  // namespace

const CompressMethodInfo& MethodInfo(CompressMethod m) {
  const auto i = static_cast<size_t>(m);
  TESSEL_CHECK(i < kMethods.size(), "compression method {} is not in the table", i);
  return kMethods[i];
}

std::string CompressForms() {
  // The form of each CompressParam, indexed by its value.
  static constexpr std::array<std::string_view, 5> kSuffix{"", "[:BLOCK]", "[:LEVELS]", "[:RATIO]", "[:RANK]"};
  std::string out;
  for (const CompressMethodInfo& info : kMethods) {
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", info.name, kSuffix[static_cast<size_t>(info.param)]);
  }
  return out;
}

bool TakesRows(CompressMethod m) { return !MethodInfo(m).row_form.empty(); }

std::string RowCodecForms(bool names_only) {
  std::vector<std::string_view> forms;
  for (const CompressMethodInfo& info : kMethods) {
    if (!info.row_form.empty()) forms.push_back(names_only ? info.name : info.row_form);
  }
  std::string out;
  for (size_t i = 0; i < forms.size(); ++i) {
    out += i == 0 ? "" : i + 1 == forms.size() ? " or " : ", ";
    out += forms[i];
  }
  return out;
}

std::string_view CompressMethodName(CompressMethod m) {
  const auto i = static_cast<size_t>(m);
  return i < kMethods.size() ? kMethods[i].name : "?";
}

CompressOption CompressOption::FromText(std::string_view text, std::string_view option) {
  if (text == "auto") return {.automatic = true};
  return {.spec = CompressSpec::Parse(text, option)};
}

CompressSpec CompressSpec::Parse(std::string_view text, std::string_view flag) {
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::optional<std::string_view> param =
      colon == std::string_view::npos ? std::nullopt : std::optional(text.substr(colon + 1));
  CompressSpec s;
  const auto* info = std::find_if(kMethods.begin(), kMethods.end(), [&](const auto& m) { return m.name == name; });
  TESSEL_CHECK(info != kMethods.end(), "{} {}: unknown method '{}' (one of {})", flag, text, name, CompressForms());
  s.method = info->method;
  if (!param) return s;
  switch (info->param) {
    case CompressParam::kBlock: {
      const double v = ParseNumber(*param, "block size", flag, text);
      TESSEL_CHECK(v >= 1 && v <= 1e9 && v == std::floor(v), "{} {}: the block must be a whole number >= 1", flag,
                   text);
      s.block = static_cast<int64_t>(v);
      return s;
    }
    case CompressParam::kLevels: {
      const double v = ParseNumber(*param, "level count", flag, text);
      TESSEL_CHECK(v >= 1 && v <= 127 && v == std::floor(v),
                   "{} {}: QSGD levels must be a whole number in 1..127 (15 = 5 bits per element)", flag, text);
      s.levels = static_cast<int>(v);
      return s;
    }
    case CompressParam::kRatio: {
      const double v = ParseNumber(*param, "share of elements kept", flag, text);
      TESSEL_CHECK(v > 0 && v <= 1, "{} {}: the ratio must be in (0, 1] (0.01 keeps 1% of the elements)", flag, text);
      s.ratio = v;
      return s;
    }
    case CompressParam::kRank: {
      const double v = ParseNumber(*param, "rank", flag, text);
      TESSEL_CHECK(v >= 1 && v <= 1024 && v == std::floor(v), "{} {}: the PowerSGD rank must be a whole number >= 1",
                   flag, text);
      s.rank = static_cast<int>(v);
      return s;
    }
    case CompressParam::kNone:
      break;
  }
  throw Error(fmt::format("{} {}: {} takes no parameter (forms: {})", flag, text, name, CompressForms()));
}

std::string CompressSpec::ToString() const {
  const std::string_view name = CompressMethodName(method);
  switch (MethodInfo(method).param) {
    case CompressParam::kBlock:
      return block > 0 ? fmt::format("{}:{}", name, block) : std::string(name);
    case CompressParam::kLevels:
      return fmt::format("{}:{}", name, levels);
    case CompressParam::kRatio:
      return fmt::format("{}:{}", name, ratio);
    case CompressParam::kRank:
      return fmt::format("{}:{}", name, rank);
    case CompressParam::kNone:
      break;
  }
  return std::string(name);
}

void CompressStats::Add(const CompressStats& o) {
  raw_bytes += o.raw_bytes;
  wire_bytes += o.wire_bytes;
  encode_seconds += o.encode_seconds;
  decode_seconds += o.decode_seconds;
  comm_seconds += o.comm_seconds;
}

std::vector<uint32_t> RandomKIndices(int64_t n, int64_t k, uint64_t seed) {
  TESSEL_CHECK(n >= 0 && n <= static_cast<int64_t>(UINT32_MAX) && k >= 0 && k <= n, "randk: k {} of n {}", k, n);
  std::vector<uint32_t> idx;
  if (2 * k > n) {  // dense: a partial Fisher-Yates shuffle
    idx.resize(Ix(n));
    std::iota(idx.begin(), idx.end(), 0U);
    Rng rng(seed);
    for (int64_t i = 0; i < k; ++i) {
      const auto j = i + static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n - i)));
      std::swap(idx[Ix(i)], idx[Ix(j)]);
    }
    idx.resize(Ix(k));
  } else {  // Floyd's algorithm: k draws
    std::unordered_set<uint32_t> chosen;
    chosen.reserve(Ix(k) * 2);
    Rng rng(seed);
    for (int64_t j = n - k; j < n; ++j) {
      const auto t = static_cast<uint32_t>(rng.UniformInt(static_cast<uint64_t>(j + 1)));
      if (!chosen.insert(t).second) chosen.insert(static_cast<uint32_t>(j));
    }
    idx.assign(chosen.begin(), chosen.end());
  }
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::unique_ptr<CompressedAllreduce> MakeCompressedAllreduce(const CompressSpec& spec,
                                                             const std::vector<MatrixShape>& shapes, uint64_t seed) {
  switch (spec.method) {
    case CompressMethod::kRandK:
      return std::make_unique<RandomKAllreduce>(spec.ratio, seed);
    case CompressMethod::kCltK:
      return std::make_unique<CltKAllreduce>(spec.ratio);
    case CompressMethod::kPowerSgd:
      return std::make_unique<PowerSgdAllreduce>(spec.rank, shapes, seed);
    default:
      return std::make_unique<CodecAllreduce>(MakeCodec(spec, 256), spec.method == CompressMethod::kTopK, seed);
  }
}

}  // namespace tessel::comm
