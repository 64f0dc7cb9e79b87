// The ranks' agreement on their settings (comm/agree.h) on thread ranks: equal settings pass with one fixed-size
// collective; any difference ends every rank with the same message naming the first differing setting, its values
// and the ranks that hold each; lists of different lengths, names or order; values with odd bytes.
#include "comm/agree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "comm/thread_comm.h"
#include "core/error.h"
#include "tests/comm/comm_test_util.h"

namespace tessel::comm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::WithWatchdog;

constexpr auto kLimit = std::chrono::seconds(60);

Settings Base() { return {{"--hidden", "16"}, {"--epochs", "200"}, {"--lr", "0.01"}, {"--partitions", "abc"}}; }

// Runs AgreeOrFail on `ranks` thread ranks with settings(rank) and returns each rank's error message ("" when it
// returned), after checking that a rank that throws throws tessel::Error and that the group ends within kLimit.
std::vector<std::string> Agree(int ranks, const std::function<Settings(int)>& settings) {
  std::vector<std::string> messages(static_cast<size_t>(ranks));
  std::mutex mu;
  WithWatchdog(kLimit, [&] {
    try {
      ThreadGroup::Run(ranks, [&](Communicator& c) {
        std::string message;
        try {
          AgreeOrFail(c, settings(c.Rank()));
        } catch (const Error& e) {
          message = e.what();
        }
        std::lock_guard<std::mutex> lock(mu);
        messages[static_cast<size_t>(c.Rank())] = message;
      });
    } catch (const Error& e) {
      ADD_FAILURE() << "the group failed instead of every rank returning: " << e.what();
    }
  });
  return messages;
}

class Agreement : public ::testing::TestWithParam<int> {};

TEST_P(Agreement, EqualSettingsPass) {
  const int p = GetParam();
  for (const std::string& m : Agree(p, [](int) { return Base(); })) EXPECT_EQ(m, "");
  for (const std::string& m : Agree(p, [](int) { return Settings{}; })) EXPECT_EQ(m, "");
}

TEST_P(Agreement, OneDifferingOptionNamesItTheValuesAndTheRanksOnEveryRank) {
  const int p = GetParam();
  for (int odd = 0; odd < p; ++odd) {
    const std::vector<std::string> messages = Agree(p, [&](int r) {
      Settings s = Base();
      if (r == odd) s[0].second = "32";
      if (r == odd) s[2].second = "0.5";  // a later difference is not the one reported
      return s;
    });
    // The other ranks, grouped: "rank 1 has 16", "ranks 1-3 have 16", "ranks 0 and 2-3 have 16".
    std::string others = "have 16";
    if (p == 2) others = fmt::format("rank {} has 16", 1 - odd);
    if (p > 2 && odd == 0) others = fmt::format("ranks 1-{} have 16", p - 1);
    if (p > 2 && odd == p - 1) others = fmt::format("ranks 0-{} have 16", p - 2);
    if (p == 4 && odd == 1) others = "ranks 0 and 2-3 have 16";
    if (p == 3 && odd == 1) others = "ranks 0 and 2 have 16";
    for (int r = 0; r < p; ++r) {
      SCOPED_TRACE(fmt::format("odd rank {}, rank {}", odd, r));
      EXPECT_EQ(messages[static_cast<size_t>(r)], messages[0]) << "every rank throws the same message";
      EXPECT_THAT(messages[static_cast<size_t>(r)], HasSubstr("ranks disagree on --hidden: "));
      EXPECT_THAT(messages[static_cast<size_t>(r)], HasSubstr(fmt::format("rank {} has 32", odd)));
      EXPECT_THAT(messages[static_cast<size_t>(r)], HasSubstr(others));
      EXPECT_THAT(messages[static_cast<size_t>(r)], HasSubstr("; start every rank with the same options"));
      EXPECT_THAT(messages[static_cast<size_t>(r)], Not(HasSubstr("--lr")));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, Agreement, ::testing::Values(2, 3, 4));

TEST(Agreement, TheExampleMessage) {
  const std::vector<std::string> m = Agree(2, [](int r) { return Settings{{"--hidden", r == 0 ? "16" : "32"}}; });
  EXPECT_EQ(m[0], "ranks disagree on --hidden: rank 0 has 16, rank 1 has 32; start every rank with the same options");
  EXPECT_EQ(m[1], m[0]);
}

TEST(Agreement, RanksAreGroupedByValue) {
  const std::vector<std::string> m = Agree(4, [](int r) { return Settings{{"-c/--cost", r % 2 == 0 ? "1" : "2"}}; });
  EXPECT_THAT(m[3], HasSubstr("ranks disagree on -c/--cost: ranks 0 and 2 have 1, ranks 1 and 3 have 2;"));
}

TEST(Agreement, AMissingOrExtraSettingIsNamed) {
  // Rank 2's list is shorter: the setting it lacks is named, and it "has none".
  std::vector<std::string> m = Agree(3, [](int r) {
    Settings s = Base();
    if (r == 2) s.pop_back();
    return s;
  });
  EXPECT_THAT(m[0], HasSubstr("ranks disagree on --partitions: ranks 0-1 have abc, rank 2 has none;"));
  EXPECT_EQ(m[2], m[0]);
  // Rank 1 has a setting the others lack, at the end of its list.
  m = Agree(3, [](int r) {
    Settings s = Base();
    if (r == 1) s.emplace_back("--new-option", "7");
    return s;
  });
  EXPECT_THAT(m[0], HasSubstr("ranks disagree on --new-option: ranks 0 and 2 have none, rank 1 has 7;"));
  // Same names and values in another order (another build): the first position that differs.
  m = Agree(2, [](int r) {
    Settings s = Base();
    if (r == 1) std::swap(s[1], s[2]);
    return s;
  });
  EXPECT_THAT(m[0], HasSubstr("ranks disagree on the order of their settings"));
  EXPECT_THAT(m[0], HasSubstr("setting 2: rank 0 has --epochs, rank 1 has --lr"));
  // A repeated name with another value on one rank.
  m = Agree(2, [](int r) {
    Settings s = Base();
    s.emplace_back("--hidden", r == 0 ? "1" : "2");
    return s;
  });
  EXPECT_THAT(m[1], HasSubstr("ranks disagree on --hidden (setting 5): rank 0 has 1, rank 1 has 2"));
}

TEST(Agreement, ValuesWithOddBytesAreShownEscapedAndCompareExactly) {
  const std::string nul("a\0b", 3);
  const std::string nul2("a\0c", 3);
  std::vector<std::string> m = Agree(2, [&](int r) { return Settings{{"--name", r == 0 ? nul : nul2}}; });
  EXPECT_THAT(m[0], HasSubstr(R"(rank 0 has "a\x00b", rank 1 has "a\x00c")"));
  EXPECT_EQ(m[0].find('\0'), std::string::npos);
  m = Agree(2, [&](int r) { return Settings{{"--name", r == 0 ? "" : "with space \"q\" \x1b[31m\xff"}}; });
  EXPECT_THAT(m[0], HasSubstr(R"(rank 0 has "", rank 1 has "with space \"q\" \x1b[31m\xff")"));
  // Equal odd values agree; a long value is cut in the message, with its length.
  for (const std::string& s : Agree(3, [&](int) { return Settings{{"--name", nul}}; })) EXPECT_EQ(s, "");
  m = Agree(2, [&](int r) { return Settings{{"--long", std::string(1000, r == 0 ? 'x' : 'y')}}; });
  EXPECT_THAT(m[0], HasSubstr("... (1000 bytes)"));
  EXPECT_LT(m[0].size(), 400u);
  // Names and values are length-prefixed: ("a", "bc") and ("ab", "c") differ.
  m = Agree(2, [&](int r) { return r == 0 ? Settings{{"a", "bc"}} : Settings{{"ab", "c"}}; });
  EXPECT_THAT(m[0], HasSubstr("ranks disagree on a: rank 0 has bc, rank 1 has none"));
}

TEST(Agreement, ManyDistinctValuesAreSummarised) {
  const std::vector<std::string> m = Agree(8, [](int r) { return Settings{{"--seed", std::to_string(r)}}; });
  EXPECT_THAT(m[0], HasSubstr("rank 0 has 0, rank 1 has 1, rank 2 has 2, and 5 other values on ranks 3-7;"));
}

TEST(Agreement, EqualSettingsCostOneFixedSizeRecordPerRank) {
  std::vector<uint64_t> bytes(3);
  std::mutex mu;
  WithWatchdog(kLimit, [&] {
    ThreadGroup::Run(3, [&](Communicator& c) {
      Settings s = Base();
      s.emplace_back("--big", std::string(100000, 'z'));
      AgreeOrFail(c, s);
      std::lock_guard<std::mutex> lock(mu);
      bytes[static_cast<size_t>(c.Rank())] = c.Bytes().Bytes("setup");
    });
  });
  for (uint64_t b : bytes) EXPECT_LT(b, 1000u) << "the settings travel only when the digests differ";
}

TEST(Agreement, OneRankNeedsNoCollective) {
  const std::unique_ptr<Communicator> local = MakeLocalCommunicator();
  AgreeOrFail(*local, Base());
  EXPECT_EQ(local->Bytes().Bytes("setup"), 0u);
}

TEST(AgreementPure, EncodingRoundTripsAndDigestsDiffer) {
  const Settings s{{"--x", std::string("\0\xff", 2)}, {"", ""}, {"--y", "1"}};
  const std::vector<uint8_t> bytes = EncodeSettings(s);
  EXPECT_EQ(DecodeSettings(bytes.data(), bytes.size()), s);
  EXPECT_NE(SettingsDigest(s), SettingsDigest(Settings{{"--x", std::string("\0\xff", 2)}, {"", ""}}));
  EXPECT_NE(SettingsDigest(Settings{{"a", "bc"}}), SettingsDigest(Settings{{"ab", "c"}}));
  EXPECT_EQ(SettingsDigest(s), SettingsDigest(Settings(s)));
  // Cut or padded encodings are refused, never read out of bounds.
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(DecodeSettings(bytes.data(), n), Error) << n;
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(DecodeSettings(longer.data(), longer.size()), Error);
  std::vector<uint8_t> huge(16, 0xff);
  EXPECT_THROW(DecodeSettings(huge.data(), huge.size()), Error);
}

TEST(AgreementPure, DescribeIsEmptyOnlyWhenEqual) {
  EXPECT_EQ(DescribeDisagreement({}), "");
  EXPECT_EQ(DescribeDisagreement({Base()}), "");
  EXPECT_EQ(DescribeDisagreement({Base(), Base(), Base()}), "");
  EXPECT_NE(DescribeDisagreement({Base(), Settings{}}), "");
  EXPECT_EQ(DescribeDisagreement({Settings{{"--a", "1"}}, Settings{{"--a", "1"}, {"--a", "1"}}}),
            "ranks disagree on the order of their settings (different tessel builds?): setting 2: rank 0 has none, "
            "rank 1 has --a");
}

}  // namespace
}  // namespace tessel::comm
