// The batched C-SVC solver's device loop (svm/device_loop.h): state allocated once, per round a device top-k
// selection, rows from a device row cache, the subproblem and the updates on the device, one small download and
// one small upload. Mirrors the host batched solver (batch_solver.cc) decision for decision.
#include "svm/device_loop.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/device.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "svm/solver_common.h"

namespace tessel::svm::devloop {
namespace {

// info_'s layout: SelectInfo at 0, RoundInfo at RoundAt(q) (8-byte aligned).
size_t RoundAt(int64_t q) { return (SelectInfo::Bytes(q) + 7) / 8 * 8; }
const SelectInfo& AsSelect(const std::vector<std::byte>& b) { return *reinterpret_cast<const SelectInfo*>(b.data()); }
const RoundInfo& AsRound(const std::vector<std::byte>& b, int64_t q) {
  return *reinterpret_cast<const RoundInfo*>(b.data() + RoundAt(q));
}

class Loop {
 public:
  Loop(LoopDevice& dev, const LoopProblem& p);
  LoopResult Run();

  // RunSolverLoop's hooks (solver_common.h): one round (a working set and its subproblem on the device) per Advance.
  bool Optimal() {
    // The selection a round made after itself (downloaded with it) is this one, unless the active set changed.
    last_gap_ = prefetched_ ? AsSelect(h_info_).gap : Select();
    prefetched_ = false;
    return last_gap_ < p_.eps;
  }
  double Gap() const { return last_gap_; }
  void Shrink() { DoShrinking(); }
  bool AllActive() const { return n_inact_ == 0; }
  void Unshrink() {
    Reconstruct();
    SetAllActive();
    prefetched_ = false;
  }
  int64_t Advance(int64_t limit);
  void CheckPoint(int64_t /*done*/) {}

 private:
  void Allocate(int64_t slots);  // every device array of the solve
  void Start();                  // the formulation's starting state
  double Select();
  void SelectOnDevice();
  void SelectPart(int label, int part);
  // dst[list[k]] += sum_t a_t Q(free_[t], list[k]) for k < n over the first nf samples of free_, in chunks of q,
  // the rows over the columns of `slot` (col_y their labels).
  void AddAlphaRows(int64_t nf, int slot, int64_t n, const int32_t* list, const int8_t* col_y, double* dst);
  void Round(int64_t limit);
  void SetActive(int64_t n);
  void SetAllActive();
  void Reconstruct();
  void DoShrinking();
  int64_t CountOnHost();
  void Progress(int64_t steps, bool force);

  LoopDevice& dev_;
  const LoopProblem& p_;
  int64_t l_;
  int64_t q_;
  EliminationSchedule schedule_;
  int64_t max_iter_;
  int64_t inner_limit_;
  RowCache cache_;

  // Per sample.
  device::Array<int32_t> rows_;
  device::Array<int8_t> y_;
  device::Array<double> qd_, lin_, alpha_, g_, g_bar_;  // lin_: the linear term p
  device::Array<int8_t> st_;
  device::Array<uint8_t> chosen_;
  // Per active (or eliminated) position.
  device::Array<int32_t> act_, keep_, pos_, act_rows_, inact_, inact_rows_, free_, free_rows_, remap_;
  device::Array<int8_t> act_y_, inact_y_, free_y_;
  // Selection.
  device::Array<double> up_key_, low_key_;
  device::Array<int32_t> up_id_, low_id_;
  device::Array<std::byte> topk_scratch_, compact_scratch_;
  device::Array<std::byte> info_;  // SelectInfo, then RoundInfo: a round's one download reads both
  device::Array<int32_t> ws_pos_, ws_rows_, miss_rows_;
  device::Array<int8_t> ws_y_, miss_y_;
  // The round.
  device::Array<int32_t> upload_;  // [slot per entry | missing entries | their slots], and the used slots
  device::Array<double> new_alpha_, delta_, coef_, changed_coef_;
  device::Array<int32_t> changed_rows_;
  device::Array<int8_t> changed_y_;
  device::Array<float> arena_;    // cache slots x l
  device::Array<float> scratch_;  // q x l
  device::Array<int64_t> count_;
  device::Array<double> ext_;

  std::vector<std::byte> h_info_;  // info_ on the host
  bool prefetched_ = false;        // h_info_'s selection is the current one (made after the last round)
  device::Counters first_round_end_;
  std::vector<int32_t> h_upload_;
  std::vector<int32_t> missing_;
  int64_t n_act_ = 0;
  int64_t n_inact_ = 0;
  bool unshrink_ = false;
  double last_gap_ = kInf;
  int64_t steps_ = 0;  // iterations so far (for the progress lines)
  LoopResult r_;
  std::chrono::steady_clock::time_point last_log_ = std::chrono::steady_clock::now();
};

int64_t CacheSlots(const LoopProblem& p) {
  const int64_t row_bytes = static_cast<int64_t>(sizeof(float)) * p.l;
  return std::clamp<int64_t>(p.cache_bytes / std::max<int64_t>(row_bytes, 1), p.working_set,
                             std::max<int64_t>(p.l, p.working_set));
}

Loop::Loop(LoopDevice& dev, const LoopProblem& p)
    : dev_(dev),
      p_(p),
      l_(p.l),
      q_(p.working_set),
      schedule_(p.shrinking, p.l, p.eps),
      max_iter_(MaxIterations(p.max_iterations, p.l)),
      inner_limit_(p.inner_limit < 0 ? int64_t{10} * p.working_set : p.inner_limit),
      cache_(p.l, CacheSlots(p)) {
  TESSEL_CHECK(q_ >= 2 && q_ <= kMaxQ && q_ % 2 == 0, "device SVM solver: working set {} must be even, 2..{}", q_,
               kMaxQ);
  TESSEL_CHECK(l_ >= 1 && l_ < (int64_t{1} << 31), "device SVM solver: {} samples (1 .. 2^31 - 1)", l_);
  const int64_t slots = cache_.slots();
  TESSEL_CHECK(slots <= (int64_t{1} << 40) / l_, "device SVM solver: a row cache of {} rows of {} samples is too large",
               slots, l_);
  try {
    Allocate(slots);
  } catch (const Error& e) {
    // The large arrays: the row cache (slots x l floats), the rows' scratch (q x l floats) and the kernel's work
    // (q x l doubles), then a few arrays per sample (about 64 bytes) and the top-k's scratch (24).
    const double mb = (4.0 * static_cast<double>(slots + q_) + 8.0 * static_cast<double>(q_) + 88.0) *
                      static_cast<double>(l_) / (1 << 20);
    throw Error(fmt::format(
        "device SVM solver: about {:.0f} MB of device memory for {} samples (a row cache of {} rows, work for q = {} "
        "rows) could not be allocated; lower --working-set or --cache, or use the CPU: {}",
        mb, l_, slots, q_, e.what()));
  }
  h_info_.resize(RoundAt(q_) + RoundInfo::Bytes(q_));
  h_upload_.resize(static_cast<size_t>(std::max<int64_t>(3 * q_, slots)));
  log::Debug("svm device: {} samples, q {}, row cache {} slots ({:.1f} MB)", l_, q_, slots,
             4.0 * static_cast<double>(slots * l_) / (1 << 20));

  Start();
  r_.min_active = l_;
  r_.cache_slots = slots;
}

// LIBSVM's start (SampleState::Start, StartAlpha and the solvers' InitialGradient): alpha the starting a (0 when
// none), G = p + the rows of the samples above 0 and G_bar the rows of those at C, each scaled by its a.
void Loop::Start() {
  const auto n = static_cast<size_t>(l_);
  std::vector<double> lin(n, -1.0);
  if (p_.p != nullptr) lin.assign(p_.p, p_.p + l_);
  std::vector<double> a(n, 0.0);
  std::vector<int8_t> st(n, batch::kLower);
  std::vector<int32_t> started;  // above 0
  std::vector<int32_t> at_c;
  for (int64_t s = 0; p_.alpha0 != nullptr && s < l_; ++s) {
    const double c = p_.y[s] > 0 ? p_.cp : p_.cn;
    TESSEL_CHECK(p_.alpha0[s] >= 0 && p_.alpha0[s] <= c,
                 "device SVM solver: starting alpha {} of sample {} is outside [0, {}]", p_.alpha0[s], s, c);
    a[s] = p_.alpha0[s];
    st[s] = batch::StatusOf(a[s], c);
    if (st[s] != batch::kLower) started.push_back(static_cast<int32_t>(s));
    if (st[s] == batch::kUpper) at_c.push_back(static_cast<int32_t>(s));
  }
  // One upload each.
  rows_.Upload(p_.sample_rows, l_);
  y_.Upload(p_.y, l_);
  lin_.Upload(lin.data(), l_);
  alpha_.Upload(a.data(), l_);
  g_.Upload(lin.data(), l_);
  g_bar_.Upload(std::vector<double>(n, 0.0).data(), l_);
  st_.Upload(st.data(), l_);
  chosen_.Upload(std::vector<uint8_t>(n, 0).data(), l_);
  dev_.Diagonal(rows_.data(), l_, qd_.data());
  SetAllActive();
  for (auto [list, dst] : {std::pair{&started, &g_}, std::pair{&at_c, &g_bar_}}) {
    if (list->empty()) continue;
    free_.Upload(list->data(), static_cast<int64_t>(list->size()));
    AddAlphaRows(static_cast<int64_t>(list->size()), 0, l_, act_.data(), act_y_.data(), dst->data());
  }
}

void Loop::AddAlphaRows(int64_t nf, int slot, int64_t n, const int32_t* list, const int8_t* col_y, double* dst) {
  dev_.GatherI32(nf, free_.data(), rows_.data(), free_rows_.data());
  dev_.GatherI8(nf, free_.data(), y_.data(), free_y_.data());
  for (int64_t b = 0; b < nf; b += q_) {
    const int64_t m = std::min(q_, nf - b);
    dev_.QRows(slot, free_rows_.data() + b, free_y_.data() + b, m, col_y, scratch_.data());
    dev_.AddRows(n, m, scratch_.data(), alpha_.data(), free_.data() + b, list, dst);
  }
}

void Loop::Allocate(int64_t slots) {
  rows_ = device::Array<int32_t>(l_);
  y_ = device::Array<int8_t>(l_);
  for (auto* a : {&qd_, &lin_, &alpha_, &g_, &g_bar_}) *a = device::Array<double>(l_);
  st_ = device::Array<int8_t>(l_);
  chosen_ = device::Array<uint8_t>(l_);
  for (auto* a : {&act_, &keep_, &pos_, &act_rows_, &inact_, &inact_rows_, &free_, &free_rows_, &remap_})
    *a = device::Array<int32_t>(l_);
  for (auto* a : {&act_y_, &inact_y_, &free_y_}) *a = device::Array<int8_t>(l_);
  up_key_ = device::Array<double>(q_);
  low_key_ = device::Array<double>(q_);
  up_id_ = device::Array<int32_t>(q_);
  low_id_ = device::Array<int32_t>(q_);
  topk_scratch_ = device::Array<std::byte>(static_cast<int64_t>(dev_.TopKScratchBytes(l_, q_)));
  compact_scratch_ = device::Array<std::byte>(static_cast<int64_t>(dev_.CompactScratchBytes(l_)));
  info_ = device::Array<std::byte>(static_cast<int64_t>(RoundAt(q_) + RoundInfo::Bytes(q_)));
  for (auto* a : {&ws_pos_, &ws_rows_, &miss_rows_, &changed_rows_}) *a = device::Array<int32_t>(q_);
  for (auto* a : {&ws_y_, &miss_y_, &changed_y_}) *a = device::Array<int8_t>(q_);
  for (auto* a : {&new_alpha_, &delta_, &coef_, &changed_coef_}) *a = device::Array<double>(q_);
  upload_ = device::Array<int32_t>(std::max<int64_t>(3 * q_, slots));
  arena_ = device::Array<float>(slots * l_);
  scratch_ = device::Array<float>(q_ * l_);
  count_ = device::Array<int64_t>(1);
  ext_ = device::Array<double>(4);
  dev_.ReserveRows(q_, l_);
}

int64_t Loop::CountOnHost() {
  int64_t n = 0;
  count_.Download(&n, 1);
  return n;
}

void Loop::SetActive(int64_t n) {
  n_act_ = n;
  dev_.SetActive(l_, n, act_.data(), rows_.data(), y_.data(), pos_.data(), act_rows_.data(), act_y_.data());
  dev_.Compact(LoopDevice::Keep::kInactive, l_, nullptr, y_.data(), st_.data(), g_.data(), pos_.data(), {},
               inact_.data(), count_.data(), compact_scratch_.data());
  n_inact_ = CountOnHost();
  TESSEL_CHECK(n_inact_ + n_act_ == l_, "device SVM solver: {} active and {} eliminated samples of {}", n_act_,
               n_inact_, l_);
  dev_.GatherI32(n_inact_, inact_.data(), rows_.data(), inact_rows_.data());
  dev_.GatherI8(n_inact_, inact_.data(), y_.data(), inact_y_.data());
  dev_.SetColumns(0, act_rows_.data(), n_act_);
  dev_.SetColumns(1, inact_rows_.data(), n_inact_);
}

void Loop::SetAllActive() {
  dev_.Iota(l_, act_.data());
  SetActive(l_);
  cache_.Clear();  // the cached rows lack the restored columns
}

// The host solver's Select: the q best of each side, the working set formed on the device; Solver_NU's per label
// (y = +1, then y = -1), as the batched solvers' Select.
void Loop::SelectOnDevice() {
  ++r_.selections;
  if (p_.nu) {
    SelectPart(1, 1);
    SelectPart(-1, 2);
  } else {
    SelectPart(0, 0);
  }
}

void Loop::SelectPart(int label, int part) {
  void* scratch = topk_scratch_.data();
  dev_.TopKBoth(label, n_act_, act_.data(), y_.data(), st_.data(), g_.data(), q_, up_key_.data(), up_id_.data(),
                low_key_.data(), low_id_.data(), scratch);
  auto* info = reinterpret_cast<SelectInfo*>(info_.data());
  dev_.FormWorkingSet(up_key_.data(), up_id_.data(), low_key_.data(), low_id_.data(), q_, q_, part, chosen_.data(),
                      pos_.data(), rows_.data(), y_.data(), info, ws_pos_.data(), ws_rows_.data(), ws_y_.data());
}

// A selection of its own (the first, and after the active set changed): one download.
double Loop::Select() {
  SelectOnDevice();
  info_.Download(h_info_.data(), static_cast<int64_t>(SelectInfo::Bytes(q_)));
  return AsSelect(h_info_).gap;
}

void Loop::Round(int64_t limit) {
  const SelectInfo& sel = AsSelect(h_info_);
  const int64_t m = sel.m;
  // The working set's ids on the device (the round's kernels read them before the next selection, stream-ordered,
  // rewrites them).
  const int32_t* ws = reinterpret_cast<SelectInfo*>(info_.data())->ws;
  // Slots: hits keep theirs, misses take the least recently used; one upload of [slots | missing | their slots].
  cache_.Assign(sel.ws, m, h_upload_.data(), &missing_);
  const auto nm = static_cast<int64_t>(missing_.size());
  for (int64_t u = 0; u < nm; ++u) {
    h_upload_[static_cast<size_t>(m + u)] = missing_[static_cast<size_t>(u)];
    h_upload_[static_cast<size_t>(m + nm + u)] = h_upload_[static_cast<size_t>(missing_[static_cast<size_t>(u)])];
  }
  upload_.Upload(h_upload_.data(), m + 2 * nm);
  const int32_t* slot = upload_.data();
  if (nm > 0) {
    dev_.GatherI32(nm, slot + m, ws_rows_.data(), miss_rows_.data());
    dev_.GatherI8(nm, slot + m, ws_y_.data(), miss_y_.data());
    dev_.QRows(0, miss_rows_.data(), miss_y_.data(), nm, act_y_.data(), scratch_.data());
    dev_.StoreRows(nm, n_act_, scratch_.data(), slot + m + nm, arena_.data(), l_);
  }
  auto* d_round = reinterpret_cast<RoundInfo*>(info_.data() + RoundAt(q_));
  dev_.LocalSmo(m, arena_.data(), l_, slot, ws, ws_pos_.data(), y_.data(), qd_.data(), alpha_.data(), g_.data(), p_.cp,
                p_.cn, p_.eps, p_.inner_factor, limit, p_.nu, new_alpha_.data(), d_round);
  const bool track = schedule_.eliminates();
  dev_.ApplyRound(m, ws, ws_rows_.data(), ws_y_.data(), new_alpha_.data(), p_.cp, p_.cn, track, y_.data(),
                  alpha_.data(), st_.data(), delta_.data(), coef_.data(), d_round, changed_rows_.data(),
                  changed_y_.data(), changed_coef_.data());
  dev_.UpdateActive(n_act_, m, arena_.data(), l_, slot, delta_.data(), coef_.data(), track, act_.data(), g_.data(),
                    g_bar_.data());
  // The next selection on the state the round left, and one download of both: the round's one wait for the device.
  SelectOnDevice();
  info_.Download(h_info_.data(), static_cast<int64_t>(h_info_.size()));
  prefetched_ = true;
  const RoundInfo& info = AsRound(h_info_, q_);
  r_.bound_changes += info.changed;
  if (info.changed > 0 && n_inact_ > 0) {
    // G_bar of the eliminated samples: the changed entries' rows over them, in entry order.
    dev_.QRows(1, changed_rows_.data(), changed_y_.data(), info.changed, inact_y_.data(), scratch_.data());
    dev_.AddRows(n_inact_, info.changed, scratch_.data(), changed_coef_.data(), nullptr, inact_.data(), g_bar_.data());
  }
}

// G of the eliminated samples from G_bar plus the free samples' rows, in chunks of q in sample order.
void Loop::Reconstruct() {
  if (n_inact_ == 0) return;
  ++r_.reconstructions;
  dev_.ResetFromGBar(n_inact_, inact_.data(), g_bar_.data(), lin_.data(), g_.data());
  dev_.Compact(LoopDevice::Keep::kFree, n_act_, act_.data(), y_.data(), st_.data(), g_.data(), pos_.data(), {},
               free_.data(), count_.data(), compact_scratch_.data());
  AddAlphaRows(CountOnHost(), 1, n_inact_, inact_.data(), inact_y_.data(), g_.data());
}

void Loop::DoShrinking() {
  ++r_.shrink_checks;
  // Solver's two extremes (used for both labels), or Solver_NU's per label: one download.
  Extremes4 ext{};
  if (p_.nu) {
    dev_.Extremes(n_act_, act_.data(), y_.data(), st_.data(), g_.data(), 1, ext_.data());
    dev_.Extremes(n_act_, act_.data(), y_.data(), st_.data(), g_.data(), -1, ext_.data() + 2);
    ext_.Download(ext.v, 4);
  } else {
    dev_.Extremes(n_act_, act_.data(), y_.data(), st_.data(), g_.data(), 0, ext_.data());
    ext_.Download(ext.v, 2);
    ext.v[2] = ext.v[0];
    ext.v[3] = ext.v[1];
  }
  if (schedule_.Unshrink(unshrink_, ext.Gap())) {
    unshrink_ = true;
    if (n_inact_ > 0) {  // with none eliminated, the active set is already every sample (and the cache stays)
      Reconstruct();
      SetAllActive();
      prefetched_ = false;
    }
  }
  dev_.Compact(LoopDevice::Keep::kNotShrunk, n_act_, act_.data(), y_.data(), st_.data(), g_.data(), pos_.data(), ext,
               keep_.data(), count_.data(), compact_scratch_.data());
  const int64_t n = CountOnHost();
  if (n != n_act_) {
    ++r_.active_changes;
    // The cached rows move to the new columns: entry k of a row is the old position of the new k-th sample.
    dev_.GatherI32(n, keep_.data(), pos_.data(), remap_.data());
    const std::vector<int32_t> used = cache_.Used();
    if (!used.empty()) {
      upload_.Upload(used.data(), static_cast<int64_t>(used.size()));
      for (size_t b = 0; b < used.size(); b += static_cast<size_t>(q_)) {
        const auto m = static_cast<int64_t>(std::min(used.size() - b, static_cast<size_t>(q_)));
        dev_.CompactRows(m, upload_.data() + b, arena_.data(), l_, remap_.data(), n, scratch_.data());
      }
    }
    act_.Swap(keep_);
    SetActive(n);
    prefetched_ = false;
  }
  r_.min_active = std::min(r_.min_active, n_act_);
}

void Loop::Progress(int64_t steps, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_log_ < std::chrono::seconds(2)) return;
  last_log_ = now;
  log::Info("svm device: {} rounds, {} steps, gap {:.6g} (tolerance {:g}), active {}/{}, row cache {} hits {} misses",
            r_.rounds, steps, last_gap_, p_.eps, n_act_, l_, cache_.hits(), cache_.misses());
}

int64_t Loop::Advance(int64_t limit) {
  ++r_.rounds;
  interrupt::Check("svm");
  const device::Counters before = device::ReadCounters();
  Round(std::min(inner_limit_, limit));
  const device::Counters round = device::ReadCounters() - before;
  r_.max_round_launches = std::max(r_.max_round_launches, round.launches);
  r_.max_round_downloads = std::max(r_.max_round_downloads, round.d2h_copies);
  if (r_.rounds == 1) first_round_end_ = device::ReadCounters();
  const int64_t taken = AsRound(h_info_, q_).steps;
  steps_ += taken;
  Progress(steps_, false);
  return taken;
}

LoopResult Loop::Run() {
  const device::Counters before = device::ReadCounters();
  const LoopEnd end = RunSolverLoop(*this, schedule_, max_iter_, "svm device");
  Progress(end.iterations, true);
  const device::Counters end_counters = device::ReadCounters();
  r_.loop = end_counters - before;
  r_.after_first_round = end_counters - (r_.rounds > 0 ? first_round_end_ : end_counters);
  r_.a.resize(static_cast<size_t>(l_));
  r_.g.resize(static_cast<size_t>(l_));
  r_.status.resize(static_cast<size_t>(l_));
  alpha_.Download(r_.a.data(), l_);
  g_.Download(r_.g.data(), l_);
  st_.Download(r_.status.data(), l_);
  r_.gap = last_gap_;
  r_.iterations = end.iterations;
  r_.kernel_evaluations = dev_.Evaluations();
  r_.cache_hits = cache_.hits();
  r_.cache_misses = cache_.misses();
  r_.hit_iteration_limit = end.hit_limit;
  return std::move(r_);
}

}  // namespace

LoopResult RunDeviceLoop(LoopDevice& dev, const LoopProblem& problem) {
  TESSEL_CHECK(problem.sample_rows != nullptr && problem.y != nullptr, "device SVM solver: no samples");
  const std::unique_ptr<LoopDevice> counted = CountingLaunches(dev);
  Loop loop(*counted, problem);
  return loop.Run();
}

// ---- RowCache

RowCache::RowCache(int64_t l, int64_t slots)
    : slot_of_(static_cast<size_t>(l), -1),
      sample_(static_cast<size_t>(slots), -1),
      prev_(static_cast<size_t>(slots), -1),
      next_(static_cast<size_t>(slots), -1),
      stamp_(static_cast<size_t>(slots), -1) {
  TESSEL_CHECK(slots >= 1 && slots < (int64_t{1} << 31), "row cache: {} slots", slots);
  Clear();
}

void RowCache::Clear() {
  std::fill(slot_of_.begin(), slot_of_.end(), -1);
  std::fill(sample_.begin(), sample_.end(), -1);
  first_ = last_ = -1;
  // Every slot free, in order, on the LRU list (free slots are the least recent).
  for (int32_t s = 0; s < static_cast<int32_t>(sample_.size()); ++s) {
    prev_[static_cast<size_t>(s)] = next_[static_cast<size_t>(s)] = -1;
    PushBack(s);
  }
}

void RowCache::Unlink(int32_t s) {
  const auto i = static_cast<size_t>(s);
  if (prev_[i] >= 0)
    next_[static_cast<size_t>(prev_[i])] = next_[i];
  else
    first_ = next_[i];
  if (next_[i] >= 0)
    prev_[static_cast<size_t>(next_[i])] = prev_[i];
  else
    last_ = prev_[i];
  prev_[i] = next_[i] = -1;
}

void RowCache::PushBack(int32_t s) {
  const auto i = static_cast<size_t>(s);
  prev_[i] = last_;
  next_[i] = -1;
  if (last_ >= 0)
    next_[static_cast<size_t>(last_)] = s;
  else
    first_ = s;
  last_ = s;
}

void RowCache::Assign(const int32_t* ws, int64_t m, int32_t* slot, std::vector<int32_t>* missing) {
  TESSEL_CHECK(m <= slots(), "row cache: a working set of {} rows in {} slots", m, slots());
  ++round_;
  missing->clear();
  // Hits first, so none of them is evicted by a miss of this round.
  for (int64_t t = 0; t < m; ++t) {
    const int32_t s = slot_of_[static_cast<size_t>(ws[t])];
    slot[t] = s;
    if (s < 0) continue;
    ++hits_;
    stamp_[static_cast<size_t>(s)] = round_;
    Unlink(s);
    PushBack(s);
  }
  for (int64_t t = 0; t < m; ++t) {
    if (slot[t] >= 0) continue;
    ++misses_;
    const int32_t s = first_;  // least recent; never one stamped this round (those are at the back)
    TESSEL_CHECK(s >= 0 && stamp_[static_cast<size_t>(s)] != round_, "row cache: no slot to evict");
    if (sample_[static_cast<size_t>(s)] >= 0) slot_of_[static_cast<size_t>(sample_[static_cast<size_t>(s)])] = -1;
    sample_[static_cast<size_t>(s)] = ws[t];
    slot_of_[static_cast<size_t>(ws[t])] = s;
    stamp_[static_cast<size_t>(s)] = round_;
    Unlink(s);
    PushBack(s);
    slot[t] = s;
    missing->push_back(static_cast<int32_t>(t));
  }
}

std::vector<int32_t> RowCache::Used() const {
  std::vector<int32_t> used;
  for (int32_t s = 0; s < static_cast<int32_t>(sample_.size()); ++s)
    if (sample_[static_cast<size_t>(s)] >= 0) used.push_back(s);
  return used;
}

}  // namespace tessel::svm::devloop
