// ChooseGradientCompression, ChooseFeatureCompression (auto_compress.h): candidates timed on random data, costed by
// the alpha-beta model of the collective they use (docs/comm.md, "Time model").
#include "comm/auto_compress.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <memory>
#include <span>

#include <fmt/format.h>

#include "core/error.h"
#include "core/rng.h"

namespace tessel::comm {
namespace {

using Clock = std::chrono::steady_clock;

int Log2Ceil(int p) { return p <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1))); }

// Gaussian-like floats (the sum of two uniforms) from a fixed stream: gradients and feature values alike.
std::vector<float> SampleData(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  uint64_t s = 0x6175746fULL;
  for (float& v : x) {
    s = Mix64(s + 1);
    const double a = static_cast<double>(s >> 11) * 0x1.0p-53;
    const double b = static_cast<double>(Mix64(s) >> 11) * 0x1.0p-53;
    v = static_cast<float>(a + b - 1.0);
  }
  return x;
}

// Seconds of one encode of `x` and `decodes` decodes, the fastest of a few repetitions (at least 3, or 5 ms).
double CodingSeconds(const Codec& codec, std::span<const float> x, int decodes) {
  std::vector<std::byte> wire(static_cast<size_t>(codec.EncodedBytes(static_cast<int64_t>(x.size()))));
  std::vector<float> out(x.size());
  double best = 1e300;
  const auto start = Clock::now();
  for (int rep = 0; rep < 50 && (rep < 3 || Clock::now() - start < std::chrono::milliseconds(5)); ++rep) {
    const auto t0 = Clock::now();
    codec.Encode(x, static_cast<uint64_t>(rep), wire);
    for (int d = 0; d < decodes; ++d) codec.Decode(wire, out, d > 0);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// Agrees on the coding times (largest over ranks) and picks the cheapest; ties to the earlier candidate.
CompressChoice Pick(Communicator& comm, std::vector<CompressCandidate> candidates) {
  std::vector<double> coding;
  for (const CompressCandidate& c : candidates) coding.push_back(c.coding_seconds);
  comm.Allreduce<double>(coding, ReduceOp::kMax, "setup").ThrowIfError();
  CompressChoice choice;
  size_t best = 0;
  for (size_t k = 0; k < candidates.size(); ++k) {
    candidates[k].coding_seconds = coding[k];
    if (candidates[k].Seconds() < candidates[best].Seconds()) best = k;
  }
  choice.spec = candidates[best].spec;
  choice.candidates = std::move(candidates);
  return choice;
}

}  // namespace

std::string CompressChoice::Summary() const {
  std::string others;
  const CompressCandidate* chosen = nullptr;
  for (const CompressCandidate& c : candidates) {
    if (c.spec == spec && chosen == nullptr) {
      chosen = &c;
      continue;
    }
    others += fmt::format("{}{} {:.3g} ms", others.empty() ? "" : ", ", c.spec.ToString(), 1e3 * c.Seconds());
  }
  TESSEL_CHECK(chosen != nullptr, "CompressChoice: the chosen codec is not among the candidates");
  return fmt::format("{} ({:.3g} ms: {:.3g} coding + {:.3g} network; {})", spec.ToString(), 1e3 * chosen->Seconds(),
                     1e3 * chosen->coding_seconds, 1e3 * chosen->network_seconds, others);
}

CompressChoice ChooseGradientCompression(Communicator& comm, const NetworkModel& net, int64_t elements) {
  TESSEL_CHECK(elements > 0, "ChooseGradientCompression: {} elements", elements);
  const int p = comm.Size();
  const std::vector<float> x = SampleData(elements);
  std::vector<CompressCandidate> candidates;
  for (const char* text : {"none", "fp16", "int8", "topk:0.02"}) {
    CompressCandidate c;
    c.spec = CompressSpec::Parse(text, "--grad-compress");
    const std::unique_ptr<Codec> codec = MakeCodec(c.spec, 256);
    const auto wire = static_cast<double>(codec->EncodedBytes(elements));
    CallCost cost;
    if (c.spec.method == CompressMethod::kNone || c.spec.method == CompressMethod::kFp16) {
      // One allreduce of the wire elements (ring / Rabenseifner), as comm.md's table counts it.
      cost.latency = 2.0 * Log2Ceil(p);
      cost.volume = 2.0 * (p - 1) / p * wire;
      c.coding_seconds = c.spec.method == CompressMethod::kNone ? 0.0 : CodingSeconds(*codec, x, 1);
    } else {
      // One allgather of every rank's encoded block, then P decodes.
      cost.latency = p - 1;
      cost.volume = (p - 1) * wire;
      c.coding_seconds = CodingSeconds(*codec, x, p);
    }
    c.network_seconds = net.Seconds(cost, p);
    candidates.push_back(c);
  }
  return Pick(comm, std::move(candidates));
}

CompressChoice ChooseFeatureCompression(Communicator& comm, const NetworkModel& net, int64_t width) {
  TESSEL_CHECK(width > 0, "ChooseFeatureCompression: rows of width {}", width);
  const int p = comm.Size();
  // Timed over a block of rows (one row alone is below the clock's resolution), costed per row.
  constexpr int64_t kRows = 256;
  const std::vector<float> x = SampleData(kRows * width);
  std::vector<CompressCandidate> candidates;
  for (const char* text : {"none", "fp16", "int8"}) {
    CompressCandidate c;
    c.spec = CompressSpec::Parse(text, "--feature-compress");
    const std::unique_ptr<Codec> codec = MakeCodec(c.spec, width);  // int8: one scale per row
    // The whole block as one span (int8's block is a row, so one scale per row as in the exchange).
    if (c.spec.method != CompressMethod::kNone) c.coding_seconds = CodingSeconds(*codec, x, 1) / kRows;
    CallCost cost;
    cost.volume = static_cast<double>(codec->EncodedBytes(width));  // a row crosses the all-to-all once
    c.network_seconds = net.Seconds(cost, p);
    candidates.push_back(c);
  }
  return Pick(comm, std::move(candidates));
}

}  // namespace tessel::comm
