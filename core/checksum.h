// Checksums of arrays and files for the native formats: XXH3-64, printed as 16 lowercase hex digits.
// Chosen for speed (several GB/s per core), so validating a large dataset on load costs little.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tessel {

uint64_t Checksum64(const void* data, size_t bytes);
std::string ChecksumHex(const void* data, size_t bytes);

template <typename T>
std::string ChecksumHex(std::span<const T> values) {
  return ChecksumHex(values.data(), values.size_bytes());
}

}  // namespace tessel
