// Compression of what crosses the network (docs/compression.md): codecs that turn a float span into wire bytes and
// back, and compressed allreduces of gradients that pick their collective by whether the encoded form can be summed.
//
// Codecs (stateless, thread-safe): none (float32), fp16, bf16, int8 (one float scale per block), QSGD (s levels,
// stochastic rounding, one L2 norm per block; unbiased; Alistarh et al. 2017) and top-k (index, value pairs of the
// k largest magnitudes). Every codec's size is exact and known from the element count alone, so receivers never
// need a count exchange.
//
// Compressed allreduces (stateful: error-feedback residuals and warm starts live in them; one per gradient
// buffer and rank):
//   - a codec whose encoded form is summable (none, fp16, bf16) goes through one allreduce of the wire elements;
//   - the others (int8, QSGD, top-k) through one allgather of the encoded blocks, then every rank decodes and sums
//     them in rank order (so all ranks hold bit-identical results);
//   - random-k: k indices drawn from a seed shared by all ranks, values scaled by n/k (unbiased), one allreduce of
//     the k values;
//   - CLT-k (ScaleCom, Chen et al. 2020): a leader that rotates every step picks its top-k indices and broadcasts
//     them; every rank sends its values at those indices through one allreduce; error feedback;
//   - PowerSGD rank r (Vogels et al. 2019): per weight matrix M, P = M Q, allreduce P, orthonormalise, Q = M^T P,
//     allreduce Q, M ~ P Q^T; error feedback and Q warm-started from the previous step; vectors and matrices too
//     small to gain go uncompressed in the first allreduce.
// Top-k, CLT-k and PowerSGD keep error feedback (Karimireddy et al. 2019): what a step did not send is added to the
// next step's input, so transmitted + residual == input (exactly for top-k and CLT-k).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"

namespace tessel::comm {

enum class CompressMethod : uint8_t { kNone, kFp16, kBf16, kInt8, kQsgd, kTopK, kRandK, kCltK, kPowerSgd };

// "METHOD[:PARAM]" as given to --grad-compress / --feature-compress:
//   none | fp16 | bf16 | int8[:BLOCK] | qsgd[:LEVELS] | topk[:RATIO] | randk[:RATIO] | cltk[:RATIO] | powersgd[:RANK]
struct CompressSpec {
  CompressMethod method = CompressMethod::kNone;
  int64_t block = 0;    // int8 / qsgd: elements per scale; 0 = the caller's default (256 for gradients, a row)
  int levels = 15;      // qsgd: quantisation levels s, 1..127 (15: 5 bits per element)
  double ratio = 0.01;  // topk / randk / cltk: share of the elements sent, in (0, 1]
  int rank = 4;         // powersgd: rank r >= 1

  // Throws tessel::Error naming `flag`, the text and the accepted forms.
  static CompressSpec Parse(std::string_view text, std::string_view flag);
  std::string ToString() const;  // the canonical METHOD[:PARAM] (Parse(ToString()) == *this)
  bool operator==(const CompressSpec&) const = default;
};

// A --grad-compress or --feature-compress value, parsed once where the option is read: a codec, or auto (the codec
// the time model finds fastest on --network's link, chosen at set-up: comm/auto_compress.h).
struct CompressOption {
  bool automatic = false;
  CompressSpec spec = {};  // the codec (none until auto has chosen)

  // "auto" or a codec's text (CompressSpec::Parse); throws naming `option`.
  static CompressOption FromText(std::string_view text, std::string_view option);
  std::string Text() const { return automatic ? std::string("auto") : spec.ToString(); }
  bool operator==(const CompressOption&) const = default;
};

// The one table of the compression methods (compress.cc kMethods), which the parser, ToString, the row-codec rule of
// --feature-compress and the messages read: a new method is its enum value, its row here, and its constructor
// (MakeCodec for an elementwise codec, MakeCompressedAllreduce for an allreduce of its own).
enum class CompressParam : uint8_t { kNone, kBlock, kLevels, kRatio, kRank };  // what METHOD:PARAM sets
struct CompressMethodInfo {
  CompressMethod method;
  std::string_view name;
  CompressParam param;
  // Feature rows take it (--feature-compress: a Codec with one scale per row), written in messages as this form
  // ("" = gradients only).
  std::string_view row_form;
};
const CompressMethodInfo& MethodInfo(CompressMethod m);
// Whether feature rows (--feature-compress) take `m`.
bool TakesRows(CompressMethod m);
// The row codecs' forms as a list for messages: "none, fp16, bf16, int8 or qsgd[:LEVELS]" (names_only: "..., int8 or
// qsgd").
std::string RowCodecForms(bool names_only = false);

std::string_view CompressMethodName(CompressMethod m);
// Every method's form, "none, fp16, bf16, int8[:BLOCK], qsgd[:LEVELS], topk[:RATIO], ...", from the table (for
// messages).
std::string CompressForms();

// A float <-> bytes codec. Sizes are exact: Encode writes EncodedBytes(x.size()) bytes.
class Codec {
 public:
  virtual ~Codec() = default;
  virtual std::string_view Name() const = 0;
  virtual int64_t EncodedBytes(int64_t n) const = 0;
  // `seed` drives stochastic rounding (QSGD): the same (x, seed) gives the same bytes.
  virtual void Encode(std::span<const float> x, uint64_t seed, std::span<std::byte> wire) const = 0;
  // Decodes out.size() elements from wire (EncodedBytes(out.size()) bytes); accumulate: out += decoded.
  virtual void Decode(std::span<const std::byte> wire, std::span<float> out, bool accumulate) const = 0;
  // x -= decode(wire) (x.size() elements): the error-feedback update. The default decodes into a scratch vector;
  // sparse codecs touch only what they sent.
  virtual void SubtractFrom(std::span<const std::byte> wire, std::span<float> x) const;
  // When set, the wire is an array of n elements of this type and the elementwise sum of encoded forms decodes to
  // the sum of the inputs (rounded): a plain allreduce can sum them.
  virtual std::optional<DataType> SumType() const { return std::nullopt; }
};

// Codecs of spec.method none, fp16, bf16, int8, qsgd and topk; `default_block` is the int8/qsgd block when
// spec.block is 0. Throws for the methods that are not codecs (randk, cltk, powersgd: allreduce-only).
std::unique_ptr<Codec> MakeCodec(const CompressSpec& spec, int64_t default_block);

// What compressed collectives cost a rank; the calls add to it.
struct CompressStats {
  uint64_t raw_bytes = 0;   // what the uncompressed (float32) collective would have counted on this rank
  uint64_t wire_bytes = 0;  // what the compressed one counted (comm::ByteCounter, same purpose)
  double encode_seconds = 0;
  double decode_seconds = 0;
  double comm_seconds = 0;  // inside the collectives (waiting for peers included)
  void Add(const CompressStats& o);
};

// Rows x cols of one weight matrix in a gradient buffer (PowerSGD compresses each matrix on its own).
struct MatrixShape {
  int64_t rows = 0;
  int64_t cols = 0;
};

// The sum over ranks of a float buffer, compressed. Every rank calls Allreduce with the same size and step, in the
// same order (it is a collective); every rank ends with the same values. Failure semantics are those of the
// communicator: a failed Status when a peer fails or leaves.
class CompressedAllreduce {
 public:
  virtual ~CompressedAllreduce() = default;
  virtual std::string Name() const = 0;
  // Whether the encoded form is summed by the network (allreduce) or gathered and summed after decoding.
  virtual bool Summable() const = 0;
  // data: the concatenation of the matrices of `shapes` given at construction (or any layout when no shapes were
  // given). `step` numbers the calls (the same on every rank): CLT-k's leader, random-k's and QSGD's draws.
  virtual Status Allreduce(Communicator& comm, std::span<float> data, uint64_t step, std::string_view purpose,
                           CompressStats* stats) = 0;
};

// `shapes` describe data's layout (PowerSGD needs it; the others ignore it); `seed` keys every random draw (the same
// on every rank). The residuals start at zero.
std::unique_ptr<CompressedAllreduce> MakeCompressedAllreduce(const CompressSpec& spec,
                                                             const std::vector<MatrixShape>& shapes, uint64_t seed);

// Indices of the k largest |x| (ties: the smaller index), ascending. Exposed for tests.
std::vector<uint32_t> TopKIndices(std::span<const float> x, int64_t k);
// k distinct indices in [0, n), ascending, drawn from `seed` (Floyd's algorithm). Exposed for tests.
std::vector<uint32_t> RandomKIndices(int64_t n, int64_t k, uint64_t seed);
// k for a ratio: ceil(ratio * n), at least 1 when n > 0, at most n.
int64_t KeepCount(int64_t n, double ratio);

}  // namespace tessel::comm
