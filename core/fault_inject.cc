// TESSEL_FAULT: parsed once, matched by point and rank, counted, and acted on (core/fault_inject.h).
#include "core/fault_inject.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "core/name_table.h"

namespace tessel::fault {
namespace {

constexpr std::string_view kPoints[] = {"allreduce", "broadcast", "allgatherv", "alltoallv", "barrier",
                                        "send",      "recv",      "sendrecv",   "epoch",     "step",
                                        "write",     "start",     "finalize"};
constexpr std::string_view kGrammar =
    "TESSEL_FAULT=ACTION@POINT[,rank=R][,after=N] with ACTION stall, kill, fail, enospc or truncate (the last two "
    "at write only), e.g. stall@allreduce,rank=1,after=5";

bool ParseCount(std::string_view text, int64_t* out) {
  if (text.empty() || text.size() > 12) return false;
  int64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// Action's names, indexed by its value: what TESSEL_FAULT takes (every one but "none") and what the log prints.
constexpr std::array<std::string_view, 6> kActionNames{"none", "stall", "kill", "fail", "enospc", "truncate"};
static_assert(kActionNames.size() == static_cast<size_t>(Action::kTruncate) + 1);

std::string_view ActionName(Action a) { return NameAt(kActionNames, a, "none"); }

int ProcessRank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const char* v = std::getenv(var);
    int64_t r = 0;
    if (v != nullptr && ParseCount(v, &r)) return static_cast<int>(r);
  }
  return 0;
}

struct State {
  Spec spec;
  std::string error;  // the parse error of a malformed TESSEL_FAULT
  std::atomic<int64_t> calls{0};
};

State& GetState() {
  static State* state = [] {
    auto* s = new State();  // never destroyed: hooks may run during static destruction
    const char* text = std::getenv("TESSEL_FAULT");
    try {
      if (text != nullptr && *text != '\0') s->spec = ParseSpec(text);
    } catch (const Error& e) {
      s->error = e.what();
    }
    return s;
  }();
  return *state;
}

// One line on stderr before the process stops or dies, so a test's output shows what was injected.
void Announce(const Spec& spec, int rank) {
  std::fprintf(stderr, "tessel: injected %.*s at %.*s on rank %d (TESSEL_FAULT)\n",
               static_cast<int>(ActionName(spec.action).size()), ActionName(spec.action).data(),
               static_cast<int>(spec.point.size()), spec.point.data(), rank);
  std::fflush(stderr);
}

}  // namespace

std::string_view KnownPoints() {
  return "allreduce, broadcast, allgatherv, alltoallv, barrier, send, recv, sendrecv, epoch, write, start, finalize";
}

Spec ParseSpec(std::string_view text) {
  const auto fail = [&](std::string_view why) {
    throw Error(fmt::format("TESSEL_FAULT='{}': {}; the form is {}", text, why, kGrammar));
  };
  Spec spec;
  size_t comma = text.find(',');
  const std::string_view head = text.substr(0, comma);
  const size_t at = head.find('@');
  if (at == std::string_view::npos) fail("no '@' between the action and the point");
  const std::string_view action = head.substr(0, at);
  const std::string_view point = head.substr(at + 1);
  const std::optional<Action> parsed = ValueNamed<Action>(kActionNames, action);
  if (!parsed || *parsed == Action::kNone) fail(fmt::format("unknown action '{}'", action));
  spec.action = parsed.value_or(Action::kNone);
  bool known = false;
  for (const std::string_view p : kPoints) known = known || p == point;
  if (!known) fail(fmt::format("unknown point '{}' (known: {})", point, KnownPoints()));
  spec.point = std::string(point);
  if ((spec.action == Action::kEnospc || spec.action == Action::kTruncate) && point != "write") {
    fail(fmt::format("{} applies to the write point only", action));
  }
  bool have_rank = false;
  bool have_after = false;
  while (comma != std::string_view::npos) {
    const size_t next = text.find(',', comma + 1);
    const std::string_view field = text.substr(comma + 1, next == std::string_view::npos ? next : next - comma - 1);
    comma = next;
    int64_t value = 0;
    if (field.starts_with("rank=") && !have_rank) {
      if (!ParseCount(field.substr(5), &value) || value > 1 << 24) fail(fmt::format("'{}' is not a rank", field));
      spec.rank = static_cast<int>(value);
      have_rank = true;
    } else if (field.starts_with("after=") && !have_after) {
      if (!ParseCount(field.substr(6), &value)) fail(fmt::format("'{}' is not a count of calls", field));
      spec.after = value;
      have_after = true;
    } else {
      fail(fmt::format("unexpected '{}' (rank=R and after=N may each appear once)", field));
    }
  }
  return spec;
}

void InitFromEnvironment() {
  const State& s = GetState();
  if (!s.error.empty()) throw Error(s.error);
}

namespace detail {

const bool g_armed = [] {
  const char* text = std::getenv("TESSEL_FAULT");
  return text != nullptr && *text != '\0';
}();

Action Hit(std::string_view point, int rank) {
  State& s = GetState();
  if (!s.error.empty()) throw Error(s.error);
  if (point != s.spec.point) return Action::kNone;
  if (rank < 0) rank = ProcessRank();
  if (s.spec.rank >= 0 && rank != s.spec.rank) return Action::kNone;
  if (s.calls.fetch_add(1) != s.spec.after) return Action::kNone;  // fires once, at call after + 1
  switch (s.spec.action) {
    case Action::kStall:
      Announce(s.spec, rank);
      for (;;) {
        ::raise(SIGSTOP);  // stopped until SIGCONT; if continued, stop again: a stall does not end by itself
        ::sleep(1);
      }
    case Action::kKill:
      Announce(s.spec, rank);
      ::raise(SIGKILL);
      std::abort();
    case Action::kFail:
      throw Error(fmt::format("injected fault at {} on rank {} (TESSEL_FAULT)", point, rank));
    default:
      return s.spec.action;
  }
}

}  // namespace detail
}  // namespace tessel::fault
