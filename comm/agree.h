// Ranks agree before they start: a multi-rank command's first collective compares every rank's effective settings
// (options and data fingerprints, an ordered list of name/value strings), so ranks started with different options
// end together with one message naming the first setting that differs, instead of meeting in collectives of
// different shapes (a hang, heap corruption) or training silently with different settings. docs/distributed.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.h"

namespace tessel::comm {

// One setting every rank must share: the name the message uses (a flag such as "--hidden") and its value as text
// (any bytes; shown escaped).
using Setting = std::pair<std::string, std::string>;
using Settings = std::vector<Setting>;

// A 64-bit digest of the ordered list (XXH3 of its length-prefixed encoding: ("a", "bc") and ("ab", "c") differ).
uint64_t SettingsDigest(const Settings& settings);

// The length-prefixed encoding the ranks exchange when their digests differ, and its inverse (throws tessel::Error
// on bytes that are not such an encoding).
std::vector<uint8_t> EncodeSettings(const Settings& settings);
Settings DecodeSettings(const uint8_t* data, size_t size);

// per_rank[r] is rank r's list. "" when every list is equal; otherwise one sentence naming the first setting (in
// the order of rank 0's list, then the names only later ranks have) whose value is not the same on every rank,
// each value once with the ranks that hold it ("ranks disagree on --hidden: rank 0 has 16, ranks 1-3 have 32"),
// a setting some ranks lack ("rank 2 has none"), or, when only the order differs, that.
std::string DescribeDisagreement(const std::vector<Settings>& per_rank);

// Collective; call it on every rank before any other collective whose arguments depend on the settings. One
// allgather of a fixed-size record (count and digest, purpose "setup"); only when the records differ, one allgatherv
// of the encoded lists, after which every rank throws the same tessel::Error: DescribeDisagreement's sentence, then
// "; " and `fix`. A failed collective throws its Status message. A one-rank communicator returns at once.
void AgreeOrFail(Communicator& comm, const Settings& settings,
                 std::string_view fix = "start every rank with the same options");

}  // namespace tessel::comm
