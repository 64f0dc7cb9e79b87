// Split fractions parsing and the seeded random split: sizes by largest remainder, lists sorted, disjoint and
// covering exactly the labelled nodes, reproducible per seed and uniform over many seeds.
#include "datasets/split.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"

namespace tessel::datasets {
namespace {
using ::testing::HasSubstr;

std::string ParseError(std::string_view text) {
  try {
    ParseSplitFractions(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SplitFractions, ParsesValidTriples) {
  const SplitFractions f = ParseSplitFractions("0.6,0.2,0.2");
  EXPECT_DOUBLE_EQ(f.train, 0.6);
  EXPECT_DOUBLE_EQ(f.val, 0.2);
  EXPECT_DOUBLE_EQ(f.test, 0.2);
  EXPECT_DOUBLE_EQ(ParseSplitFractions(" 1 , 0 , 0 ").train, 1.0);
  EXPECT_DOUBLE_EQ(ParseSplitFractions("0.3333333,0.3333333,0.3333334").test, 0.3333334);
}

TEST(SplitFractions, RejectsBadInputWithAnExample) {
  EXPECT_THAT(ParseError("0.6,0.2"), HasSubstr("has 2 fractions"));
  EXPECT_THAT(ParseError("0.5,0.2,0.2,0.1"), HasSubstr("more than three"));
  EXPECT_THAT(ParseError("0.6,0.3,0.3"), HasSubstr("sums to 1.2"));
  EXPECT_THAT(ParseError("0.6,x,0.2"), HasSubstr("'x' is not a number"));
  EXPECT_THAT(ParseError("1.2,-0.1,-0.1"), HasSubstr("negative"));
  EXPECT_THAT(ParseError("0.6,,0.4"), HasSubstr("'' is not a number"));
  EXPECT_THAT(ParseError("nan,0.5,0.5"), HasSubstr("not a number"));
  EXPECT_THAT(ParseError(""), HasSubstr("such as 0.6,0.2,0.2"));
  EXPECT_THAT(ParseError("0.6,0.2,0.2000011"), HasSubstr("not 1"));
}

TEST(SplitSizes, LargestRemainderSumsToTheCandidateCount) {
  for (int64_t m = 0; m < 200; ++m) {
    for (const SplitFractions f : {SplitFractions{0.6, 0.2, 0.2}, SplitFractions{1.0 / 3, 1.0 / 3, 1.0 / 3},
                                   SplitFractions{0.85, 0.05, 0.1}, SplitFractions{1, 0, 0}}) {
      int64_t a = 0;
      int64_t b = 0;
      int64_t c = 0;
      SplitSizes(m, f, &a, &b, &c);
      EXPECT_EQ(a + b + c, m);
      EXPECT_LE(std::abs(static_cast<double>(a) - f.train * static_cast<double>(m)), 1.0);
      EXPECT_LE(std::abs(static_cast<double>(b) - f.val * static_cast<double>(m)), 1.0);
      EXPECT_LE(std::abs(static_cast<double>(c) - f.test * static_cast<double>(m)), 1.0);
      if (f.val == 0) {
        EXPECT_EQ(b, 0);
      }
    }
  }
  int64_t a = 0;
  int64_t b = 0;
  int64_t c = 0;
  SplitSizes(10, {0.6, 0.2, 0.2}, &a, &b, &c);
  EXPECT_EQ(std::tie(a, b, c), std::make_tuple(6, 2, 2));
  SplitSizes(3, {0.6, 0.2, 0.2}, &a, &b, &c);  // exact 1.8 / 0.6 / 0.6: the remainders go to train, then val
  EXPECT_EQ(std::tie(a, b, c), std::make_tuple(2, 1, 0));
  EXPECT_THROW(SplitSizes(10, {1.5, -0.5, 0}, &a, &b, &c), Error);
}

void ExpectSortedDisjointCover(const Split& s, const std::set<int64_t>& candidates) {
  std::set<int64_t> all;
  for (const auto* list : {&s.train, &s.val, &s.test}) {
    EXPECT_TRUE(std::is_sorted(list->begin(), list->end()));
    for (int64_t u : *list) EXPECT_TRUE(all.insert(u).second) << "node " << u << " is in two lists";
  }
  EXPECT_EQ(all, candidates);
}

TEST(RandomSplit, CoversLabelledNodesOnlyAndIsDeterministic) {
  std::vector<int32_t> labels(1000);
  std::set<int64_t> labelled;
  for (size_t i = 0; i < labels.size(); ++i) {
    labels[i] = i % 7 == 3 ? kNoLabel : static_cast<int32_t>(i % 4);
    if (labels[i] != kNoLabel) labelled.insert(static_cast<int64_t>(i));
  }
  const Split a = RandomSplit(1000, labels, {0.6, 0.2, 0.2}, 42);
  ExpectSortedDisjointCover(a, labelled);
  int64_t nt = 0;
  int64_t nv = 0;
  int64_t ns = 0;
  SplitSizes(static_cast<int64_t>(labelled.size()), {0.6, 0.2, 0.2}, &nt, &nv, &ns);
  EXPECT_EQ(static_cast<int64_t>(a.train.size()), nt);
  EXPECT_EQ(static_cast<int64_t>(a.val.size()), nv);
  EXPECT_EQ(static_cast<int64_t>(a.test.size()), ns);

  const Split again = RandomSplit(1000, labels, {0.6, 0.2, 0.2}, 42);
  EXPECT_EQ(a.train, again.train);
  EXPECT_EQ(a.val, again.val);
  EXPECT_EQ(a.test, again.test);
  EXPECT_NE(a.train, RandomSplit(1000, labels, {0.6, 0.2, 0.2}, 43).train);

  std::set<int64_t> everyone;
  for (int64_t u = 0; u < 50; ++u) everyone.insert(u);
  ExpectSortedDisjointCover(RandomSplit(50, {}, {0.5, 0.5, 0}, 1), everyone);
  EXPECT_TRUE(RandomSplit(0, {}, {0.6, 0.2, 0.2}, 1).train.empty());
  EXPECT_THROW(RandomSplit(10, labels, {0.6, 0.2, 0.2}, 1), Error);
}

TEST(RandomSplit, EveryNodeIsEquallyLikelyToTrain) {
  // Over 2000 seeds each of 20 nodes lands in train with probability 0.5: counts within 5 sigma of 1000.
  std::vector<int> in_train(20, 0);
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    for (int64_t u : RandomSplit(20, {}, {0.5, 0.25, 0.25}, seed).train) ++in_train[static_cast<size_t>(u)];
  }
  for (int c : in_train) EXPECT_NEAR(c, 1000, 5 * std::sqrt(2000 * 0.25));
}

TEST(RandomSplit, AssignReplacesTheDatasetLists) {
  NodeDataset d;
  d.graph = CsrGraph32(Buffer<int64_t>(std::vector<int64_t>(31, 0)), Buffer<int32_t>());
  AssignRandomSplit(d, {0.6, 0.2, 0.2}, 5);
  EXPECT_EQ(d.train.size() + d.val.size() + d.test.size(), 30U);
  EXPECT_EQ(d.train.size(), 18U);
  EXPECT_NO_THROW(d.Validate());
}

}  // namespace
}  // namespace tessel::datasets
