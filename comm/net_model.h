// The alpha-beta time model of a network (Hockney 1994; the collective costs of Thakur, Rabenseifner & Gropp 2005):
// a message of n bytes costs alpha + n / bandwidth. Each communicator call records its latency and volume terms
// (comm::CallCost), so a run measured on one machine predicts its communication time on a network the user names:
// `--network 10Gbit,5us` (docs/comm.md, "Time model").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "comm/byte_counter.h"

namespace tessel::comm {

struct NetworkModel {
  double bytes_per_second = 0;  // bandwidth of one link
  double latency_seconds = 0;   // alpha
  // false: every rank has its own full-duplex link to a switch (a cluster). true: one link that every rank's bytes,
  // in both directions, cross one after another (a hub, or one rate-limited loopback: tools/bench/net_bench.sh), so
  // a call's volume term counts once per rank.
  bool shared = false;
  // A token bucket in front of the link (0: none): after an idle spell, up to this many bytes pass at once and only
  // the rest at the rate; the bucket refills at the rate while the link is idle. A traffic shaper (tbf, the
  // benchmark's link) or a cloud instance's burst allowance; a plain switched link has none.
  double burst_bytes = 0;

  // "BANDWIDTH,LATENCY[,shared][,burst=SIZE]": bandwidth with a unit of bits (Gbit, Mbit, Kbit, bit) or bytes (GB,
  // MB, KB, B) per second, latency with s, ms, us or ns, SIZE with B, KB, MB, KiB or MiB; for example 10Gbit,5us,
  // 25GB,1.5us or 100Mbit,20us,shared,burst=256KiB. Throws naming `flag` and the form.
  static NetworkModel Parse(std::string_view text, std::string_view flag);
  // alpha * latency terms + volume / bandwidth of one rank's calls among `ranks` (the volume counts `ranks` times
  // on a shared link); no bucket, so calls may be timed as a whole.
  double Seconds(const CallCost& cost, int ranks = 1) const;
  // One call's seconds after the link was idle `idle_seconds`, with `*tokens` the bucket's bytes before the previous
  // call's end (updated): the bucket refills by idle * bandwidth up to burst_bytes, then lets that much of the
  // call's volume through at once. Without a bucket, Seconds(cost, ranks).
  double CallSeconds(const CallCost& cost, int ranks, double idle_seconds, double* tokens) const;
  // Times every call `counter` records from now on (CallCost::modeled), the bucket starting full.
  void Attach(ByteCounter& counter, int ranks) const;
  std::string ToString() const;  // "10 Gbit/s, 5 us" (", shared") (", burst 256 KiB")

 private:
  double LinkBytes(const CallCost& cost, int ranks) const;  // the volume term's bytes on this link
};

// A --network value, parsed once where the option is read (a TextParam of core/params.h, as --grad-compress is): the
// link, or none (the empty text). The text is kept as given, so a run's config echo and its checkpoint record what
// the user wrote.
struct NetworkOption {
  std::optional<NetworkModel> model;  // empty: no network named
  std::string text;

  // "" (none) or NetworkModel::Parse's form; throws naming `option`.
  static NetworkOption FromText(std::string_view text, std::string_view option);
  std::string Text() const { return text; }
  explicit operator bool() const { return model.has_value(); }
  const NetworkModel& operator*() const { return *model; }
  const NetworkModel* operator->() const { return &*model; }
  bool operator==(const NetworkOption& other) const { return text == other.text; }
};

// The time of synchronous steps (docs/comm.md, "Time model"): each step takes the longer of its slowest rank's
// predicted time (`slowest`, the maximum over ranks) and the ranks' CPU need over the cores each can use
// (`need_sum`, the sum over ranks, divided by `ranks` and `usable_cores`), and the steps run one after another.
// `slowest` may hold more entries than `need_sum` (what lies outside the steps, without a CPU bound).
double SynchronousSeconds(std::span<const double> slowest, std::span<const double> need_sum, int ranks,
                          double usable_cores);

}  // namespace tessel::comm
