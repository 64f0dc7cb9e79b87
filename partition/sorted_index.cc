#include "partition/sorted_index.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <utility>

#include "core/error.h"

namespace tessel::partition::detail {
namespace {

constexpr int kDigitBits = 11;  // 2,048 counters a pass: they stay in the L1 cache

// Stable LSD radix sort of `words` by their bits [from, to).
void RadixSort(std::vector<uint64_t>* words, int from, int to) {
  std::vector<uint64_t> out(words->size());
  constexpr uint64_t kMask = (uint64_t{1} << kDigitBits) - 1;
  for (int shift = from; shift < to; shift += kDigitBits) {
    std::array<size_t, kMask + 1> start{};
    for (const uint64_t w : *words) ++start[(w >> shift) & kMask];
    size_t sum = 0;
    for (size_t& s : start) sum += std::exchange(s, sum);
    for (const uint64_t w : *words) out[start[(w >> shift) & kMask]++] = w;
    words->swap(out);
  }
}

}  // namespace

std::vector<int64_t> IndexOf(std::vector<int64_t> keys, std::vector<int32_t>* index) {
  const size_t n = keys.size();
  TESSEL_CHECK(n <= static_cast<size_t>(INT32_MAX), "distributed partition: {} keys in one table (at most 2^31 - 1)",
               n);
  index->resize(n);
  std::vector<int64_t> unique;
  if (n == 0) return unique;
  const auto [lo_it, hi_it] = std::minmax_element(keys.begin(), keys.end());
  const int64_t lo = *lo_it;
  const auto range = static_cast<uint64_t>(*hi_it) - static_cast<uint64_t>(lo);
  const int pos_bits = std::max(1, static_cast<int>(std::bit_width(n - 1)));
  const int key_bits = static_cast<int>(std::bit_width(range));
  if (pos_bits + key_bits <= 64) {
    std::vector<uint64_t> words(n);
    for (size_t i = 0; i < n; ++i) {
      words[i] = ((static_cast<uint64_t>(keys[i]) - static_cast<uint64_t>(lo)) << pos_bits) | i;
    }
    std::vector<int64_t>().swap(keys);
    RadixSort(&words, pos_bits, pos_bits + key_bits);
    const uint64_t pos_mask = (uint64_t{1} << pos_bits) - 1;
    for (const uint64_t w : words) {
      const auto v = static_cast<int64_t>((w >> pos_bits) + static_cast<uint64_t>(lo));
      if (unique.empty() || unique.back() != v) unique.push_back(v);
      (*index)[w & pos_mask] = static_cast<int32_t>(unique.size() - 1);
    }
    return unique;
  }
  std::vector<std::pair<int64_t, int64_t>> pairs(n);  // ids over 2^64 / n apart: sort the pairs
  for (size_t i = 0; i < n; ++i) pairs[i] = {keys[i], static_cast<int64_t>(i)};
  std::sort(pairs.begin(), pairs.end());
  for (const auto& [v, i] : pairs) {
    if (unique.empty() || unique.back() != v) unique.push_back(v);
    (*index)[static_cast<size_t>(i)] = static_cast<int32_t>(unique.size() - 1);
  }
  return unique;
}

std::vector<int64_t> GhostsOf(const std::vector<int64_t>& adj, int64_t lo, int64_t hi, std::vector<int32_t>* slot) {
  std::vector<int64_t> remote;
  for (const int64_t v : adj) {
    if (v < lo || v >= hi) remote.push_back(v);
  }
  std::vector<int32_t> at;
  std::vector<int64_t> ghosts = IndexOf(std::move(remote), &at);
  slot->resize(adj.size());
  size_t r = 0;
  for (size_t e = 0; e < adj.size(); ++e) {
    const int64_t v = adj[e];
    (*slot)[e] = (v >= lo && v < hi) ? ~static_cast<int32_t>(v - lo) : at[r++];
  }
  return ghosts;
}

}  // namespace tessel::partition::detail
