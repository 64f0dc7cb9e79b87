// Logging for library and tools: levels, a rank prefix once several ranks run, always on stderr.
// Thin wrapper over spdlog so callers never include spdlog directly.
#pragma once

#include <string_view>

#include <fmt/format.h>

namespace tessel::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Parses "trace|debug|info|warn|error|off"; throws tessel::Error naming the accepted values otherwise.
Level ParseLevel(std::string_view name);
void SetLevel(Level level);
Level GetLevel();
// Once size > 1, every line is prefixed with "[rank r/size]"; only rank 0 logs at Info unless `all_ranks`.
void SetRank(int rank, int size, bool all_ranks = false);

void Write(Level level, std::string_view message);
bool Enabled(Level level);

template <typename... Args>
void Debug(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kDebug)) Write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Info(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kInfo)) Write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Warn(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kWarn)) Write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Error(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kError)) Write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace tessel::log
