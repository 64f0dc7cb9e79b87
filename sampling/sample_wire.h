// The distributed sampler's wire format (sampling/dist_sampler.cc): what a rank asks an owner for and what the owner
// answers, compact and lossless. Exposed for tests (tests/sampling/sample_wire_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/error.h"
#include "core/varint.h"

namespace tessel::sampling {

// A served row in memory: one header {row's global id, GCN self weight, number of picks} followed by that many picks
// {neighbour's global id, weight, 0}.
struct WireEntry {
  int64_t node = 0;
  float weight = 0;
  int32_t count = 0;
};

// The compact wire format of the sampling exchange (lossless: the blocks are those of 16-byte entries and 8-byte
// ids). A request to one owner: each requested global id as the zigzag varint of its difference from the previous
// one (the first from the owner's first global id), so ids near each other cost one or two bytes.
inline void EncodeIds(std::span<const int64_t> ids, int64_t base, std::vector<std::byte>* out) {
  int64_t prev = base;
  for (const int64_t g : ids) {
    AppendVarint(out, ZigZag(g - prev));
    prev = g;
  }
}

// Decodes EncodeIds' bytes [begin, end) of data into out; throws naming the rank on a malformed request.
inline void DecodeIds(const std::byte* data, int64_t begin, int64_t end, int64_t base, int rank,
                      std::vector<int64_t>* out) {
  int64_t prev = base;
  for (int64_t pos = begin; pos < end;) {
    uint64_t v = 0;
    TESSEL_CHECK(GetVarint(data, &pos, end, &v), "sampling: rank {} sent a truncated or malformed request", rank);
    prev += UnZigZag(v);
    out->push_back(prev);
  }
}

// An answer to one requester: per requested row (in request order) varint(picks x 2 + same), with `gcn` the
// row's self weight (float32), the picks' weights (one float32 when all are bitwise equal, flagged by same; else one
// each), then the picks' global ids as zigzag varint differences (the first from the row's own id). The row's id is
// not sent: the requester knows what it asked for.
inline void EncodeAnswer(std::span<const WireEntry> entries, bool gcn, std::vector<std::byte>* out) {
  const auto put_float = [out](float f) {
    const size_t at = out->size();
    out->resize(at + sizeof f);
    std::memcpy(out->data() + at, &f, sizeof f);
  };
  for (size_t at = 0; at < entries.size();) {
    const WireEntry& h = entries[at];
    const auto n = static_cast<size_t>(h.count);
    TESSEL_CHECK(h.count >= 0 && at + 1 + n <= entries.size(), "sampling: a served row of {} picks overruns its answer",
                 h.count);
    const std::span<const WireEntry> picks = entries.subspan(at + 1, n);
    bool same = n > 0;
    for (const WireEntry& e : picks) same = same && std::memcmp(&e.weight, &picks[0].weight, sizeof e.weight) == 0;
    AppendVarint(out, static_cast<uint64_t>(n) * 2 + (same ? 1 : 0));
    if (gcn) put_float(h.weight);
    if (same) {
      put_float(picks[0].weight);
    } else {
      for (const WireEntry& e : picks) put_float(e.weight);
    }
    int64_t prev = h.node;
    for (const WireEntry& e : picks) {
      AppendVarint(out, ZigZag(e.node - prev));
      prev = e.node;
    }
    at += 1 + n;
  }
}

// Decodes EncodeAnswer's bytes [begin, end) for the rows `asked` (in request order) back into entries appended to
// out; throws naming the owner on a malformed or short answer.
inline void DecodeAnswer(const std::byte* data, int64_t begin, int64_t end, std::span<const int64_t> asked, bool gcn,
                         int owner, std::vector<WireEntry>* out) {
  int64_t pos = begin;
  const auto get_float = [&] {
    TESSEL_CHECK(pos + 4 <= end, "sampling: rank {} sent a truncated answer", owner);
    float f = 0;
    std::memcpy(&f, data + pos, sizeof f);
    pos += 4;
    return f;
  };
  for (const int64_t row : asked) {
    uint64_t head = 0;
    TESSEL_CHECK(GetVarint(data, &pos, end, &head), "sampling: rank {} sent a truncated answer for node {}", owner,
                 row);
    const uint64_t n = head / 2;
    const bool same = (head & 1) != 0;
    // Every pick takes at least one byte: a count beyond what is left is malformed (checked before allocating).
    TESSEL_CHECK(n <= static_cast<uint64_t>(end - pos) && n < (uint64_t{1} << 31),
                 "sampling: rank {} sent {} picks for node {} in a {}-byte answer", owner, n, row, end - begin);
    const float self = gcn ? get_float() : 0.0F;
    out->push_back(WireEntry{row, self, static_cast<int32_t>(n)});
    const size_t first = out->size();
    const float shared = same ? get_float() : 0.0F;
    for (uint64_t q = 0; q < n; ++q) out->push_back(WireEntry{0, same ? shared : get_float(), 0});
    int64_t prev = row;
    for (uint64_t q = 0; q < n; ++q) {
      uint64_t v = 0;
      TESSEL_CHECK(GetVarint(data, &pos, end, &v), "sampling: rank {} sent a truncated answer for node {}", owner, row);
      prev += UnZigZag(v);
      (*out)[first + q].node = prev;
    }
  }
  TESSEL_CHECK(pos == end, "sampling: rank {} sent {} bytes more than the answers to its {} requested rows", owner,
               end - pos, asked.size());
}

}  // namespace tessel::sampling
