// Shared helpers of the libFuzzer targets (tests/fuzz/fuzz_*.cc): a per-process scratch folder that the readers'
// input files are written into (reused between executions), splitting one input into several files, and the
// one rule of every target: success or tessel::Error is an expected outcome, anything else is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "datasets/text_input.h"

namespace tessel::fuzz {

namespace fs = std::filesystem;

// Separates the files of one input (LINQS .content/.cites, the node-table parts, the OGB CSV files, ...). Short
// and printable, so seeds stay readable and the mutators can make and break it.
inline constexpr std::string_view kSeparator = "\n@@\n";

// $TMPDIR (else /tmp)/tessel-fuzz-<target>-<pid>, created on first use and removed at exit.
inline const fs::path& ScratchDir(std::string_view target) {
  static const fs::path dir = [&] {
    const char* tmp = std::getenv("TMPDIR");
    fs::path d = fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
                 ("tessel-fuzz-" + std::string(target) + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    // Quiet: warnings of the readers would flood the fuzzer's output.
    log::SetLevel(log::Level::kOff);
    // The memory budget (--max-memory) well below the fuzzer's -rss_limit_mb=2048: a size declared by an input that
    // needs more (a node id of 10^9 in a 20-byte edge list) is refused with tessel::Error by the budget checks, as the
    // CLI would, instead of an out-of-memory report or a slow unit; no honest input of a few KB comes near it.
    memory::SetLimit(int64_t{512} << 20);
    // Compressed inputs stream through 64-byte windows, so their piece boundaries fall inside the fuzzed text.
    datasets::SetDefaultStreamWindow(64);
    static const struct Cleanup {
      fs::path path;
      ~Cleanup() {
        std::error_code ec;
        fs::remove_all(path, ec);
      }
    } cleanup{d};
    return d;
  }();
  return dir;
}

inline void WriteFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();  // the harness itself failed (disk full?): not a finding of the reader
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Splits `input` at kSeparator into exactly `parts` pieces: missing ones are empty, the last takes the rest.
inline std::vector<std::string_view> SplitParts(std::string_view input, size_t parts) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const size_t at = input.find(kSeparator);
    if (at == std::string_view::npos) break;
    out.push_back(input.substr(0, at));
    input.remove_prefix(at + kSeparator.size());
  }
  out.push_back(input);
  out.resize(parts);
  return out;
}

// Writes `bytes` to `path`, or removes `path` when `present` is false (an absent optional file).
inline void WriteOrRemove(const fs::path& path, std::string_view bytes, bool present) {
  if (present) {
    WriteFile(path, bytes);
  } else {
    std::error_code ec;
    fs::remove(path, ec);
  }
}

// When the environment variable TESSEL_FUZZ_WRITE_SEEDS names a folder, the targets built on a valid template
// (native, partition, checkpoint) write their valid inputs there as seeds (tools/fuzz.sh seeds the corpus so).
inline void MaybeWriteSeed(const std::string& name, std::string_view bytes) {
  const char* dir = std::getenv("TESSEL_FUZZ_WRITE_SEEDS");
  if (dir == nullptr || *dir == '\0') return;
  fs::create_directories(dir);
  WriteFile(fs::path(dir) / name, bytes);
}

// Runs `body`; a tessel::Error is the reader refusing bad input (expected). Every other exception escapes and
// aborts the process: libFuzzer reports it as a crash. TESSEL_FUZZ_VERBOSE=1 prints the refusals (to see what a
// corpus input exercises).
template <class F>
int Run(F&& body) {
  static const bool verbose = std::getenv("TESSEL_FUZZ_VERBOSE") != nullptr;
  try {
    body();
    if (verbose) std::fprintf(stderr, "accepted\n");
  } catch (const tessel::Error& e) {
    if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
  }
  return 0;
}

inline std::string_view AsText(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

}  // namespace tessel::fuzz
