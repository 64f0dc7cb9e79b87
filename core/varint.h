// LEB128 varints and zigzag signed integers, the compact integer wire format of the exchanges that send ids:
// compressed feature rows' column ids (train/gcn/row_exchange.cc) and the distributed sampler's requests and
// answers (sampling/dist_sampler.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessel {

// Bytes of v as a varint (1 to 10).
inline int64_t VarintSize(uint64_t v) {
  int64_t k = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++k;
  }
  return k;
}

// Writes v at p (VarintSize(v) bytes) and returns the byte after it.
inline std::byte* PutVarint(std::byte* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::byte>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::byte>(v);
  return p;
}

// Appends v to out.
inline void AppendVarint(std::vector<std::byte>* out, uint64_t v) {
  const size_t at = out->size();
  out->resize(at + static_cast<size_t>(VarintSize(v)));
  PutVarint(out->data() + at, v);
}

// Reads a varint at data[*pos], not past data[end - 1], into *v and advances *pos; false (nothing read) when it is
// truncated or longer than 64 bits.
inline bool GetVarint(const std::byte* data, int64_t* pos, int64_t end, uint64_t* v) {
  uint64_t r = 0;
  int64_t p = *pos;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end) return false;
    const auto b = static_cast<uint64_t>(data[p++]);
    r |= (b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = r;
      *pos = p;
      return true;
    }
  }
  return false;
}

// Signed to unsigned with small magnitudes small (0, -1, 1, -2 -> 0, 1, 2, 3), and back.
inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

}  // namespace tessel
