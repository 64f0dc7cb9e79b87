// NetworkModel: parsing "BANDWIDTH,LATENCY" with units, and the alpha-beta time of recorded call costs.
#include "comm/net_model.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"

namespace tessel::comm {
namespace {

// Splits "12.5Gbit" into 12.5 and "Gbit"; throws when no number leads.
std::pair<double, std::string_view> NumberAndUnit(std::string_view text, std::string_view flag,
                                                  std::string_view whole) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  TESSEL_CHECK(ec == std::errc() && std::isfinite(v) && v > 0,
               "{} {}: '{}' does not start with a positive number (form BANDWIDTH,LATENCY, e.g. 10Gbit,5us)", flag,
               whole, text);
  return {v, text.substr(static_cast<size_t>(p - text.data()))};
}

}  // namespace

NetworkOption NetworkOption::FromText(std::string_view text, std::string_view option) {
  NetworkOption o;
  o.text = std::string(text);
  if (!text.empty()) o.model = NetworkModel::Parse(text, option);
  return o;
}

NetworkModel NetworkModel::Parse(std::string_view whole, std::string_view flag) {
  std::string_view text = whole;
  bool shared = false;
  double burst = 0;
  // Options after BANDWIDTH,LATENCY: "shared" and "burst=SIZE", in either order, each once.
  for (size_t last = text.rfind(','); last != std::string_view::npos && text.find(',') != last;
       last = text.rfind(',')) {
    const std::string_view tail = text.substr(last + 1);
    if (tail == "shared" && !shared) {
      shared = true;
    } else if (tail.starts_with("burst=") && burst == 0) {
      const auto [v, unit] = NumberAndUnit(tail.substr(6), flag, whole);
      constexpr std::array<std::pair<std::string_view, double>, 5> kSize{
          {{"B", 1.0}, {"KB", 1e3}, {"MB", 1e6}, {"KiB", 1024.0}, {"MiB", 1024.0 * 1024}}};
      for (const auto& [name, scale] : kSize) {
        if (unit == name) burst = v * scale;
      }
      TESSEL_CHECK(burst > 0, "{} {}: unknown burst size unit '{}' (B, KB, MB, KiB or MiB, e.g. burst=256KiB)", flag,
                   whole, unit);
    } else {
      throw Error(fmt::format(
          "{} {}: after BANDWIDTH,LATENCY come only 'shared' (one link all ranks take turns on) and 'burst=SIZE' (a "
          "token bucket, e.g. burst=256KiB), each at most once; got '{}'",
          flag, whole, tail));
    }
    text = text.substr(0, last);
  }
  const size_t comma = text.find(',');
  TESSEL_CHECK(comma != std::string_view::npos,
               "{} {}: give BANDWIDTH,LATENCY, for example 10Gbit,5us (bandwidth in Gbit/Mbit/Kbit/bit or GB/MB/KB/B "
               "per second, latency in s/ms/us/ns)",
               flag, text);
  NetworkModel m;
  const auto [bw, bw_unit] = NumberAndUnit(text.substr(0, comma), flag, text);
  constexpr std::array<std::pair<std::string_view, double>, 8> kBandwidth{{{"Gbit", 1e9 / 8},
                                                                           {"Mbit", 1e6 / 8},
                                                                           {"Kbit", 1e3 / 8},
                                                                           {"bit", 1.0 / 8},
                                                                           {"GB", 1e9},
                                                                           {"MB", 1e6},
                                                                           {"KB", 1e3},
                                                                           {"B", 1.0}}};
  for (const auto& [unit, scale] : kBandwidth) {
    if (bw_unit == unit) m.bytes_per_second = bw * scale;
  }
  TESSEL_CHECK(m.bytes_per_second > 0, "{} {}: unknown bandwidth unit '{}' (Gbit, Mbit, Kbit, bit, GB, MB, KB or B)",
               flag, text, bw_unit);
  const auto [lat, lat_unit] = NumberAndUnit(text.substr(comma + 1), flag, text);
  constexpr std::array<std::pair<std::string_view, double>, 4> kLatency{
      {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}}};
  for (const auto& [unit, scale] : kLatency) {
    if (lat_unit == unit) m.latency_seconds = lat * scale;
  }
  TESSEL_CHECK(m.latency_seconds > 0, "{} {}: unknown latency unit '{}' (s, ms, us or ns)", flag, text, lat_unit);
  m.shared = shared;
  m.burst_bytes = burst;
  return m;
}

double NetworkModel::LinkBytes(const CallCost& cost, int ranks) const {
  return shared ? cost.volume * std::max(ranks, 1) : cost.volume;
}

double NetworkModel::Seconds(const CallCost& cost, int ranks) const {
  return cost.latency * latency_seconds + LinkBytes(cost, ranks) / bytes_per_second;
}

double NetworkModel::CallSeconds(const CallCost& cost, int ranks, double idle_seconds, double* tokens) const {
  if (burst_bytes <= 0) return Seconds(cost, ranks);
  *tokens = std::min(burst_bytes, *tokens + std::max(idle_seconds, 0.0) * bytes_per_second);
  const double at_once = std::min(*tokens, LinkBytes(cost, ranks));
  *tokens -= at_once;
  return Seconds(cost, ranks) - at_once / bytes_per_second;
}

void NetworkModel::Attach(ByteCounter& counter, int ranks) const {
  counter.SetCallModel([model = *this, ranks, tokens = burst_bytes](const CallCost& cost, double idle) mutable {
    return model.CallSeconds(cost, ranks, idle, &tokens);
  });
}

double SynchronousSeconds(std::span<const double> slowest, std::span<const double> need_sum, int ranks,
                          double usable_cores) {
  TESSEL_CHECK(ranks >= 1 && usable_cores > 0, "time model: {} ranks with {} usable cores", ranks, usable_cores);
  double total = 0;
  for (size_t s = 0; s < slowest.size(); ++s) {
    const double cpu = s < need_sum.size() ? need_sum[s] / ranks / usable_cores : 0.0;
    total += std::max(slowest[s], cpu);
  }
  return total;
}

std::string NetworkModel::ToString() const {
  return fmt::format("{:g} Gbit/s, {:g} us{}{}", bytes_per_second * 8 / 1e9, latency_seconds * 1e6,
                     shared ? ", shared" : "",
                     burst_bytes > 0 ? fmt::format(", burst {:g} KiB", burst_bytes / 1024) : std::string());
}

}  // namespace tessel::comm
