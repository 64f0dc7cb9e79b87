// Atomic outputs leave either the old or the new result, never a mix; mappings read what was written.
#include "core/file_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/checksum.h"
#include "core/error.h"
#include "core/output_guard.h"

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

TEST_F(FileIoTest, ReadFileToStringRefusesFoldersAndDevices) {
  fs::create_directories(dir_ / "manifest.json");
  EXPECT_THAT(
      [&] { ReadFileToString(dir_ / "manifest.json"); },
      ::testing::ThrowsMessage<Error>(::testing::HasSubstr("manifest.json: is a folder; give the file inside it")));
  EXPECT_THAT([&] { MappedFile::Open(dir_ / "manifest.json"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is a folder")));
  if (fs::exists("/dev/zero")) {
    EXPECT_THAT([] { ReadFileToString("/dev/zero"); },
                ::testing::ThrowsMessage<Error>(::testing::HasSubstr("/dev/zero: is a device, not a regular file")));
    EXPECT_THAT([] { MappedFile::Open("/dev/zero"); }, ::testing::ThrowsMessage<Error>(::testing::HasSubstr("device")));
  }
  // A named pipe is refused before open(2), which would wait for a writer forever.
  ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0600), 0);
  EXPECT_THAT([&] { ReadFileToString(dir_ / "pipe"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is a named pipe")));
  EXPECT_THAT([&] { MappedFile::Open(dir_ / "pipe"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is a named pipe")));
  EXPECT_THAT([&] { ReadFileToString(dir_ / "missing"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("missing: no such file")));
}

TEST_F(FileIoTest, InputFilesAreNamedAsWhatTheyAreNotAsMissing) {
  // A character device or a pipe given as an input file was reported as "no such file".
  EXPECT_THAT([&] { CheckInputIsFile(dir_ / "missing", "--edges"); },
              ::testing::ThrowsMessage<Error>(
                  ::testing::HasSubstr("--edges '" + (dir_ / "missing").string() + "': no such file")));
  if (fs::exists("/dev/null")) {
    EXPECT_THAT([] { CheckInputIsFile("/dev/null", "INPUT"); },
                ::testing::ThrowsMessage<Error>(
                    ::testing::HasSubstr("INPUT '/dev/null' is a device, not a regular file; give a file")));
  }
  ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0600), 0);
  EXPECT_THAT([&] { CheckInputIsFile(dir_ / "pipe", "--labels"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is a named pipe, not a regular file")));
  fs::create_directories(dir_ / "folder");
  EXPECT_THAT([&] { CheckInputIsFile(dir_ / "folder", "--model"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is a folder; give the file inside it")));
  std::ofstream(dir_ / "file") << "x";
  EXPECT_NO_THROW(CheckInputIsFile(dir_ / "file", "--model"));
}

TEST_F(FileIoTest, CopiedFilesAreNotReachedByTruncationOnDisk) {
  // tessel.load(path, mmap=False): a copy, so a file truncated later cannot raise SIGBUS through it.
  const std::string text(3 * 4096 + 5, 'a');
  std::ofstream(dir_ / "array.bin") << text;
  std::shared_ptr<MappedFile> copy;
  {
    const ScopedCopyInsteadOfMap scope;
    copy = MappedFile::Open(dir_ / "array.bin");
  }
  const std::shared_ptr<MappedFile> mapped = MappedFile::Open(dir_ / "array.bin");  // the scope has ended
  fs::resize_file(dir_ / "array.bin", 0);
  ASSERT_EQ(copy->size(), text.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(copy->data()), copy->size()), text);
  EXPECT_EQ(mapped->size(), text.size());  // not read: its pages are gone with the file's bytes
}

TEST_F(FileIoTest, AtomicWritersNeverRenameOverAnotherKind) {
  // A file never replaces a folder or a pipe; a folder never replaces a file.
  fs::create_directories(dir_ / "folder");
  std::ofstream(dir_ / "folder" / "keep") << "keep";
  EXPECT_THAT([&] { WriteFileAtomic(dir_ / "folder", std::string_view("x")); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is a folder, so it is not replaced")));
  EXPECT_EQ(ReadFileToString(dir_ / "folder" / "keep"), "keep");
  ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0600), 0);
  EXPECT_THROW(WriteFileAtomic(dir_ / "pipe", std::string_view("x")), Error);
  EXPECT_TRUE(fs::is_fifo(dir_ / "pipe"));
  WriteFileAtomic(dir_ / "file", std::string_view("old"));
  EXPECT_THAT([&] { AtomicDirectory d(dir_ / "file", true); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is a file, so it is not replaced")));
  {
    AtomicDirectory d(dir_ / "late", true);
    WriteFileAtomic(d.path() / "x", std::string_view("1"));
    WriteFileAtomic(dir_ / "late", std::string_view("appeared meanwhile"));
    EXPECT_THROW(d.Commit(), Error);
  }
  EXPECT_EQ(ReadFileToString(dir_ / "late"), "appeared meanwhile");
  EXPECT_EQ(ReadFileToString(dir_ / "file"), "old");
  // Nothing but what the test made is left.
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"file", "folder", "late", "pipe"}));
}

// The output guard: every refused case leaves every file byte-identical.
class OutputGuardTest : public FileIoTest {
 protected:
  void SetUp() override {
    FileIoTest::SetUp();
    fs::create_directories(dir_ / "ds");
    std::ofstream(dir_ / "ds" / "manifest.json") << R"({"format": "tessel-dataset", "version": 1})";
    std::ofstream(dir_ / "ds" / "labels.bin") << "labels";
    fs::create_directories(dir_ / "ck");
    std::ofstream(dir_ / "ck" / "checkpoint.json") << R"({"kind": "tessel-gcn-checkpoint"})";
    std::ofstream(dir_ / "ck" / "tensors.bin") << "tensors";
    fs::create_directories(dir_ / "notes");
    std::ofstream(dir_ / "notes" / "mine.txt") << "mine";
    fs::create_directories(dir_ / "empty");
    std::ofstream(dir_ / "in.txt") << "input";
    std::ofstream(dir_ / "cora.edges.txt") << "0 1";  // a node-table prefix dir_/cora
    snapshot_ = Snapshot();
  }
  void TearDown() override {
    EXPECT_EQ(Snapshot(), snapshot_) << "a refused output changed a file";
    FileIoTest::TearDown();
  }
  std::map<std::string, std::string> Snapshot() const {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      out[e.path().string()] = e.is_regular_file() && !e.is_symlink() ? ReadFileToString(e.path()) : "(not a file)";
    }
    return out;
  }
  // The message of CheckOutputPath, "" when it passes.
  std::string Refusal(const fs::path& out, OutputKind kind, bool force, std::vector<fs::path> inputs = {},
                      std::vector<fs::path> outputs = {}) const {
    try {
      CheckOutputPath(out, kind, force, "--output", inputs, outputs);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path In(const char* name) const { return dir_ / name; }
  std::map<std::string, std::string> snapshot_;
};

using ::testing::HasSubstr;

TEST_F(OutputGuardTest, AnInputIsNeverAnOutputEvenWithForce) {
  const std::vector<fs::path> inputs{In("in.txt"), In("ds")};
  EXPECT_THAT(Refusal(In("in.txt"), OutputKind::kFile, true, inputs), HasSubstr("is an input of this command"));
  // Through a symbolic link, a hard link and `..`.
  fs::create_symlink(In("in.txt"), In("sym"));
  fs::create_hard_link(In("in.txt"), In("hard"));
  fs::create_directory_symlink(In("ds"), In("dslink"));
  snapshot_ = Snapshot();
  EXPECT_THAT(Refusal(In("sym"), OutputKind::kFile, true, inputs), HasSubstr("is an input of this command"));
  EXPECT_THAT(Refusal(In("hard"), OutputKind::kFile, true, inputs), HasSubstr("is an input of this command"));
  EXPECT_THAT(Refusal(dir_ / "ds" / ".." / "in.txt", OutputKind::kFile, true, inputs), HasSubstr("is an input"));
  // A hard link, elsewhere, to a file inside an input folder is that file under another name.
  fs::create_hard_link(In("ds") / "manifest.json", In("hard_manifest"));
  snapshot_ = Snapshot();
  EXPECT_THAT(Refusal(In("hard_manifest"), OutputKind::kFile, true, inputs),
              HasSubstr("is a hard link to a file inside"));
  // Inside an input folder (the issue's `--output DS/manifest.json --force`), also through a link to it.
  EXPECT_THAT(Refusal(In("ds") / "manifest.json", OutputKind::kFile, true, inputs), HasSubstr("lies inside"));
  EXPECT_THAT(Refusal(In("dslink") / "manifest.json", OutputKind::kFile, true, inputs), HasSubstr("lies inside"));
  EXPECT_THAT(Refusal(In("dslink") / "new.txt", OutputKind::kFile, true, inputs), HasSubstr("lies inside"));
  EXPECT_THAT(Refusal(In("ds") / "sub" / "new", OutputKind::kCheckpointFolder, true, inputs), HasSubstr("lies inside"));
  // An output folder that contains an input, and an input given as a link into the output.
  EXPECT_THAT(Refusal(dir_, OutputKind::kDatasetFolder, true, inputs), HasSubstr("contains"));
  EXPECT_THAT(Refusal(In("ds"), OutputKind::kDatasetFolder, true, {In("dslink") / "labels.bin"}),
              HasSubstr("contains"));
  EXPECT_THAT(Refusal(In("dslink"), OutputKind::kDatasetFolder, true, inputs), HasSubstr("is an input"));
  // A node-table prefix reads PREFIX.*: those files are inputs too.
  EXPECT_THAT(Refusal(In("cora.edges.txt"), OutputKind::kFile, true, {In("cora")}), HasSubstr("is an input"));
  // Two outputs of one run never overlap.
  EXPECT_THAT(Refusal(In("ck") / "metrics.json", OutputKind::kFile, true, {}, {In("ck")}),
              HasSubstr("lies inside " + In("ck").string() + ", another output of this command"));
  // Another output is never a prefix: a model "m" and its sidecar "m.json" do not overlap.
  EXPECT_EQ(Refusal(In("m.json"), OutputKind::kFile, false, {}, {In("m")}), "");
  // Unrelated paths pass.
  EXPECT_EQ(Refusal(In("new.txt"), OutputKind::kFile, false, inputs, {In("ck")}), "");
  EXPECT_EQ(Refusal(In("dsx"), OutputKind::kDatasetFolder, false, inputs), "");
}

TEST_F(OutputGuardTest, OnlyAPathOfTheKindBeingWrittenIsReplaced) {
  // A folder of other files is never replaced, not even with --force.
  EXPECT_THAT(Refusal(In("notes"), OutputKind::kCheckpointFolder, true),
              HasSubstr("is not a tessel checkpoint (it is a folder of other files), so it is not replaced even with "
                        "--force"));
  EXPECT_THAT(Refusal(In("notes"), OutputKind::kDatasetFolder, true), HasSubstr("is not a tessel dataset"));
  EXPECT_THAT(Refusal(In("notes"), OutputKind::kPartitionFolder, true), HasSubstr("is not a partition folder"));
  EXPECT_THAT(Refusal(In("notes"), OutputKind::kFile, true), HasSubstr("is a folder of other files, not a file"));
  // A dataset is no checkpoint and a checkpoint no dataset; a file no folder and a folder no file.
  EXPECT_THAT(Refusal(In("ds"), OutputKind::kCheckpointFolder, true), HasSubstr("(it is a tessel dataset)"));
  EXPECT_THAT(Refusal(In("ck"), OutputKind::kDatasetFolder, true), HasSubstr("(it is a tessel checkpoint)"));
  EXPECT_THAT(Refusal(In("in.txt"), OutputKind::kCheckpointFolder, true), HasSubstr("(it is a regular file)"));
  EXPECT_THAT(Refusal(In("empty"), OutputKind::kFile, true), HasSubstr("is an empty folder, not a file"));
  // Its own kind, or an empty folder, is replaced with --force only.
  EXPECT_EQ(Refusal(In("ck"), OutputKind::kCheckpointFolder, true), "");
  EXPECT_EQ(Refusal(In("ds"), OutputKind::kDatasetFolder, true), "");
  EXPECT_EQ(Refusal(In("empty"), OutputKind::kCheckpointFolder, true), "");
  EXPECT_EQ(Refusal(In("in.txt"), OutputKind::kFile, true), "");
  EXPECT_THAT(Refusal(In("in.txt"), OutputKind::kFile, false),
              HasSubstr("--output " + In("in.txt").string() + ": already exists; pass --force to replace it"));
  EXPECT_THAT(Refusal(In("empty"), OutputKind::kCheckpointFolder, false), HasSubstr("already exists; pass --force"));
  EXPECT_THAT(Refusal(In("ck"), OutputKind::kCheckpointFolder, false), HasSubstr("already exists; pass --force"));
  // Python names its argument and force=True.
  try {
    CheckOutputPath(In("in.txt"), OutputKind::kFile, false, "path");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("path " + In("in.txt").string() + ": already exists; pass force=True"));
  }
  EXPECT_TRUE(HoldsOutputOf(In("ck"), OutputKind::kCheckpointFolder));
  EXPECT_FALSE(HoldsOutputOf(In("ds"), OutputKind::kCheckpointFolder));
  // A damaged checkpoint.json is named as such.
  std::ofstream(In("notes") / "checkpoint.json") << "{not json";
  snapshot_ = Snapshot();
  EXPECT_THAT(Refusal(In("notes"), OutputKind::kCheckpointFolder, true), HasSubstr("checkpoint.json is damaged"));
}

TEST_F(OutputGuardTest, RelativeAndTrailingSlashPathsPassAndDotNamesAreRefusedBeforeAnyWork) {
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  // Relative paths and trailing slashes name the same outputs as their plain forms.
  EXPECT_EQ(Refusal("ck/", OutputKind::kCheckpointFolder, true), "");
  EXPECT_EQ(Refusal("./new_ck", OutputKind::kCheckpointFolder, false), "");
  EXPECT_EQ(Refusal("ds/../out.txt", OutputKind::kFile, false), "");
  EXPECT_THAT(Refusal("ds/", OutputKind::kDatasetFolder, true, {In("ds")}), HasSubstr("is an input"));
  // "." and ".." cannot be renamed by the writers: refused now, naming the folder to give instead.
  fs::current_path(In("ck"));
  EXPECT_THAT(Refusal(".", OutputKind::kCheckpointFolder, true),
              HasSubstr("--output .: a path ending in '.' or '..' cannot be replaced (the folder it names cannot be "
                        "renamed); give the folder by its name, such as " +
                        In("ck").string()));
  EXPECT_THAT(Refusal("../empty/..", OutputKind::kDatasetFolder, true), HasSubstr("is not a tessel dataset"));
  EXPECT_THAT(Refusal("../empty/.", OutputKind::kCheckpointFolder, true), HasSubstr("ending in '.' or '..'"));
  // The parent folder as the system resolves it: "missing/../x" needs the folder "missing".
  EXPECT_THAT(Refusal("../missing/../x", OutputKind::kCheckpointFolder, false),
              HasSubstr("the folder ../missing/.. does not exist"));
  fs::current_path(cwd);
}

TEST_F(OutputGuardTest, DevicesPipesAndMissingFoldersAreRefused) {
  for (const char* dev : {"/dev/null", "/dev/full"}) {
    if (!fs::exists(dev)) continue;
    EXPECT_THAT(Refusal(dev, OutputKind::kFile, true),
                HasSubstr(std::string(dev) + ": is a device, not a file; omit the option to write nothing"));
    EXPECT_THAT(Refusal(dev, OutputKind::kCheckpointFolder, true), HasSubstr("is a device"));
    EXPECT_TRUE(fs::is_character_file(dev));
  }
  if (fs::exists("/dev/null")) {
    fs::create_symlink("/dev/null", In("devlink"));
    EXPECT_THAT(Refusal(In("devlink"), OutputKind::kFile, true), HasSubstr("device"));
  }
  ASSERT_EQ(::mkfifo(In("pipe").c_str(), 0600), 0);
  EXPECT_THAT(Refusal(In("pipe"), OutputKind::kFile, true), HasSubstr("is a named pipe, not a file"));
  snapshot_ = Snapshot();
  EXPECT_THAT(Refusal(In("nowhere") / "out.txt", OutputKind::kFile, true),
              HasSubstr("the folder " + In("nowhere").string() + " does not exist"));
  EXPECT_EQ(Refusal("", OutputKind::kFile, false, {In("in.txt")}), "");  // no output asked for
}

TEST_F(OutputGuardTest, NothingIsWrittenInsideADatasetOrCheckpointEvenWhenItIsNoInput) {
  // A metrics file, a model's sidecar or a new folder inside a dataset or checkpoint (none of them an input of the
  // run) would change that folder behind its writer: refused, with --force too, also through a link.
  EXPECT_THAT(Refusal(In("ds") / "manifest.json", OutputKind::kFile, true), HasSubstr("is a tessel dataset"));
  EXPECT_THAT(Refusal(In("ds") / "new.json", OutputKind::kFile, true), HasSubstr("lies inside"));
  EXPECT_THAT(Refusal(In("ck") / "tensors.bin", OutputKind::kFile, true), HasSubstr("is a tessel checkpoint"));
  EXPECT_THAT(Refusal(In("ds") / "sub", OutputKind::kDatasetFolder, true), HasSubstr("lies inside"));
  fs::create_directory_symlink(In("ds"), In("dslink"));
  snapshot_ = Snapshot();
  EXPECT_THAT(Refusal(In("dslink") / "labels.bin", OutputKind::kFile, true), HasSubstr("is a tessel dataset"));
  // Beside them, and inside a folder of other files, outputs pass.
  EXPECT_EQ(Refusal(In("notes") / "mine.txt", OutputKind::kFile, true), "");
  EXPECT_EQ(Refusal(In("ds2"), OutputKind::kDatasetFolder, false), "");
}

TEST_F(FileIoTest, ReadFileToStringRefusesAHugeFileByName) {
  const fs::path p = dir_ / "manifest.json";
  std::ofstream(p) << "{}";
  fs::resize_file(p, uintmax_t{1} << 40);  // 1 TiB of holes: more than the machine's memory
  try {
    (void)ReadFileToString(p);
    ADD_FAILURE() << "read a 1 TiB file";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(p.string()));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("check that this is the right file"));
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
