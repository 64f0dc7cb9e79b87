// tessel::Error, the one exception type library code throws, and the TESSEL_CHECK macro.
// Messages carry context: "file:line: what is wrong" for input files, "what: why (fix)" otherwise.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tessel {

// `text` with every NUL byte written as `\x00`. what() is a C string, so a NUL (from a file's content or name)
// would otherwise cut the message short wherever it is read (the "error:" line, the log, Python's exception).
inline std::string WithoutNul(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\0') {
      out += "\\x00";
    } else {
      out += c;
    }
  }
  return out;
}

class Error : public std::runtime_error {
 public:
  // NUL bytes in `message` are kept as `\x00` (WithoutNul): the whole message survives what().
  explicit Error(const std::string& message) : std::runtime_error(WithoutNul(message)) {}

  // An error in an input file at a 1-based line ("cora.cites:1042: node id 'x7' is not an integer").
  static Error AtLine(std::string_view file, int64_t line, std::string_view what) {
    return Error(fmt::format("{}:{}: {}", file, line, what));
  }
  // An error about a whole file ("data/manifest.json: missing key 'num_nodes'").
  static Error InFile(std::string_view file, std::string_view what) { return Error(fmt::format("{}: {}", file, what)); }
};

// `text` made safe for a terminal: control bytes other than newline and tab (ESC above all: names read from files
// could otherwise recolour or rewrite the user's terminal) become `\xNN`. Applied where messages reach stderr or
// stdout: the "error:" line, the log, `tessel info`.
inline std::string PrintableText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace tessel

// Throws tessel::Error with a fmt-formatted message when `cond` is false.
#define TESSEL_CHECK(cond, ...)                                   \
  do {                                                            \
    if (!(cond)) throw ::tessel::Error(fmt::format(__VA_ARGS__)); \
  } while (0)
