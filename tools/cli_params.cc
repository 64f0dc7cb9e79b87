// ParamOptions lookup and the strict number, text and integer-list conversions behind tools/cli_params.h.
#include "tools/cli_params.h"

#include <algorithm>
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
namespace {

std::string Normalized(std::string_view option) {
  while (!option.empty() && option.front() == '-') option.remove_prefix(1);
  std::string out(option);
  for (char& c : out) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string SuggestOption(std::string_view unknown, const std::vector<KnownOption>& known) {
  const std::string u = Normalized(unknown);
  if (u.empty()) return "";
  const std::vector<std::string> u_words = Words(u);
  std::string initials;
  for (const std::string& w : u_words) initials += w.front();
  const auto first = [&](const auto& match) -> std::string {
    for (const KnownOption& k : known)
      if (match(Normalized(k.name), k)) return k.name;
    return "";
  };
  std::string found = first([&](const std::string& n, const KnownOption&) { return n == u; });
  if (found.empty()) {  // the closest within about one edit in four letters
    size_t best = std::max<size_t>(1, u.size() / 4) + 1;
    for (const KnownOption& k : known) {
      const size_t d = EditDistance(u, Normalized(k.name));
      if (d < best) {
        best = d;
        found = k.name;
      }
    }
  }
  if (found.empty() && u_words.size() > 1)
    found = first([&](const std::string& n, const KnownOption&) { return n == initials; });
  if (found.empty() && u.size() >= 3) {
    found = first([&](const std::string& n, const KnownOption&) {
      return n.size() >= 3 && (n.starts_with(u) || u.starts_with(n));
    });
  }
  if (found.empty()) {
    found = first([&](const std::string&, const KnownOption& k) {
      const std::vector<std::string> d = Words(k.description);
      return std::all_of(u_words.begin(), u_words.end(),
                         [&](const std::string& w) { return std::find(d.begin(), d.end(), w) != d.end(); });
    });
  }
  return found;
}

std::vector<KnownOption> SelectedOptions(const CLI::App& app) {
  std::vector<KnownOption> out;
  for (const CLI::App* sub : app.get_subcommands()) {  // the selected ones, innermost options first
    std::vector<KnownOption> inner = SelectedOptions(*sub);
    out.insert(out.end(), inner.begin(), inner.end());
  }
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& name : o->get_lnames()) out.push_back({"--" + name, o->get_description()});
  }
  return out;
}

}  // namespace tessel::tools
