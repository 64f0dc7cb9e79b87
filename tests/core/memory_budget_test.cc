// The memory budget: sizes parsed as users write them, allocations refused before they are made (by --max-memory
// and by the machine's available memory) with a message naming what and why, overflow-safe array sizes, activities
// kept for the out-of-memory message, and the decompression ratio limit.
#include "core/memory_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

#include "core/buffer.h"
#include "core/error.h"

namespace tessel::memory {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Restores the process-wide limits a test changes.
class MemoryBudgetTest : public ::testing::Test {
 protected:
  void TearDown() override {
    SetLimit(0);
    SetInflateLimits({});
  }
};

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(MemoryBudgetTest, SizesParseInBinaryUnitsAndJunkIsRefused) {
  EXPECT_EQ(ParseSize("0", "--max-memory"), 0);
  EXPECT_EQ(ParseSize("1000", "--max-memory"), 1000);
  EXPECT_EQ(ParseSize("4k", "--max-memory"), 4096);
  EXPECT_EQ(ParseSize("512M", "--max-memory"), int64_t{512} << 20);
  EXPECT_EQ(ParseSize("8G", "--max-memory"), int64_t{8} << 30);
  EXPECT_EQ(ParseSize("8GiB", "--max-memory"), int64_t{8} << 30);
  EXPECT_EQ(ParseSize("8GB", "--max-memory"), int64_t{8} << 30);
  EXPECT_EQ(ParseSize("1.5G", "--max-memory"), int64_t{3} << 29);
  EXPECT_EQ(ParseSize("2T", "--max-memory"), int64_t{2} << 40);
  for (const char* bad : {"", "G", "-1G", "8X", "1e9", "lots", "1.2.3G", "99999999999T"}) {
    EXPECT_THAT(ErrorOf([&] { ParseSize(bad, "--max-memory"); }), HasSubstr("--max-memory")) << bad;
  }
}

TEST_F(MemoryBudgetTest, BytesAreFormattedForPeople) {
  EXPECT_EQ(FormatBytes(100), "100 B");
  EXPECT_EQ(FormatBytes(int64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(FormatBytes(int64_t{512} << 20), "512.0 MiB");
}

TEST_F(MemoryBudgetTest, MachineFactsAreRead) {
  EXPECT_GT(ResidentBytes(), 0);
  EXPECT_GT(AvailableBytes(), 0);  // Linux: /proc/meminfo is there
}

TEST_F(MemoryBudgetTest, TheLimitRefusesBeforeAllocatingAndNamesWhatAndTheFix) {
  EXPECT_NO_THROW(Check(int64_t{1} << 30, "a test array"));  // no limit: 1 GiB fits a test machine
  SetLimit(ResidentBytes() + (int64_t{64} << 20));
  EXPECT_NO_THROW(Check(int64_t{16} << 20, "a small array"));
  const std::string e = ErrorOf([] { Check(int64_t{1} << 30, "the feature matrix", "use more partitions"); });
  EXPECT_THAT(e, HasSubstr("the feature matrix needs 1.0 GiB"));
  EXPECT_THAT(e, HasSubstr("--max-memory is"));
  EXPECT_THAT(e, HasSubstr("use more partitions"));
  // Below the threshold nothing is checked (small allocations cannot hurt and must stay cheap).
  SetLimit(1);
  EXPECT_NO_THROW(Check(kCheckThreshold - 1, "a tiny array"));
  // Buffers check themselves: a large one under a small limit is refused with the message, not std::bad_alloc.
  EXPECT_THAT(ErrorOf([] { Buffer<float> b(size_t{64} << 20); }), HasSubstr("a buffer needs 256.0 MiB"));
  EXPECT_THROW(SetLimit(-1), Error);
}

TEST_F(MemoryBudgetTest, MoreThanTheMachineHasIsRefusedWithoutALimit) {
  const int64_t available = AvailableBytes();
  ASSERT_GT(available, 0);
  const std::string e = ErrorOf([&] { Check(available + (int64_t{1} << 40), "a forged header's table"); });
  EXPECT_THAT(e, HasSubstr("a forged header's table needs"));
  EXPECT_THAT(e, HasSubstr("available"));
  // A count times an element size that overflows int64 is refused as such, not wrapped to a small size.
  EXPECT_THAT(ErrorOf([] { CheckArray(int64_t{1} << 62, 8, "the index"); }), HasSubstr("more than any machine has"));
  EXPECT_THAT(ErrorOf([] { CheckArray(-1, 8, "the index"); }), HasSubstr("is not a size"));
  // Buffers with an element count beyond any memory are refused before the byte count could wrap around.
  EXPECT_THAT(ErrorOf([] { Buffer<double> b(std::numeric_limits<size_t>::max() / 4); }),
              HasSubstr("larger than any memory"));
}

TEST_F(MemoryBudgetTest, ActivitiesNestAndTheFailingOneIsKeptForTheOutOfMemoryMessage) {
  EXPECT_EQ(CurrentActivity(), "");
  {
    Activity outer("reading a.txt");
    EXPECT_EQ(CurrentActivity(), "reading a.txt");
    {
      Activity inner("building the graph");
      EXPECT_EQ(CurrentActivity(), "building the graph");
      SetLimit(1);
      EXPECT_THAT(ErrorOf([] { Check(int64_t{1} << 30, "the CSR index"); }),
                  HasSubstr("the CSR index (while building the graph) needs"));
      SetLimit(0);
    }
    EXPECT_EQ(CurrentActivity(), "reading a.txt");
  }
  EXPECT_EQ(CurrentActivity(), "");
  EXPECT_EQ(FailedActivity(), "");  // nothing failed yet
  try {
    Activity outer("converting x");
    Activity inner("sorting the edges of x");
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
  }
  EXPECT_EQ(FailedActivity(), "sorting the edges of x");  // the innermost one the exception left
  EXPECT_THAT(OutOfMemoryMessage(), HasSubstr("out of memory while sorting the edges of x"));
  EXPECT_THAT(OutOfMemoryMessage(), HasSubstr("available"));
  // The fix names the options that size the work (all of them real options of the CLI).
  for (const char* option : {"--batch-size", "--fanouts", "--hidden", "--layers", "--nodes", "--features"}) {
    EXPECT_THAT(OutOfMemoryMessage(), HasSubstr(option));
  }
  EXPECT_THAT(OutOfMemoryMessage(), Not(HasSubstr("--cache-size")));  // not an option of any subcommand
}

TEST_F(MemoryBudgetTest, InflationBeyondTheRatioIsRefusedNamingTheFile) {
  EXPECT_NO_THROW(CheckInflated("a.gz", 1000, 999'000));
  EXPECT_THAT(ErrorOf([] { CheckInflated("bomb.gz", 1000, 1'000'001); }),
              HasSubstr("bomb.gz: decompresses to more than 1000 times its 1000 compressed bytes"));
  SetInflateLimits({.max_ratio = 10});
  EXPECT_THROW(CheckInflated("a.gz", 1000, 10'001), Error);
  SetInflateLimits({.max_ratio = 0});  // no limit
  EXPECT_NO_THROW(CheckInflated("a.gz", 1, int64_t{1} << 40));
  EXPECT_THROW(SetInflateLimits({.max_ratio = -1}), Error);
}

}  // namespace
}  // namespace tessel::memory
