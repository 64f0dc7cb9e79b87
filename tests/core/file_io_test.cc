// Atomic outputs leave either the old or the new result, never a mix; mappings read what was written.
#include "core/file_io.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

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

// A process id that existed and has ended (a child that exited and was reaped).
pid_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

std::string Host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// Leftovers of a killed run (`.NAME.tmp.HOST.PID.RANDOM`, `.NAME.old.…`) are removed at the next write to NAME when
// their process is gone; a live process's, another host's, another name's and unparsable ones are kept.
TEST_F(FileIoTest, StaleTemporariesOfDeadRunsAreRemovedAtTheNextWrite) {
  const std::string host = Host();
  const pid_t dead = DeadPid();
  ASSERT_GT(dead, 0);
  auto make_dir = [&](const std::string& entry) {
    fs::create_directories(dir_ / entry / "inner");
    std::ofstream(dir_ / entry / "inner" / "f") << "partial";
    return dir_ / entry;
  };
  const fs::path stale_tmp = make_dir(fmt::format(".out.tmp.{}.{}.abc", host, dead));
  const fs::path stale_old = make_dir(fmt::format(".out.old.{}.{}.abd", host, dead));
  const fs::path live = make_dir(fmt::format(".out.tmp.{}.{}.abe", host, ::getppid()));
  const fs::path other_host = make_dir(fmt::format(".out.tmp.{}x.{}.abf", host, dead));
  const fs::path other_name = make_dir(fmt::format(".outx.tmp.{}.{}.ab0", host, dead));
  const fs::path no_pid = make_dir(fmt::format(".out.tmp.{}.notapid.ab1", host));
  const fs::path user_file = make_dir("out.tmp.keep");
  {
    AtomicDirectory d(dir_ / "out", false);
    WriteFileAtomic(d.path() / "x", std::string_view("1"));
    d.Commit();
  }
  EXPECT_FALSE(fs::exists(stale_tmp));
  EXPECT_FALSE(fs::exists(stale_old));
  for (const fs::path& kept : {live, other_host, other_name, no_pid, user_file}) {
    EXPECT_TRUE(fs::exists(kept / "inner" / "f")) << kept;
  }
  // Files written atomically clean their own name's leftovers the same way.
  const fs::path stale_file = dir_ / fmt::format(".model.tmp.{}.{}.ac0", host, dead);
  std::ofstream(stale_file) << "partial";
  WriteFileAtomic(dir_ / "model", std::string_view("m"));
  EXPECT_FALSE(fs::exists(stale_file));
  EXPECT_EQ(ReadFileToString(dir_ / "model"), "m");
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
