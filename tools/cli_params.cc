// ParamOptions lookup and the integer-list conversions behind tools/cli_params.h.
#include "tools/cli_params.h"

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

std::string JoinInts(const std::vector<int>& values) { return fmt::format("{}", fmt::join(values, ",")); }

std::vector<int> ParseIntList(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  datasets::Fields fields(text, ',');
  std::string_view f;
  while (fields.Next(&f)) {
    int64_t v = 0;
    TESSEL_CHECK(datasets::ParseInt64(f, &v) && v >= INT32_MIN && v <= INT32_MAX,
                 "{}: '{}' is not an integer; give a comma-separated list (e.g. 10,25)", flag, f);
    out.push_back(static_cast<int>(v));
  }
  return out;
}

}  // namespace cli_detail
}  // namespace tessel::tools
