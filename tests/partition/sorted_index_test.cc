// partition/sorted_index.h: the radix-sorted index of keys against std::sort over (key, position) pairs, and the
// ghost slots of an adjacency against a binary search per entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "partition/sorted_index.h"

namespace tessel::partition::detail {
namespace {

// The reference: sort (key, position) pairs, number the distinct keys.
std::vector<int64_t> ReferenceIndexOf(const std::vector<int64_t>& keys, std::vector<int32_t>* index) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < keys.size(); ++i) pairs.emplace_back(keys[i], static_cast<int64_t>(i));
  std::sort(pairs.begin(), pairs.end());
  std::vector<int64_t> unique;
  index->assign(keys.size(), -1);
  for (const auto& [v, i] : pairs) {
    if (unique.empty() || unique.back() != v) unique.push_back(v);
    (*index)[static_cast<size_t>(i)] = static_cast<int32_t>(unique.size() - 1);
  }
  return unique;
}

TEST(SortedIndex, IndexOfEqualsSortingPairs) {
  std::mt19937_64 rng(7);
  // Ranges from all-equal keys to ids of billions (three and more radix passes), and one beyond the packed word
  // (keys 2^62 apart: the pair sort).
  for (const int64_t range :
       {int64_t{1}, int64_t{2}, int64_t{1000}, int64_t{1} << 21, int64_t{5'000'000'000}, int64_t{1} << 62}) {
    for (const size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{5000}}) {
      std::vector<int64_t> keys(n);
      for (int64_t& k : keys) k = static_cast<int64_t>(rng() % static_cast<uint64_t>(range)) + 3;
      std::vector<int32_t> index;
      std::vector<int32_t> want_index;
      const std::vector<int64_t> want = ReferenceIndexOf(keys, &want_index);
      EXPECT_EQ(IndexOf(keys, &index), want) << "range " << range << ", n " << n;
      EXPECT_EQ(index, want_index) << "range " << range << ", n " << n;
    }
  }
}

TEST(SortedIndex, GhostSlotsNameTheRemoteColumnOrTheLocalRow) {
  std::mt19937_64 rng(11);
  std::vector<int64_t> adj(20000);
  for (int64_t& v : adj) v = static_cast<int64_t>(rng() % 100000);
  const int64_t lo = 40000;
  const int64_t hi = 60000;
  std::vector<int32_t> slot;
  const std::vector<int64_t> ghosts = GhostsOf(adj, lo, hi, &slot);
  ASSERT_TRUE(std::is_sorted(ghosts.begin(), ghosts.end()));
  ASSERT_TRUE(std::adjacent_find(ghosts.begin(), ghosts.end()) == ghosts.end());
  ASSERT_EQ(slot.size(), adj.size());
  for (size_t e = 0; e < adj.size(); ++e) {
    const int64_t v = adj[e];
    if (v >= lo && v < hi) {
      EXPECT_EQ(slot[e], ~static_cast<int32_t>(v - lo));
    } else {
      ASSERT_GE(slot[e], 0);
      EXPECT_EQ(ghosts[static_cast<size_t>(slot[e])], v);
    }
  }
  for (const int64_t g : ghosts) EXPECT_TRUE(g < lo || g >= hi);
}

}  // namespace
}  // namespace tessel::partition::detail
