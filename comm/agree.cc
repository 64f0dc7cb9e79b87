// AgreeOrFail: one fixed-size allgather of (count, digest) per rank; the settings themselves travel only when the
// digests differ, to name what differs.
#include "comm/agree.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "core/checksum.h"
#include "core/error.h"

namespace tessel::comm {
namespace {

constexpr size_t kMaxShownBytes = 120;  // longer values are cut in the message
constexpr size_t kMaxShownGroups = 4;   // distinct values shown; the rest are summarised

void PutU64(std::vector<uint8_t>* out, uint64_t v) {
  for (int k = 0; k < 8; ++k) out->push_back(static_cast<uint8_t>(v >> (8 * k)));
}

void PutString(std::vector<uint8_t>* out, const std::string& s) {
  PutU64(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t U64() {
    TESSEL_CHECK(size_ - at_ >= 8, "comm: settings record cut short at byte {} of {}", at_, size_);
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<uint64_t>(data_[at_ + static_cast<size_t>(k)]) << (8 * k);
    at_ += 8;
    return v;
  }
  std::string String() {
    const uint64_t n = U64();
    TESSEL_CHECK(n <= size_ - at_, "comm: settings record has a {}-byte string at byte {} of {}", n, at_, size_);
    std::string s(reinterpret_cast<const char*>(data_ + at_), static_cast<size_t>(n));
    at_ += static_cast<size_t>(n);
    return s;
  }
  bool Done() const { return at_ == size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// A value as the message shows it: plain when it is non-empty printable ASCII without spaces or quotes, else
// quoted with every other byte escaped; cut after kMaxShownBytes.
std::string Shown(const std::string& v) {
  const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  const size_t n = std::min(v.size(), kMaxShownBytes);
  std::string out;
  if (plain) {
    out = v.substr(0, n);
  } else {
    out = "\"";
    for (size_t k = 0; k < n; ++k) {
      const auto u = static_cast<unsigned char>(v[k]);
      if (v[k] == '"' || v[k] == '\\') {
        out += '\\';
        out += v[k];
      } else if (u < 0x20 || u >= 0x7f) {
        out += fmt::format("\\x{:02x}", u);
      } else {
        out += v[k];
      }
    }
    out += '"';
  }
  if (v.size() > n) out += fmt::format("... ({} bytes)", v.size());
  return out;
}

// "rank 3", "ranks 0-2", "ranks 0, 2 and 5-7" (ranks ascending).
std::string RankList(const std::vector<int>& ranks) {
  std::vector<std::string> runs;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    runs.push_back(j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t k = 0; k < runs.size(); ++k) {
    if (k > 0) out += k + 1 == runs.size() ? " and " : ", ";
    out += runs[k];
  }
  return out;
}

// "rank 0 has 16, ranks 1-3 have 32": the ranks of each distinct value (nullopt: "none"), in order of first rank.
std::string Groups(const std::vector<std::optional<std::string>>& per_rank) {
  std::vector<std::pair<std::optional<std::string>, std::vector<int>>> groups;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == per_rank[r]; });
    if (it == groups.end()) {
      groups.push_back({per_rank[r], {}});
      it = groups.end() - 1;
    }
    it->second.push_back(static_cast<int>(r));
  }
  std::string out;
  const size_t shown = groups.size() > kMaxShownGroups ? kMaxShownGroups - 1 : groups.size();
  for (size_t g = 0; g < shown; ++g) {
    if (g > 0) out += ", ";
    out += fmt::format("{} {} {}", RankList(groups[g].second), groups[g].second.size() == 1 ? "has" : "have",
                       groups[g].first ? Shown(*groups[g].first) : std::string("none"));
  }
  if (shown < groups.size()) {
    std::vector<int> rest;
    for (size_t g = shown; g < groups.size(); ++g)
      rest.insert(rest.end(), groups[g].second.begin(), groups[g].second.end());
    std::sort(rest.begin(), rest.end());
    out += fmt::format(", and {} other values on {}", groups.size() - shown, RankList(rest));
  }
  return out;
}

}  // namespace

std::vector<uint8_t> EncodeSettings(const Settings& settings) {
  std::vector<uint8_t> out;
  PutU64(&out, settings.size());
  for (const auto& [name, value] : settings) {
    PutString(&out, name);
    PutString(&out, value);
  }
  return out;
}

Settings DecodeSettings(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const uint64_t count = in.U64();
  TESSEL_CHECK(count <= size / 16, "comm: settings record claims {} settings in {} bytes", count, size);
  Settings out;
  out.reserve(static_cast<size_t>(count));
  for (uint64_t k = 0; k < count; ++k) {
    std::string name = in.String();
    std::string value = in.String();
    out.emplace_back(std::move(name), std::move(value));
  }
  TESSEL_CHECK(in.Done(), "comm: settings record has {} bytes after its {} settings", size, count);
  return out;
}

uint64_t SettingsDigest(const Settings& settings) {
  const std::vector<uint8_t> bytes = EncodeSettings(settings);
  return Checksum64(bytes.data(), bytes.size());
}

std::string DescribeDisagreement(const std::vector<Settings>& per_rank) {
  if (per_rank.size() < 2) return "";
  if (std::all_of(per_rank.begin(), per_rank.end(), [&](const Settings& s) { return s == per_rank[0]; })) return "";
  // Names in order of first appearance (rank 0's list first); each rank's value of a name is its first occurrence.
  std::vector<std::string> names;
  std::vector<std::map<std::string, const std::string*, std::less<>>> values(per_rank.size());
  for (size_t r = 0; r < per_rank.size(); ++r) {
    for (const Setting& setting : per_rank[r]) {
      const std::string& name = setting.first;
      if (values[r].emplace(name, &setting.second).second &&
          std::all_of(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(r),
                      [&](const auto& m) { return !m.contains(name); })) {
        names.push_back(name);
      }
    }
  }
  for (const std::string& name : names) {
    std::vector<std::optional<std::string>> have(per_rank.size());
    for (size_t r = 0; r < per_rank.size(); ++r) {
      if (auto it = values[r].find(name); it != values[r].end()) have[r] = *it->second;
    }
    if (std::all_of(have.begin(), have.end(), [&](const auto& v) { return v == have[0]; })) continue;
    return fmt::format("ranks disagree on {}: {}", PrintableText(name), Groups(have));
  }
  // Every name has one value everywhere: the lists differ in order or repeats. Name the first position that differs.
  size_t longest = 0;
  for (const Settings& s : per_rank) longest = std::max(longest, s.size());
  for (size_t i = 0; i < longest; ++i) {
    std::vector<std::optional<std::string>> names_at(per_rank.size());
    std::vector<std::optional<std::string>> values_at(per_rank.size());
    for (size_t r = 0; r < per_rank.size(); ++r) {
      if (i < per_rank[r].size()) {
        names_at[r] = per_rank[r][i].first;
        values_at[r] = per_rank[r][i].second;
      }
    }
    if (!std::all_of(names_at.begin(), names_at.end(), [&](const auto& v) { return v == names_at[0]; })) {
      return fmt::format("ranks disagree on the order of their settings (different tessel builds?): setting {}: {}",
                         i + 1, Groups(names_at));
    }
    if (!std::all_of(values_at.begin(), values_at.end(), [&](const auto& v) { return v == values_at[0]; })) {
      return fmt::format("ranks disagree on {} (setting {}): {}", PrintableText(*names_at[0]), i + 1,
                         Groups(values_at));
    }
  }
  return "";  // not reached: the lists differ
}

void AgreeOrFail(Communicator& comm, const Settings& settings, std::string_view fix) {
  if (comm.Size() == 1) return;
  const std::vector<uint8_t> mine = EncodeSettings(settings);
  const uint64_t record[2] = {static_cast<uint64_t>(settings.size()), Checksum64(mine.data(), mine.size())};
  std::vector<uint64_t> records(2 * static_cast<size_t>(comm.Size()));
  comm.Allgather<uint64_t>(std::span<const uint64_t>(record), std::span<uint64_t>(records), "setup").ThrowIfError();
  bool same = true;
  for (size_t r = 1; r < static_cast<size_t>(comm.Size()); ++r) {
    same = same && records[2 * r] == records[0] && records[2 * r + 1] == records[1];
  }
  if (same) return;
  std::vector<uint8_t> all;
  std::vector<int64_t> counts;
  comm.AllgathervWithCounts<uint8_t>(mine, &all, &counts, "setup").ThrowIfError();
  std::vector<Settings> per_rank;
  size_t at = 0;
  for (const int64_t n : counts) {
    per_rank.push_back(DecodeSettings(all.data() + at, static_cast<size_t>(n)));
    at += static_cast<size_t>(n);
  }
  std::string message = DescribeDisagreement(per_rank);
  if (message.empty()) message = "ranks disagree on their settings (their digests differ)";
  throw Error(fmt::format("{}; {}", message, fix));
}

}  // namespace tessel::comm
