// The alpha-beta time model of a network (Hockney 1994; the collective costs of Thakur, Rabenseifner & Gropp 2005):
// a message of n bytes costs alpha + n / bandwidth. Each communicator call records its latency and volume terms
// (comm::CallCost), so a run measured on one machine predicts its communication time on a network the user names:
// `--network 10Gbit,5us` (docs/comm.md, "Time model").
#pragma once

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

  // "BANDWIDTH,LATENCY[,shared]": bandwidth with a unit of bits (Gbit, Mbit, Kbit, bit) or bytes (GB, MB, KB, B) per
  // second, latency with s, ms, us or ns; for example 10Gbit,5us, 25GB,1.5us or 100Mbit,20us,shared. Throws naming
  // `flag` and the form.
  static NetworkModel Parse(std::string_view text, std::string_view flag);
  // alpha * latency terms + volume / bandwidth of one rank's calls among `ranks` (the volume counts `ranks` times
  // on a shared link).
  double Seconds(const CallCost& cost, int ranks = 1) const;
  std::string ToString() const;  // "10 Gbit/s, 5 us" (", shared")
};

}  // namespace tessel::comm
