// Which options the caller gave (the command line's, or the Python keywords), for rules that depend on it ("--fanouts
// applies to sampled mini-batches") and for messages; filled by the front end, by declared parameter name.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace tessel::app {

class Given {
 public:
  void Add(std::string_view name) { names_.emplace(name); }
  bool operator()(std::string_view name) const { return names_.contains(name); }

 private:
  std::set<std::string, std::less<>> names_;
};

}  // namespace tessel::app
