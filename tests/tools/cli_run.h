// Running the `tessel` binary from a test: a scratch folder per test and process, and one run with stdout, stderr
// and the exit status captured (tests/tools/cli_test.cc, tests/tools/fault_cli_test.cc).
#pragma once

// GCC 12 at -O3 reports a false -Wrestrict inside std::string's "literal" + rvalue (GCC bug 105329), here and in the
// tests that include this (the pragma holds for the rest of the file).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tessel::tools::testing {

namespace fs = std::filesystem;

// A folder name per test and process (parameterised test names hold '/'; builds may run the tests at once).
inline fs::path UniqueTempDir(const std::string& prefix) {
  std::string name = prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  return fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
}

inline std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `ENV tessel ARGS` through the shell (ARGS are shell words; ENV is an `env ...` prefix or empty), with stdout
// and stderr captured in files under `scratch`.
inline Result RunTessel(const std::string& env, const std::string& args, const fs::path& scratch) {
  const fs::path out = scratch / "stdout.txt";
  const fs::path err = scratch / "stderr.txt";
  const std::string cmd = env + "'" + TESSEL_BINARY + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

}  // namespace tessel::tools::testing
