// spdlog-backed implementation of core/log.h: one stderr logger, a rank-aware pattern.
// Ranks other than 0 are quiet below Warn unless asked, so K ranks do not print K copies of progress.
#include "core/log.h"

#include <atomic>
#include <memory>

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

spdlog::level::level_enum ToSpd(Level level) {
  switch (level) {
    case Level::kTrace:
      return spdlog::level::trace;
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

Level ParseLevel(std::string_view name) {
  if (name == "trace") return Level::kTrace;
  if (name == "debug") return Level::kDebug;
  if (name == "info") return Level::kInfo;
  if (name == "warn") return Level::kWarn;
  if (name == "error") return Level::kError;
  if (name == "off") return Level::kOff;
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
