// The peer-failure hook and its SIGTERM handler (core/peer_failure.h).
#include "core/peer_failure.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <utility>

namespace tessel::peer_failure {
namespace {

std::atomic<bool> g_term{false};
std::atomic<bool> g_ran{false};
std::mutex g_mutex;
std::function<void()>& Hook() {
  static std::function<void()> hook;
  return hook;
}

extern "C" void OnTerm(int) { g_term.store(true, std::memory_order_relaxed); }

}  // namespace

void SetHook(std::function<void()> hook) {
  std::lock_guard lock(g_mutex);
  const bool set = static_cast<bool>(hook);
  Hook() = std::move(hook);
  std::signal(SIGTERM, set ? OnTerm : SIG_DFL);
}

bool HasHook() {
  std::lock_guard lock(g_mutex);
  return static_cast<bool>(Hook());
}

void RunHook(std::string_view why) {
  if (g_ran.exchange(true)) return;
  std::function<void()> hook;
  {
    std::lock_guard lock(g_mutex);
    hook = Hook();
  }
  if (!hook) return;
  std::fprintf(stderr, "tessel: %.*s; saving the state of the last completed step\n", static_cast<int>(why.size()),
               why.data());
  try {
    hook();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessel: the just-in-time state was not written: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "tessel: the just-in-time state was not written\n");
  }
  std::fflush(stderr);
}

bool TermRequested() { return g_term.load(std::memory_order_relaxed); }

}  // namespace tessel::peer_failure
