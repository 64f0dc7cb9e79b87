// EpochStats' and TrainResult's JSON, and the ranks' memory (train_result.h).
#include "train/gcn/train_result.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "core/memory_budget.h"

namespace tessel::train::gcn {
namespace {
constexpr std::string_view kStatsPurpose = "stats";
}  // namespace

// JSON keys are the field names (nlohmann's macro: one list, no hand-written serialiser to fall out of step).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EpochStats, epoch, steps, loss, evaluated, train_acc, val_acc, train_seconds,
                                   sample_seconds, fetch_seconds, compute_seconds, forward_seconds, backward_seconds,
                                   optimizer_seconds, allreduce_seconds, eval_seconds, epoch_seconds, cpu_seconds,
                                   eta_seconds, feature_bytes, sample_bytes, gradient_bytes, eval_bytes, total_bytes,
                                   feature_raw_bytes, gradient_raw_bytes, eval_raw_bytes, sample_raw_bytes,
                                   compress_seconds, decompress_seconds, comm_seconds, predicted_epoch_seconds,
                                   seed_nodes, sampled_edges, remote_input_nodes, remote_share, fetched_rows,
                                   device_allocations, device_runtime_allocations, h2d_copies, h2d_bytes, d2h_copies,
                                   d2h_bytes, device_synchronizations, pinned_allocations, device_launches,
                                   step_launches, step_synchronizations, step_h2d_copies, step_d2h_copies,
                                   step_allocations, max_step_launches, max_step_synchronizations, max_step_d2h_copies)

nlohmann::json EpochStats::ToJson() const {
  nlohmann::json j = *this;
  if (!evaluated) {  // not measured this epoch (--eval-every): null, not a number that reads as an accuracy
    j["train_acc"] = nullptr;
    j["val_acc"] = nullptr;
  }
  return j;
}

namespace {
// An epoch's training steps' device counters per step: averages over its steps, and the most one step made.
nlohmann::json StepCounts(const EpochStats& e) {
  const auto avg = [&e](int64_t v) {
    return e.steps > 0 ? static_cast<double>(v) / static_cast<double>(e.steps) : 0.0;
  };
  return {{"launches", avg(e.step_launches)},
          {"synchronizations", avg(e.step_synchronizations)},
          {"uploads", avg(e.step_h2d_copies)},
          {"downloads", avg(e.step_d2h_copies)},
          {"allocations", avg(e.step_allocations)},
          {"max_launches", e.max_step_launches},
          {"max_synchronizations", e.max_step_synchronizations},
          {"max_downloads", e.max_step_d2h_copies}};
}
// An epoch's device counters (EpochStats), the steady state a run reports in its final object.
nlohmann::json DeviceCounts(const EpochStats& e) {
  return {{"allocations", e.device_allocations},
          {"runtime_allocations", e.device_runtime_allocations},
          {"h2d_copies", e.h2d_copies},
          {"h2d_bytes", e.h2d_bytes},
          {"d2h_copies", e.d2h_copies},
          {"d2h_bytes", e.d2h_bytes},
          {"synchronizations", e.device_synchronizations},
          {"pinned_allocations", e.pinned_allocations},
          {"launches", e.device_launches},
          {"per_step", StepCounts(e)}};
}
// TrainResult::memory as JSON: per rank, and the largest peak RSS over part bytes (the benchmark's ratio).
nlohmann::json MemoryJson(const std::vector<RankMemory>& memory) {
  nlohmann::json ranks = nlohmann::json::array();
  double worst = 0;
  int64_t peak = 0;
  for (size_t r = 0; r < memory.size(); ++r) {
    const RankMemory& m = memory[r];
    const double ratio =
        m.part_bytes > 0 ? static_cast<double>(m.peak_rss_bytes) / static_cast<double>(m.part_bytes) : 0.0;
    worst = std::max(worst, ratio);
    peak = std::max(peak, m.peak_rss_bytes);
    ranks.push_back({{"rank", r},
                     {"peak_rss_bytes", m.peak_rss_bytes},
                     {"rss_anon_bytes", m.rss_anon_bytes},
                     {"peak_rss_anon_bytes", m.peak_rss_anon_bytes},
                     {"part_bytes", m.part_bytes},
                     {"peak_rss_per_part_byte", ratio}});
  }
  return {{"ranks", ranks}, {"max_peak_rss_bytes", peak}, {"max_peak_rss_per_part_byte", worst}};
}
}  // namespace

nlohmann::json TrainResult::ToJson() const {
  nlohmann::json totals = nlohmann::json::object();  // every *_bytes and *_seconds field summed over the epochs
  double share = 0;
  int64_t seeds = 0;
  int64_t edges = 0;
  std::vector<double> epoch_s;
  std::vector<int> evaluated;
  for (const EpochStats& e : epochs) {
    if (e.evaluated) evaluated.push_back(e.epoch);
    share += e.remote_share;
    seeds += e.seed_nodes;
    edges += e.sampled_edges;
    epoch_s.push_back(e.epoch_seconds);
    const nlohmann::json j = e.ToJson();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      if (key == "eta_seconds") continue;
      if (key.ends_with("_bytes")) totals[key] = totals.value(key, uint64_t{0}) + it.value().get<uint64_t>();
      if (key.ends_with("_seconds")) totals[key] = totals.value(key, 0.0) + it.value().get<double>();
    }
  }
  std::sort(epoch_s.begin(), epoch_s.end());
  const double n = epochs.empty() ? 1.0 : static_cast<double>(epochs.size());
  const double train_s = totals.value("train_seconds", 0.0);
  return {{"best_epoch", best_epoch},
          {"stopped_early", stopped_early},
          {"epochs_run", epochs.size()},
          {"evaluated_epochs", evaluated},
          {"train", train.ToJson()},
          {"val", val.ToJson()},
          {"test", test.ToJson()},
          {"setup_bytes", setup_bytes},
          {"mean_epoch_seconds", totals.value("epoch_seconds", 0.0) / n},
          {"median_epoch_seconds", epoch_s.empty() ? 0.0 : epoch_s[epoch_s.size() / 2]},
          {"mean_epoch_train_seconds", train_s / n},
          {"mean_epoch_cpu_seconds", totals.value("cpu_seconds", 0.0) / n},
          {"train_seed_nodes_per_second", train_s > 0 ? static_cast<double>(seeds) / train_s : 0.0},
          {"sampled_edges_per_second", train_s > 0 ? static_cast<double>(edges) / train_s : 0.0},
          {"feature_bytes_per_epoch", totals.value("feature_bytes", 0.0) / n},
          {"remote_share", share / n},
          {"device_last_epoch", DeviceCounts(epochs.empty() ? EpochStats{} : epochs.back())},
          {"memory", MemoryJson(memory)},
          {"totals", totals}};
}

std::vector<RankMemory> GatherMemory(comm::Communicator& comm, int64_t part_bytes, int64_t peak_anon) {
  const int64_t anon = memory::AnonResidentBytes();
  const std::array<int64_t, 4> mine = {memory::PeakResidentBytes(), anon, std::max(peak_anon, anon), part_bytes};
  std::vector<int64_t> all(mine.size() * static_cast<size_t>(comm.Size()));
  comm.Allgather<int64_t>(mine, all, kStatsPurpose).ThrowIfError();
  std::vector<RankMemory> out(static_cast<size_t>(comm.Size()));
  for (size_t r = 0; r < out.size(); ++r) {
    out[r] = RankMemory{all[4 * r], all[4 * r + 1], all[4 * r + 2], all[4 * r + 3]};
  }
  return out;
}

}  // namespace tessel::train::gcn
