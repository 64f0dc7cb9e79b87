// Sorted, unique ids and each key's index among them, for the distributed partitioner's tables (private to
// partition/). One binary search per key over a table of millions misses the cache on every step; these sort the
// keys once instead, by a stable radix sort of (key, position) packed in one 64-bit word (two passes of 11 bits for
// the ids of a 4M-node graph), so the result is exactly that of std::sort over (key, position) pairs.
#pragma once

#include <cstdint>
#include <vector>

namespace tessel::partition::detail {

// The sorted, unique values of `keys` and each key's index among them (`index`, keys.size() values). Takes the keys
// (pass them with std::move where they are not needed after) and frees them before it sorts.
std::vector<int64_t> IndexOf(std::vector<int64_t> keys, std::vector<int32_t>* index);

// The entries of `adj` outside [lo, hi) (remote neighbours), sorted and unique, and each entry's slot: >= 0 its index
// among them, < 0 the local row ~slot (v - lo).
std::vector<int64_t> GhostsOf(const std::vector<int64_t>& adj, int64_t lo, int64_t hi, std::vector<int32_t>* slot);

}  // namespace tessel::partition::detail
