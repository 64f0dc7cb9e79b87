// The TESSEL_FAULT grammar (core/fault_inject.h): good values parse to the action, point, rank and count; malformed
// ones are errors that quote the value and show the form, never ignored. With TESSEL_FAULT unset (as under ctest)
// every hook does nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/fault_inject.h"

namespace tessel::fault {
namespace {

using ::testing::HasSubstr;

TEST(FaultSpec, GoodValues) {
  Spec s = ParseSpec("stall@allreduce");
  EXPECT_EQ(s.action, Action::kStall);
  EXPECT_EQ(s.point, "allreduce");
  EXPECT_EQ(s.rank, -1);
  EXPECT_EQ(s.after, 0);

  s = ParseSpec("kill@epoch,rank=1");
  EXPECT_EQ(s.action, Action::kKill);
  EXPECT_EQ(s.point, "epoch");
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.after, 0);

  s = ParseSpec("fail@barrier,after=3,rank=12");  // either order
  EXPECT_EQ(s.action, Action::kFail);
  EXPECT_EQ(s.point, "barrier");
  EXPECT_EQ(s.rank, 12);
  EXPECT_EQ(s.after, 3);

  EXPECT_EQ(ParseSpec("enospc@write").action, Action::kEnospc);
  s = ParseSpec("truncate@write,after=2");
  EXPECT_EQ(s.action, Action::kTruncate);
  EXPECT_EQ(s.after, 2);
  for (const char* point : {"broadcast", "allgatherv", "alltoallv", "send", "recv", "sendrecv", "write"}) {
    EXPECT_EQ(ParseSpec(std::string("fail@") + point).point, point);
  }
}

TEST(FaultSpec, MalformedValuesAreErrors) {
  const struct {
    const char* value;
    const char* why;
  } cases[] = {
      {"", "no '@'"},
      {"stall", "no '@'"},
      {"stall@", "unknown point ''"},
      {"explode@allreduce", "unknown action 'explode'"},
      {"Stall@allreduce", "unknown action 'Stall'"},
      {"stall@allredcue", "unknown point 'allredcue' (known: allreduce, broadcast"},
      {"enospc@allreduce", "enospc applies to the write point only"},
      {"truncate@epoch", "truncate applies to the write point only"},
      {"stall@allreduce,rank=", "'rank=' is not a rank"},
      {"stall@allreduce,rank=-1", "'rank=-1' is not a rank"},
      {"stall@allreduce,rank=x", "'rank=x' is not a rank"},
      {"stall@allreduce,after=1.5", "'after=1.5' is not a count of calls"},
      {"stall@allreduce,rank=1,rank=2", "unexpected 'rank=2'"},
      {"stall@allreduce,seed=1", "unexpected 'seed=1'"},
      {"stall@allreduce,", "unexpected ''"},
      {"stall@allreduce rank=1", "unknown point 'allreduce rank=1'"},
  };
  for (const auto& c : cases) {
    try {
      (void)ParseSpec(c.value);
      ADD_FAILURE() << "accepted '" << c.value << "'";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("TESSEL_FAULT='") + c.value + "': " + c.why)) << c.value;
      EXPECT_THAT(e.what(), HasSubstr("the form is TESSEL_FAULT=ACTION@POINT[,rank=R][,after=N]")) << c.value;
    }
  }
}

TEST(FaultSpec, UnsetMeansNoFault) {
  ASSERT_EQ(std::getenv("TESSEL_FAULT"), nullptr) << "run this test without TESSEL_FAULT";
  EXPECT_NO_THROW(InitFromEnvironment());
  for (const char* point : {"allreduce", "epoch", "write"}) EXPECT_EQ(FaultPoint(point, 0), Action::kNone);
}

}  // namespace
}  // namespace tessel::fault
