// Cooperative stop of long work. interrupt::Request() (async-signal-safe: one atomic store) asks every training loop
// of the process to stop; the loops call interrupt::Check() at their step boundaries (a GCN step, every 1024 SMO
// iterations, a batched solver round), which throws interrupt::Interrupted. The Python bindings request a stop from
// their SIGINT handler (Ctrl-C) and turn Interrupted into KeyboardInterrupt; the CLI keeps the default SIGINT
// behaviour (the process ends). Unwinding releases every resource as any other error does.
#pragma once

#include <atomic>
#include <string_view>

#include "core/error.h"

namespace tessel::interrupt {

// Thrown by Check() once a stop was requested. An Error, so code that reports errors reports it too.
class Interrupted : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline std::atomic<bool> g_requested{false};
}  // namespace detail

// Asks the running work to stop at its next check point. Safe in a signal handler.
inline void Request() noexcept { detail::g_requested.store(true, std::memory_order_relaxed); }
// Forgets a request (before new work starts).
inline void Clear() noexcept { detail::g_requested.store(false, std::memory_order_relaxed); }
inline bool Requested() noexcept { return detail::g_requested.load(std::memory_order_relaxed); }

// Throws Interrupted naming `what` (the work that stopped) when a stop was requested; one relaxed load otherwise.
inline void Check(std::string_view what) {
  if (Requested()) throw Interrupted(fmt::format("{}: interrupted", what));
}

static_assert(std::atomic<bool>::is_always_lock_free, "interrupt::Request must be async-signal-safe");

}  // namespace tessel::interrupt
