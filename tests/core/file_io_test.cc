// Atomic outputs leave either the old or the new result, never a mix; mappings read what was written.
#include "core/file_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/checksum.h"
#include "core/error.h"

namespace tessel {
namespace {
namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_file_io_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FileIoTest, WriteAtomicThenMap) {
  const fs::path p = dir_ / "a.bin";
  WriteFileAtomic(p, std::string_view("hello world"));
  auto m = MappedFile::Open(p);
  ASSERT_EQ(m->size(), 11U);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m->data()), m->size()), "hello world");
  // Writes through the private mapping never reach the file.
  m->data()[0] = std::byte{'J'};
  EXPECT_EQ(ReadFileToString(p), "hello world");
  // No temporary files are left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(FileIoTest, DirectoryWithoutCommitLeavesNothing) {
  const fs::path out = dir_ / "out";
  {
    AtomicDirectory d(out, false);
    WriteFileAtomic(d.path() / "x", std::string_view("1"));
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(FileIoTest, DirectoryCommitAndForce) {
  const fs::path out = dir_ / "out";
  {
    AtomicDirectory d(out, false);
    WriteFileAtomic(d.path() / "x", std::string_view("old"));
    d.Commit();
  }
  EXPECT_EQ(ReadFileToString(out / "x"), "old");
  EXPECT_THROW(AtomicDirectory(out, false), Error);
  {
    AtomicDirectory d(out, true);
    WriteFileAtomic(d.path() / "x", std::string_view("new"));
    EXPECT_EQ(ReadFileToString(out / "x"), "old");  // untouched until Commit
    d.Commit();
  }
  EXPECT_EQ(ReadFileToString(out / "x"), "new");
}

TEST_F(FileIoTest, MissingFileNamesPath) {
  try {
    MappedFile::Open(dir_ / "nope.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nope.bin"), std::string::npos);
  }
}

TEST(Checksum, DetectsOneFlippedBit) {
  std::vector<uint8_t> data(4096, 0xAB);
  const std::string a = ChecksumHex(data.data(), data.size());
  data[1234] ^= 0x01;
  EXPECT_NE(a, ChecksumHex(data.data(), data.size()));
  EXPECT_EQ(a.size(), 16U);
}

}  // namespace
}  // namespace tessel
