// The distributed sampler's wire format (sampling/sample_wire.h): requests and answers round-trip exactly (ids far
// apart and near, negative differences, GCN self weights, rows whose picks share a weight or not, rows without picks),
// take fewer bytes than 8-byte ids and 16-byte entries, and every truncated or corrupted answer is refused with a
// message naming the rank, never read past its end.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "sampling/sample_wire.h"

namespace tessel::sampling {
namespace {

TEST(SampleWire, RequestsRoundTripAndShrink) {
  std::mt19937_64 rng(7);
  for (const int64_t span : {int64_t{100}, int64_t{1} << 20, int64_t{1} << 40}) {
    const int64_t base = 1000;
    std::vector<int64_t> ids(500);
    for (int64_t& g : ids) g = base + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
    std::vector<std::byte> wire;
    EncodeIds(ids, base, &wire);
    std::vector<int64_t> back;
    DecodeIds(wire.data(), 0, static_cast<int64_t>(wire.size()), base, 3, &back);
    EXPECT_EQ(back, ids) << span;
    if (span <= (int64_t{1} << 20)) {
      EXPECT_LT(wire.size(), 4 * ids.size()) << span;  // at most 3 bytes per id for differences under 2^20
    }
  }
  std::vector<std::byte> bad{std::byte{0x80}};  // a varint that never ends
  std::vector<int64_t> out;
  EXPECT_THROW(DecodeIds(bad.data(), 0, 1, 0, 5, &out), Error);
}

// Rows with random picks (every third row's picks share one weight, one row has none), as Serve lays them out.
std::vector<WireEntry> RandomAnswer(std::span<const int64_t> rows, bool gcn, std::mt19937_64& rng) {
  std::vector<WireEntry> e;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto n = static_cast<int32_t>(r == 1 ? 0 : rng() % 12);
    e.push_back({rows[r], gcn ? 1.0F / static_cast<float>(1 + rng() % 50) : 0.0F, n});
    const float shared = static_cast<float>(rng() % 1000) / 7.0F;
    for (int32_t q = 0; q < n; ++q) {
      const float w = r % 3 == 0 ? shared : static_cast<float>(rng() % 1000) / 7.0F;
      e.push_back({static_cast<int64_t>(rng() % 100000), w, 0});
    }
  }
  return e;
}

TEST(SampleWire, AnswersRoundTripExactly) {
  std::mt19937_64 rng(11);
  const std::vector<int64_t> rows{5, 99999, 0, 42, 42000, 7};
  for (const bool gcn : {true, false}) {
    const std::vector<WireEntry> sent = RandomAnswer(rows, gcn, rng);
    std::vector<std::byte> wire;
    EncodeAnswer(sent, gcn, &wire);
    EXPECT_LT(wire.size(), sent.size() * sizeof(WireEntry));
    std::vector<WireEntry> got;
    DecodeAnswer(wire.data(), 0, static_cast<int64_t>(wire.size()), rows, gcn, 2, &got);
    ASSERT_EQ(got.size(), sent.size());
    for (size_t k = 0; k < sent.size(); ++k) {
      EXPECT_EQ(got[k].node, sent[k].node) << k;
      EXPECT_EQ(got[k].weight, sent[k].weight) << k;
      EXPECT_EQ(got[k].count, sent[k].count) << k;
    }
  }
}

TEST(SampleWire, TruncatedOrPaddedAnswersAreRefused) {
  std::mt19937_64 rng(13);
  const std::vector<int64_t> rows{1, 2, 3};
  const std::vector<WireEntry> sent = RandomAnswer(rows, true, rng);
  std::vector<std::byte> wire;
  EncodeAnswer(sent, true, &wire);
  for (size_t cut = 0; cut < wire.size(); ++cut) {  // every prefix is short of what the rows need
    std::vector<WireEntry> got;
    try {
      DecodeAnswer(wire.data(), 0, static_cast<int64_t>(cut), rows, true, 4, &got);
      ADD_FAILURE() << "accepted " << cut << " of " << wire.size() << " bytes";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rank 4"), std::string::npos) << e.what();
    }
  }
  std::vector<std::byte> longer = wire;
  longer.push_back(std::byte{0});
  std::vector<WireEntry> got;
  EXPECT_THROW(DecodeAnswer(longer.data(), 0, static_cast<int64_t>(longer.size()), rows, true, 4, &got), Error);
  // A pick count larger than the bytes left is refused before anything is allocated for it.
  std::vector<std::byte> huge;
  AppendVarint(&huge, uint64_t{1} << 40);
  EXPECT_THROW(DecodeAnswer(huge.data(), 0, static_cast<int64_t>(huge.size()), rows, false, 4, &got), Error);
}

}  // namespace
}  // namespace tessel::sampling
