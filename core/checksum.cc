// XXH3-64 checksums (libxxhash) for the native dataset and partition formats.
// Hex formatting is fixed-width so manifests compare as strings.
#include "core/checksum.h"

#include <xxhash.h>

#include <fmt/format.h>

namespace tessel {

uint64_t Checksum64(const void* data, size_t bytes) { return XXH3_64bits(data, bytes); }

std::string ChecksumHex(const void* data, size_t bytes) { return fmt::format("{:016x}", Checksum64(data, bytes)); }

}  // namespace tessel
