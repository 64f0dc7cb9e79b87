// ParamOptions lookup and the strict number, text and integer-list conversions behind tools/cli_params.h.
#include "tools/cli_params.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "core/error.h"
#include "datasets/text_input.h"

namespace tessel::tools {

CLI::Option* ParamOptions::operator[](std::string_view name) const {
  auto it = options_.find(name);
  TESSEL_CHECK(it != options_.end(), "no command-line option is declared for parameter '{}'", name);
  return it->second;
}

namespace cli_detail {
namespace {

// A value written like a number that is not a plain integer (1e8, 2.5, 0x10, inf): named in the message.
bool LooksLikeNumber(std::string_view text) {
  if (text.empty()) return false;
  char* end = nullptr;
  const std::string copy(text);
  (void)std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}

Error NotAnInteger(const std::string& text, const std::string& name, const std::string& range) {
  if (text.empty()) return Error(fmt::format("{}: the value is empty; give an integer in {}", name, range));
  return Error(fmt::format(
      "{} {}: not an integer{}; give an integer in {}", name, PrintableText(text),
      LooksLikeNumber(text) ? " (write whole numbers in plain digits, e.g. 100000000, not 1e8)" : "", range));
}

Error OutOfRange(const std::string& text, const std::string& name, const std::string& range) {
  return Error(fmt::format("{} {}: out of range; give an integer in {}", name, PrintableText(text), range));
}

std::string FloatRange(double lo, double hi) {
  const bool any_lo = lo <= std::numeric_limits<double>::lowest() || lo <= -std::numeric_limits<float>::max();
  const bool any_hi = hi >= std::numeric_limits<double>::max() || hi >= std::numeric_limits<float>::max();
  if (any_lo && any_hi) return "a finite number";
  if (any_lo) return fmt::format("a finite number <= {}", hi);
  if (any_hi) return fmt::format("a finite number >= {}", lo);
  return fmt::format("a number in [{}, {}]", lo, hi);
}

}  // namespace

std::string DisplayName(const std::string& flag) {
  std::string first;
  datasets::Fields names(flag, ',');
  std::string_view n;
  while (names.Next(&n)) {
    while (!n.empty() && n.front() == ' ') n.remove_prefix(1);
    while (!n.empty() && n.back() == ' ') n.remove_suffix(1);
    if (n.starts_with("!")) continue;  // a negated flag name
    if (n.starts_with("--")) return std::string(n);
    if (first.empty()) first = std::string(n);
  }
  return first.empty() ? flag : first;
}

// Plain decimal digits (an optional '+'; a '-' only where T is signed, or "-0") within [lo, hi] of T: never wrapped,
// truncated or read as a float.
template <typename T>
T ParseDecimal(const std::string& text, const std::string& name, T lo, T hi) {
  const std::string range = fmt::format("[{}, {}]", lo, hi);
  const auto digit_first = [](std::string_view d) { return !d.empty() && d.front() >= '0' && d.front() <= '9'; };
  std::string_view digits(text);
  if (digits.starts_with('+')) {
    digits.remove_prefix(1);
    if (!digit_first(digits)) throw NotAnInteger(text, name, range);
  }
  if constexpr (std::is_unsigned_v<T>) {
    if (digits.starts_with('-')) {
      // A negative value is refused, never wrapped into a huge unsigned one; "-0" is 0.
      const std::string_view rest = digits.substr(1);
      if (rest.empty() || rest.find_first_not_of("0123456789") != std::string_view::npos) {
        throw NotAnInteger(text, name, range);
      }
      if (rest.find_first_not_of('0') != std::string_view::npos || lo > 0) throw OutOfRange(text, name, range);
      return 0;
    }
    if (!digit_first(digits)) throw NotAnInteger(text, name, range);
  }
  T v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 10);
  if (ec == std::errc::result_out_of_range && end == digits.data() + digits.size()) {
    throw OutOfRange(text, name, range);
  }
  if (ec != std::errc() || end != digits.data() + digits.size()) throw NotAnInteger(text, name, range);
  if (v < lo || v > hi) throw OutOfRange(text, name, range);
  return v;
}

int64_t ParseSigned(const std::string& text, const std::string& name, int64_t lo, int64_t hi) {
  return ParseDecimal<int64_t>(text, name, lo, hi);
}

uint64_t ParseUnsigned(const std::string& text, const std::string& name, uint64_t lo, uint64_t hi) {
  return ParseDecimal<uint64_t>(text, name, lo, hi);
}

double ParseFinite(const std::string& text, const std::string& name, double lo, double hi) {
  const std::string range = FloatRange(lo, hi);
  TESSEL_CHECK(!text.empty(), "{}: the value is empty; give {}", name, range);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  TESSEL_CHECK(end == text.c_str() + text.size() && !std::isspace(static_cast<unsigned char>(text.front())),
               "{} {}: not a number; give {}", name, PrintableText(text), range);
  TESSEL_CHECK(std::isfinite(v), "{} {}: not finite; give {}", name, PrintableText(text), range);
  TESSEL_CHECK(v >= lo && v <= hi, "{} {}: out of range; give {}", name, PrintableText(text), range);
  return v;
}

void CheckNotEmpty(const std::string& text, const std::string& name) {
  TESSEL_CHECK(!text.empty(), "{}: the value is empty; give a value, or leave {} out for its default", name, name);
}

std::string JoinInts(const std::vector<int>& values) { return fmt::format("{}", fmt::join(values, ",")); }

std::vector<int> ParseIntList(const std::string& text, const std::string& flag) {
  TESSEL_CHECK(!text.empty(), "{}: the value is empty; give a comma-separated list of integers (e.g. 10,25)", flag);
  std::vector<int> out;
  datasets::Fields fields(text, ',');
  std::string_view f;
  while (fields.Next(&f)) {
    int64_t v = 0;
    TESSEL_CHECK(datasets::ParseInt64(f, &v),
                 "{}: '{}' is not an integer; give a comma-separated list of integers (e.g. 10,25)", flag,
                 PrintableText(f));
    TESSEL_CHECK(v >= INT32_MIN && v <= INT32_MAX,
                 "{}: {} is out of range; give a comma-separated list of integers in [{}, {}] (e.g. 10,25)", flag, f,
                 INT32_MIN, INT32_MAX);
    out.push_back(static_cast<int>(v));
  }
  return out;
}

}  // namespace cli_detail
}  // namespace tessel::tools
