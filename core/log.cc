// spdlog-backed implementation of core/log.h: one stderr logger, a rank-aware pattern.
// Ranks other than 0 are quiet below Warn unless asked, so K ranks do not print K copies of progress.
#include "core/log.h"

#include <atomic>
#include <memory>
#include <string_view>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "core/error.h"

namespace tessel::log {
namespace {

std::atomic<Level> g_level{Level::kInfo};
std::atomic<int> g_rank{0};
std::atomic<bool> g_all_ranks{false};

spdlog::logger& Logger() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_color_mt("tessel");
    l->set_pattern("[%H:%M:%S.%e] %^%l%$ %v");
    l->set_level(spdlog::level::trace);
    return l;
  }();
  return *logger;
}

// Every level once: its --log-level name and spdlog's level.
struct LevelInfo {
  Level level;
  std::string_view name;
  spdlog::level::level_enum spd;
};
constexpr LevelInfo kLevels[] = {
    {Level::kTrace, "trace", spdlog::level::trace}, {Level::kDebug, "debug", spdlog::level::debug},
    {Level::kInfo, "info", spdlog::level::info},    {Level::kWarn, "warn", spdlog::level::warn},
    {Level::kError, "error", spdlog::level::err},   {Level::kOff, "off", spdlog::level::off}};

spdlog::level::level_enum ToSpd(Level level) {
  for (const LevelInfo& l : kLevels) {
    if (l.level == level) return l.spd;
  }
  return spdlog::level::info;
}

}  // namespace

Level ParseLevel(std::string_view name) {
  for (const LevelInfo& l : kLevels) {
    if (l.name == name) return l.level;
  }
  throw tessel::Error(fmt::format("unknown log level '{}' (use trace, debug, info, warn, error or off)", name));
}

void SetLevel(Level level) { g_level = level; }
Level GetLevel() { return g_level; }

void SetRank(int rank, int size, bool all_ranks) {
  g_rank = rank;
  g_all_ranks = all_ranks;
  if (size > 1) {
    Logger().set_pattern(fmt::format("[%H:%M:%S.%e] [rank {}/{}] %^%l%$ %v", rank, size));
  }
}

bool Enabled(Level level) {
  if (level < g_level.load()) return false;
  if (g_rank.load() != 0 && !g_all_ranks.load() && level < Level::kWarn) return false;
  return true;
}

void Write(Level level, std::string_view message) { Logger().log(ToSpd(level), "{}", PrintableText(message)); }

}  // namespace tessel::log
