// A test fixture with a scratch folder of its own (root_, made empty before each test and removed after) and the
// helpers the partition-folder tests share: every file of a folder with its bytes, and the message of an Error.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "core/file_io.h"

namespace tessel::partition::fixtures {

class ScratchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            fmt::format("tessel-part-{}-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // Every file under `dir`, by relative path, with its bytes.
  static std::map<std::string, std::string> Files(const std::filesystem::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      if (e.is_regular_file()) out[std::filesystem::relative(e.path(), dir).string()] = ReadFileToString(e.path());
    }
    return out;
  }
  // The message of the tessel::Error fn throws; "" when it throws none (any other exception fails the test).
  static std::string ErrorOf(const std::function<void()>& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path root_;
};

}  // namespace tessel::partition::fixtures
