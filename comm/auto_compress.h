// Adaptive compression (`--grad-compress auto`, `--feature-compress auto`): the codec that the time model says is
// fastest on the named network, from each candidate's wire bytes and its encode and decode cost measured on this
// machine (docs/compression.md, "Adaptive"). Lossless and lossy candidates alike are judged by time only, so the
// candidates are the codecs whose accuracy cost is measured small (docs/benchmarks.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/compress.h"
#include "comm/net_model.h"

namespace tessel::comm {

// One candidate's predicted cost per unit (a step's gradient, or one feature row).
struct CompressCandidate {
  CompressSpec spec;
  double coding_seconds = 0;   // encode + decode(s), the largest over ranks
  double network_seconds = 0;  // the time model's seconds of its wire bytes (and messages)
  double Seconds() const { return coding_seconds + network_seconds; }
};

struct CompressChoice {
  CompressSpec spec;                          // the fastest candidate
  std::vector<CompressCandidate> candidates;  // all of them, in the order tried
  std::string Summary() const;                // "int8 (0.8 ms: 0.1 coding + 0.7 network; none 2.9 ms, ...)"
};

// The gradient allreduce of `elements` floats once per step on comm.Size() ranks: none and fp16 as one allreduce
// of their wire elements, int8 and top-k (2%, with error feedback) as one allgather of the encoded blocks each rank
// then decodes. Collective (one allreduce of the measured coding times, so every rank chooses alike).
CompressChoice ChooseGradientCompression(Communicator& comm, const NetworkModel& net, int64_t elements);

// One remote feature row of `width` floats in the all-to-all: none, fp16, int8 (a scale per row). Collective.
CompressChoice ChooseFeatureCompression(Communicator& comm, const NetworkModel& net, int64_t width);

}  // namespace tessel::comm
