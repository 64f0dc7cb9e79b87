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

// Logging at one level: log::Info("read {} rows", n) formats the message only when the level is enabled (the format
// string checked at compile time, as fmt::format checks it).
template <Level kLevel>
struct LevelLogger {
  template <typename... Args>
  void operator()(fmt::format_string<Args...> f, Args&&... args) const {
    if (Enabled(kLevel)) Write(kLevel, fmt::format(f, std::forward<Args>(args)...));
  }
};
inline constexpr LevelLogger<Level::kDebug> Debug{};
inline constexpr LevelLogger<Level::kInfo> Info{};
inline constexpr LevelLogger<Level::kWarn> Warn{};
inline constexpr LevelLogger<Level::kError> Error{};

}  // namespace tessel::log
